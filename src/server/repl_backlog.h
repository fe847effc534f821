// The primary's side of replication that is pure bookkeeping (issue #38,
// docs/replication.md): the replication IDs and offsets of PSYNC2, the
// backlog of the stream's last bytes, and the answer to a replica's PSYNC.
// No threads, no sockets: the replication code (and the unit test) drive it.
//
// Offsets are Redis's: the stream's bytes are numbered from 1, and
// master_repl_offset is the number of the last byte produced (0: none).
// A replica that applied up to byte X asks for `PSYNC <replid> X+1`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

// The last `capacity` bytes of the replication stream (Redis's
// repl_backlog): what a replica that lost its link may continue from.
class ReplBacklog {
 public:
  // Redis's CONFIG_REPL_BACKLOG_MIN_SIZE: a smaller repl-backlog-size is
  // raised to it.
  static constexpr size_t kMinSize = 16 * 1024;

  // Empty; the next byte appended is byte `end_offset + 1`.
  ReplBacklog(size_t capacity, uint64_t end_offset);

  // Appends stream bytes (they are bytes end_offset()+1 ...), dropping the
  // oldest beyond the capacity.
  void Append(std::string_view bytes);

  // The number of the last byte appended (master_repl_offset).
  uint64_t end_offset() const { return end_; }
  // The bytes held, and the number of the first (Redis's
  // repl_backlog_first_byte_offset; end_offset()+1 when none is held).
  size_t histlen() const { return histlen_; }
  uint64_t first_offset() const { return end_ - histlen_ + 1; }
  size_t capacity() const { return buf_.size(); }

  // Whether a replica may continue from byte `from` (its offset + 1): the
  // bytes from there to the end are all held. (`end_offset() + 1`: nothing
  // to send, still a continuation.)
  bool Holds(uint64_t from) const { return from >= first_offset() && from <= end_ + 1; }
  // Appends bytes `from` .. end_offset() to `out`; false (nothing appended)
  // when they are not all held.
  bool CopyFrom(uint64_t from, std::string* out) const;

  // A new capacity (at least kMinSize), keeping the newest bytes that fit
  // (Redis's resizeReplicationBacklog).
  void Resize(size_t capacity);

 private:
  std::vector<char> buf_;
  size_t next_ = 0;  // where the next byte goes in buf_
  size_t histlen_ = 0;
  uint64_t end_ = 0;
};

// The primary's replication IDs (PSYNC2): its own, and the one it took over
// from its former primary with the offset up to which that history is
// shared (a replica of the former primary continues here up to it).
struct ReplIds {
  std::string replid;                            // 40 hex digits
  std::string replid2 = std::string(40, '0');    // none: forty zeros
  int64_t second_offset = -1;                    // second_repl_offset; -1: none

  // A fresh random ID (Redis's changeReplicationId).
  void Change();
  // On becoming a primary: the old history stays reachable up to
  // `master_repl_offset` (Redis's shiftReplicationId; second_offset is the
  // first byte the new ID alone numbers).
  void Shift(uint64_t master_repl_offset);
  // Forgets the second ID (Redis's clearReplicationId2).
  void ClearSecond();
};

// What a primary answers to `PSYNC <replid> <offset>`.
struct PsyncAnswer {
  // A partial resync: +CONTINUE, then the backlog from `from`. Otherwise a
  // full one: +FULLRESYNC <replid> <offset>, then a snapshot.
  bool partial = false;
  uint64_t from = 0;
  // The reply line, CRLF included (for a full resync the offset is filled
  // in by whoever starts the snapshot: FullResyncLine).
  std::string line;
  // Why not partial, for the log (Redis's texts); empty when partial.
  std::string reason;
};

// Redis's masterTryPartialResynchronization: continue when the replica's
// history is ours (our ID, or our former primary's up to where we took
// over) and the backlog holds every byte from `offset` on. `psync2`: the
// replica said REPLCONF capa psync2 (then +CONTINUE names our ID, so that
// it adopts it). `backlog` may be null (none yet: full resync).
// (`offset` as parsed; PSYNC with one that is not an integer is refused
// before this, with Redis's integer error.)
PsyncAnswer DecidePsync(std::string_view replid, int64_t offset, const ReplIds& ids, const ReplBacklog* backlog,
                        bool psync2);

// "+FULLRESYNC <replid> <offset>\r\n".
std::string FullResyncLine(const ReplIds& ids, uint64_t offset);

}  // namespace peregrine
