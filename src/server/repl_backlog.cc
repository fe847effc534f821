// Replication IDs, the backlog and the PSYNC decision (see repl_backlog.h).
#include "server/repl_backlog.h"

#include <algorithm>
#include <cstring>

#include "core/numbers.h"
#include "server/command.h"

namespace peregrine {

ReplBacklog::ReplBacklog(size_t capacity, uint64_t end_offset)
    : buf_(std::max(capacity, kMinSize)), end_(end_offset) {}

void ReplBacklog::Append(std::string_view bytes) {
  end_ += bytes.size();
  const size_t cap = buf_.size();
  if (bytes.size() >= cap) {
    // Only the last `cap` bytes stay.
    bytes.remove_prefix(bytes.size() - cap);
    std::memcpy(buf_.data(), bytes.data(), cap);
    next_ = 0;
    histlen_ = cap;
    return;
  }
  const size_t first = std::min(bytes.size(), cap - next_);
  std::memcpy(buf_.data() + next_, bytes.data(), first);
  std::memcpy(buf_.data(), bytes.data() + first, bytes.size() - first);
  next_ = (next_ + bytes.size()) % cap;
  histlen_ = std::min(cap, histlen_ + bytes.size());
}

bool ReplBacklog::CopyFrom(uint64_t from, std::string* out) const {
  if (!Holds(from)) return false;
  const size_t n = static_cast<size_t>(end_ + 1 - from);
  if (n == 0) return true;
  const size_t cap = buf_.size();
  // Byte end_ sits just before next_; byte `from` n bytes before that.
  const size_t start = (next_ + cap - n) % cap;
  const size_t first = std::min(n, cap - start);
  out->append(buf_.data() + start, first);
  out->append(buf_.data(), n - first);
  return true;
}

void ReplBacklog::Resize(size_t capacity) {
  capacity = std::max(capacity, kMinSize);
  if (capacity == buf_.size()) return;
  std::string keep;
  const size_t n = std::min(histlen_, capacity);
  CopyFrom(end_ + 1 - n, &keep);
  buf_.assign(capacity, 0);
  std::memcpy(buf_.data(), keep.data(), n);
  next_ = n % capacity;
  histlen_ = n;
}

void ReplIds::Change() { replid = RandomHex(40); }

void ReplIds::Shift(uint64_t master_repl_offset) {
  replid2 = replid;
  second_offset = static_cast<int64_t>(master_repl_offset) + 1;
  Change();
}

void ReplIds::ClearSecond() {
  replid2.assign(40, '0');
  second_offset = -1;
}

PsyncAnswer DecidePsync(std::string_view replid, int64_t offset, const ReplIds& ids, const ReplBacklog* backlog,
                        bool psync2) {
  PsyncAnswer a;
  const bool ours = EqualsIgnoreCase(replid, ids.replid);
  const bool former = EqualsIgnoreCase(replid, ids.replid2);
  if (!ours && (!former || offset > ids.second_offset)) {
    if (!replid.empty() && replid[0] == '?')
      a.reason = "Full resync requested by replica";
    else if (!ours && !former)
      a.reason = "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '" +
                 std::string(replid) + "', my replication IDs are '" + ids.replid + "' and '" + ids.replid2 + "')";
    else
      a.reason = "Partial resynchronization not accepted: Requested offset for second ID was " +
                 std::to_string(offset) + ", but I can reply up to " + std::to_string(ids.second_offset);
    return a;
  }
  if (backlog == nullptr || offset < 0 || !backlog->Holds(static_cast<uint64_t>(offset))) {
    a.reason = "Unable to partial resync with replica for lack of backlog (Replica request was: " +
               std::to_string(offset) + ").";
    return a;
  }
  a.partial = true;
  a.from = static_cast<uint64_t>(offset);
  a.line = psync2 ? "+CONTINUE " + ids.replid + "\r\n" : "+CONTINUE\r\n";
  return a;
}

std::string FullResyncLine(const ReplIds& ids, uint64_t offset) {
  return "+FULLRESYNC " + ids.replid + " " + std::to_string(offset) + "\r\n";
}

}  // namespace peregrine
