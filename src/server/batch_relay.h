// BatchRelay: a worker's client commands that run on other workers' shards,
// and the other workers' that run on this one's (docs/transactions.md,
// "Pipelines and reply order"). A client's commands from its first for
// another shard on join one ExecBatch, a relay that goes from worker to
// worker, each running the commands that come next for its shard, the last
// sending the replies home; a relay of reads over several workers goes as a
// read group instead, one part per worker at once, whose replies stand if no
// shard it read changed meanwhile; a relay with writes over several workers
// as a write group, one part per worker at once, each taking its place on
// its shard by a ticket (server/claims.h) that everything else on the shard
// waits for.
//
// Owned by its Worker and used only on its thread (a friend of it: it runs
// commands through Worker::Run with the worker's proxy client, sends mail
// through its ShardRouter, and hands replies to its clients and ClientIo).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/compact_key.h"
#include "server/claims.h"
#include "server/client.h"
#include "server/command.h"
#include "server/worker_mail.h"

namespace peregrine {

class Db;
class Worker;

class BatchRelay {
 public:
  BatchRelay(Worker& worker, const ClaimBoard& claims, uint32_t index)
      : worker_(worker), registered_(claims.registered_ref(index)) {}
  ~BatchRelay();
  BatchRelay(const BatchRelay&) = delete;
  BatchRelay& operator=(const BatchRelay&) = delete;

  // Appends a command to the client's open relay (opening one whose first
  // stop is `target`), with its first key's probe if made (`key`: the
  // worker that runs it need not hash it again); a PUBLISH's remote part
  // carries the count delivered here. A closed client's goes at once, alone.
  void Add(Client& c, std::span<const std::string_view> args, const CommandSpec* spec, const CompactKey::Probe* key,
           uint32_t target, bool remote_publish, size_t published_here);
  // CLIENT TRACKING and NO-TOUCH: the command just added (the client
  // tracks, or touches nothing) carries them: its reads are remembered if
  // the flags say so (CLIENT CACHING is used up), its keys left untouched.
  void NoteModes(Client& c) {
    if (c.open_batch != nullptr && !c.open_batch->commands.empty()) {
      c.open_batch->commands.back().no_touch = c.no_touch;
      c.open_batch->commands.back().tracking = c.tracking;
    }
    c.tracking &= static_cast<uint8_t>(~tracking::kCaching);
  }
  // The client's open relay leaves (as a read group if it can).
  void SendOpen(Client& c);
  // Runs the commands of a batch that come next for this shard, then
  // passes it on (PassOn): to the next command's worker, or home with the
  // replies (all ran, or `stopped`: the rest does not run).
  void Run(ExecBatch* b);
  void PassOn(ExecBatch* b, bool stopped);
  // A batch of this worker's client back: its replies to the client.
  void Finish(ExecBatch* b);
  // A batch another worker sent (or this one's write group part): a part
  // runs in its ticket's order; any other batch once the tickets taken on
  // this shard before it arrived have run.
  void Arrive(ExecBatch* b);
  // Before a command of a client of this worker runs on this worker's
  // shard: true if tickets taken before now have not all run. Then the
  // client waits (Route::kPause) and is resumed once they have.
  bool HoldClient(Client& c) {
    if (!c.claim_wait && registered_.load(std::memory_order_acquire) == done_) [[likely]]
      return false;
    return HoldClientSlow(c);
  }
  // Whether every ticket taken on this shard has run (it may be lent), and
  // every part it ran is in the replication stream (else the worker is
  // woken when it is).
  bool Drained() {
    return registered_.load(std::memory_order_acquire) == done_ && (done_ <= local_out_ || StreamOut(done_));
  }

  // --- The replication stream (docs/replication.md, "Order across shards") ---
  // A write group's part that ran here is in the stream only once every
  // part of its group is (StreamOrder); until then nothing that could
  // show its effect, or the effect of what ran here after it, leaves: a
  // batch passed on waits (PassOn), and so do a client's replies and its
  // commands for other shards (Client::stream_hold). A reply never leaves
  // before what it acknowledges is in the stream.
  //
  // Whether the parts up to ticket `upto` are in the stream; if not, the
  // worker is woken when the next is.
  bool StreamOut(uint64_t upto);
  // A client with a stream_hold: true if it must wait (its replies stay,
  // and it pauses before a command for another shard); it is resumed and
  // its replies written once the stream has what they wait for.
  bool HoldOutput(Client& c);
  // What waited for the stream and may go now goes (Worker::Drain); true
  // if something did.
  bool ReleaseHeld() {
    if (!held_.empty() || !held_clients_.empty()) [[unlikely]]
      return ReleaseHeldSlow();
    return false;
  }
  // What a client told now of what runs here (its command's reply, a
  // blocked client served, a subscriber) must wait for: the running part's
  // ticket, or the last that ran here; 0 if the stream has it.
  uint64_t StreamHoldNow() {
    const uint64_t t = running_ticket_ != 0 ? running_ticket_ : done_;
    return t > local_out_ && !StreamOut(t) ? t : 0;
  }
  // Mail for worker `to` that tells of what ran here: sent once the stream
  // has ticket `upto` (StreamHoldNow).
  void SendAfter(uint64_t upto, uint32_t to, Mail* m);
  // This worker's clients' batches out on other workers (sent, not back).
  size_t away() const { return away_; }
  // The cron: the batches the pool kept beyond kFreeBatches that nothing
  // took since the last trim go (the least recently used first).
  void TrimPool();
  // The shard's lines of the keys that the batches among these messages
  // run here next, for all of them at once (each stage for every key, then
  // the next), so that their misses overlap across batches: a part of a
  // pipeline over 8 shards has about 4 keys of its own. Mail not handled
  // yet: this only reads the shard (its owner's thread, the shard not lent).
  void PrefetchKeys(const uint64_t* words, size_t n);
  // Its commands that ran slowly on other workers: its address and name
  // into their SLOWLOG entries.
  void ResolveSlow(const Client& c);
  // Batches for reuse (their buffers keep their room).
  ExecBatch* NewBatch();
  // MONITOR's lines name the client: its address goes with its batch while anyone monitors.
  void NoteOrigin(ExecBatch* b, const Client& c);
  // A whole transaction ran here: its EXEC line, its events and lines out (before its reply).
  void FinishTransaction(const ExecBatch& b);
  void Recycle(ExecBatch* b);

 private:
  // A relay of reads over several workers as a read group: one part per
  // worker, all sent at once (this worker's run now); false if it touches
  // one worker only. FinishPart takes each part back; when all are, the
  // replies go to the client in order if no shard changed since the group
  // left, else the relay runs after all.
  bool SendReadGroup(ExecBatch* relay);
  // A relay with writes over several workers as a write group: one part per
  // worker, each with its ticket; false (nothing sent) if it touches one
  // worker only or a shard is closed to groups (claims.h).
  // `here`: with a part on this worker's shard, empty if it has no
  // command there (SendOpen: after what the client ran here).
  bool SendWriteGroup(ExecBatch* relay, bool here);
  // A client's relay leaves: as a read or write group if it can.
  void Launch(ExecBatch* b);
  // The relay's commands split by worker (relay->parts), with a part here
  // if `here`; false if they all run on one (and `here` adds none).
  bool Split(ExecBatch* relay, bool here);
  void PassOnNow(ExecBatch* b, bool stopped);
  bool ReleaseHeldSlow();
  void DropParts(ExecBatch* relay);
  void FinishPart(ExecBatch* part);
  // A part's replies in the order of the group's commands (all back).
  void MergeReplies(const ExecBatch& relay, Client& c);
  // A part that came in its turn has run: the parts after it that came
  // early, then the batches and clients that waited for them.
  void Advance();
  bool HoldClientSlow(Client& c);
  // The first keys of the commands that run here next, prefetched (two or
  // more).
  void Prefetch(const ExecBatch& b);
  void PrefetchStages();  // the three stages over prefetch_keys_
  std::vector<std::pair<const Db*, uint64_t>> prefetch_keys_;  // PrefetchKeys' scratch

  Worker& worker_;
  std::vector<ExecBatch*> free_batches_;
  size_t pool_low_ = 0;  // the fewest free_batches_ since the last TrimPool
  std::vector<size_t> group_cursor_;         // FinishPart's scratch
  std::vector<std::string_view> exec_args_;  // scratch: the command of a batch being run
  std::vector<uint32_t> group_shards_;       // scratch: a write group's workers
  std::vector<uint64_t> group_tickets_;      // scratch: their tickets
  uint64_t groups_sent_ = 0;                 // (for their ids)

  // This shard's side of the write groups' tickets: the last that ran,
  // the parts that came before their turn, and the batches and clients
  // waiting for the tickets taken before they arrived (in arrival order,
  // so by increasing ticket).
  const std::atomic<uint64_t>& registered_;  // this shard's last ticket taken (ClaimBoard)
  uint64_t done_ = 0;
  // The last ticket whose part logged as the shard's own (its group made
  // while no stream was fed): nothing up to it waits for the stream.
  uint64_t local_out_ = 0;
  uint64_t running_ticket_ = 0;  // a part's, while it runs here (logged apart)
  size_t away_ = 0;
  // Batches that wait for the stream to have ticket `upto` (in order), and
  // the clients with a stream_hold (Client::stream_listed).
  struct Held {
    enum class How : uint8_t {
      kPassOn,         // a batch that ran here (PassOnNow)
      kPassOnStopped,  // the same, stopped
      kOpen,           // a client's relay that has yet to leave (SendOpen: Launch)
      kSend,           // mail for worker `to` (SendAfter)
    };
    uint64_t upto;
    Mail* mail;
    uint32_t to;
    How how;
  };
  std::deque<Held> held_;
  std::vector<uint64_t> held_clients_;
  std::map<uint64_t, ExecBatch*> early_;
  struct Waiting {
    uint64_t ticket;
    ExecBatch* batch;    // or null: a client's
    uint64_t client_id;
  };
  std::deque<Waiting> waiting_;
};

}  // namespace peregrine
