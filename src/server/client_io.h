// A worker's connection layer: reading its clients' sockets (through TLS
// when they have it) into the scratch buffer or a large argument's own block,
// writing their replies (writev of encoded bytes and lent value blocks), and
// the limits on both sides (client-query-buffer-limit,
// client-output-buffer-limit). What it reads it hands to its Owner, the
// worker's dispatcher, which parses and runs it (docs/architecture.md: "One
// request, from socket to socket"). Owned by its Worker; used only on the
// worker's thread, but for CheckOutputLimit from a command holding the
// worker's shard (own_thread false).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "net/event_loop.h"
#include "net/tls.h"
#include "protocol/buffer.h"
#include "server/client.h"
#include "server/server_state.h"
#include "server/stats.h"

namespace peregrine {

class ClientIo {
 public:
  // What the connection layer asks of its worker.
  class Owner {
   public:
    // Parses and runs the complete commands at the front of `in` (the
    // client's buffer, or the scratch buffer holding what was just read).
    virtual void ProcessInput(Client& c, Buffer& in) = 0;
    // Closes a client now and frees it once the worker is between events.
    virtual void FreeClient(Client& c) = 0;
    // Before replies leave: what they acknowledge goes to the append-only
    // file (Worker::FlushAof).
    virtual void BeforeReplies() = 0;
    // Whether the client's replies wait for the replication stream
    // (Client::stream_hold); it is queued again when they may go.
    virtual bool HoldOutput(Client& c) = 0;
    // A client of this worker over its output limit, found by a command
    // holding this worker's shard: closed when the shard comes back.
    virtual void RequestKill(uint64_t client_id) = 0;

   protected:
    ~Owner() = default;
  };

  // What one read takes.
  static constexpr size_t kReadChunk = 16 * 1024;
  // The largest partial command of a client carried into the scratch buffer
  // (a larger one grows in the client's own buffer, so that a command
  // arriving over many reads is not copied over and over).
  static constexpr size_t kScratchCarry = 32 * 1024;
  // Buffers larger than this are freed as soon as they drain, so that one
  // huge request or reply does not pin memory for the life of the
  // connection. Smaller ones are kept while the client is active (re-growing
  // a reply buffer for every pipeline batch of large values costs reallocs
  // and, past glibc's mmap threshold, mmap/munmap calls) and freed by the
  // cron once the client has been idle for a while.
  static constexpr size_t kIdleBufferKeep = 1024 * 1024;
  // Unread input a client whose commands wait for others running elsewhere
  // may have: past it the socket is not read until they are back (the
  // kernel's buffers then hold the client back, as a single-threaded server
  // that runs each read before the next would). Without it a pipelining
  // client is read far faster than its commands can run, its input grows
  // to client-query-buffer-limit and it is closed.
  static constexpr size_t kHeldInputMax = 1024 * 1024;

  ClientIo(Owner& owner, EventLoop& loop, ServerState& server, ServerStats& stats);
  ClientIo(const ClientIo&) = delete;
  ClientIo& operator=(const ClientIo&) = delete;

  // Reads what the client sent and hands the complete commands to the
  // owner; closes the client on end of file, an error, or past
  // client-query-buffer-limit.
  void Read(Client& c);
  // read(2) / write(2) on the client's connection, through its TLS session
  // if it has one.
  static ssize_t ReadSocket(Client& c, char* p, size_t n);
  static ssize_t WriteSocket(Client& c, const char* p, size_t n);
  // When the client's pending command (at the front of `in`) is reading a
  // bulk argument of at least big_arg_min bytes: the bytes of it there move
  // to a block of its own, where the rest is read straight into; a handler
  // may keep the block as the value (Client::TakeBigArg).
  void StartBigArg(Client& c, Buffer& in);
  // A paused command's large arguments go back into `in`, where it is parsed
  // again from.
  static void SpliceBigArgs(Client& c, Buffer& in);
  // While a large argument arrives, the socket wakes the worker only once
  // `bytes` (the rest of it) have arrived, not for every segment: fewer
  // wake-ups and reads per argument (SO_RCVLOWAT; 1 again afterwards).
  static void SetLowWater(Client& c, size_t bytes);
  // Bulk arguments of at least this many bytes are read into blocks of their
  // own (Redis's PROTO_MBULK_BIG_ARG); the fuzzer lowers it to reach that
  // path with small inputs. Before the worker runs.
  void set_big_arg_min(size_t n) { big_arg_min_ = std::max(n, Client::kMinBigArg); }
  // Whether the scratch buffer holds a client's input being processed (a
  // client served meanwhile reads into its own buffer).
  bool scratch_busy() const { return scratch_busy_; }

  // The client has replies to send: written when the worker is between
  // events (FlushPending), in the order queued.
  void QueueWrite(Client& c);
  void FlushPending();
  // Writes what the socket takes now; waits for writable for the rest.
  void Flush(Client& c);
  // The client is going: out of the queue of writes.
  void Forget(Client& c);
  // Every client is gone (the worker stops).
  void ForgetAll() { pending_.clear(); }
  // The epoll events the client waits for.
  static uint32_t Events(const Client& c);
  // Stops reading the client if its input waits and has reached
  // kHeldInputMax, or it waits for write groups' tickets; reads it again
  // once its input runs (the worker calls it after processing it).
  // (Inline: it runs after every batch of a client's input.)
  void HoldReading(Client& c) {
    // Only for waits that end by themselves: a blocked client stays read,
    // so that its going away is seen. A client waiting for write groups'
    // tickets is not read at all (Client::claim_ticket).
    const bool hold = c.claim_wait || (c.batch_in_flight && c.in.size() >= kHeldInputMax);
    if (!hold) c.claim_ticket = 0;  // (read again: what comes now may know of later groups)
    if (hold != c.reading_held && !c.closed) SetReadingHeld(c, hold);
  }

  // client-output-buffer-limit after replies were added to `c`: closes it
  // (dropping its pending replies, as Redis) and returns true if over.
  bool OverOutputLimit(Client& c, bool own_thread = true) {
    return (c.out.size() >= obuf_check_from_ || c.obuf_soft_since_s != 0) && CheckOutputLimit(c, own_thread);
  }
  // Closes a client over its output limit, or whose reply was cut
  // (ReplyWriter::cut), dropping its pending replies.
  void CloseOverLimit(Client& c, bool own_thread = true);
  // After a change of client-output-buffer-limit (and at start).
  void ApplyConfig();

  // A replica's full sync over TLS (SnapshotPump, client.h): its output
  // bound (the pump reads while below it, and again once the output drained
  // to half of it); StartPump makes the pump and returns the socket the
  // snapshot is to be written to (-1 on failure); Pump moves what is there
  // into the output (the pump's events); StopPump: the client goes (the
  // snapshot's writes then fail).
  static constexpr size_t kPumpBound = 1 << 20;
  int StartPump(Client& c);
  void Pump(Client& c);
  void StopPump(Client& c);

  // The TLS context for a connection accepted on tls-port: this thread's
  // own (OpenSSL's contexts are not shared between workers), made again
  // when CONFIG SET changed the tls-* settings. Null with *err if the
  // settings do not load.
  TlsContext* TlsContextForNew(std::string* err);

 private:
  bool CheckOutputLimit(Client& c, bool own_thread);
  // The snapshot's end was read: the stream that waited follows it.
  void EndPump(Client& c);
  void SetReadingHeld(Client& c, bool hold);

  Owner& owner_;
  EventLoop& loop_;
  ServerState& server_;
  ServerStats& stats_;
  // Where a client's bytes are read to and parsed from, when its pending
  // partial command is small (Read); busy while a client's input in it is
  // being processed.
  Buffer scratch_;
  bool scratch_busy_ = false;
  size_t big_arg_min_ = 32 * 1024;
  std::vector<Client*> pending_;   // clients with replies to write (QueueWrite)
  std::vector<Client*> flushing_;  // pending_ while FlushPending runs
  uint64_t obuf_check_from_ = UINT64_MAX;  // the lowest output limit (UINT64_MAX: none)
  std::unique_ptr<TlsContext> tls_ctx_;    // made at this thread's first TLS connection
  uint64_t tls_generation_ = 0;            // of the settings tls_ctx_ was made from
};

}  // namespace peregrine
