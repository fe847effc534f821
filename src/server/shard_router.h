// A worker's side of the mailbox and of shard lending (docs/transactions.md:
// "The mailbox", "Borrowing shards"). Words go to other workers through one
// lock-free ring per ordered pair (server/mailbox.h): a Mail pointer (even)
// or a control word (odd). A command over several shards borrows them in
// increasing index order (Acquire: kLend, answered kGrant), and gives them
// back (kReturn); meanwhile the lender is parked and mail for it waits
// (deferred) until its shard is back. A shard lent, held or asked for is
// closed to write groups (server/claims.h), and lent only once the groups
// registered on it before have run.
//
// Owned by its Worker and used only on its thread. Asks of the worker (a
// friend of it): the AOF flush before words leave (their replies acknowledge
// what it logged), its clients' pending replies before the shard is lent,
// its wait loop (Worker::WaitUntil: mail keeps being handled while it waits
// for a grant), and OnShardBack when a holder returns the shard.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "server/mailbox.h"
#include "server/worker_mail.h"

namespace peregrine {

class Server;
class Worker;

class ShardRouter {
 public:
  // Control words: (from << 8) | (kind << 1) | 1. kEvict: the sender is over
  // maxmemory with nothing left to evict in its own shard; the receiver
  // evicts from its shard.
  enum class Control : uint8_t { kLend = 1, kGrant = 2, kReturn = 3, kEvict = 4 };
  static uint64_t ControlWord(uint32_t from, Control k) {
    return (uint64_t{from} << 8) | (uint64_t{static_cast<uint8_t>(k)} << 1) | 1;
  }
  static bool IsControl(uint64_t word) { return word & 1; }
  static Control ControlOf(uint64_t word) { return static_cast<Control>((word >> 1) & 0x7f); }

  ShardRouter(Worker& worker, Server& server, uint32_t index, uint32_t nworkers);
  // Mail still queued or deferred is freed (replies nobody waits for any
  // more, at shutdown).
  ~ShardRouter();
  ShardRouter(const ShardRouter&) = delete;
  ShardRouter& operator=(const ShardRouter&) = delete;

  // --- Transport ---
  // Queues a word for worker `to`; it leaves at the next FlushOutboxes.
  void Send(uint32_t to, uint64_t word);
  void Send(uint32_t to, Mail* m) { Send(to, reinterpret_cast<uint64_t>(m)); }
  // Pushes what fits into the rings and wakes their readers. A full ring is
  // never waited on (its reader may be waiting for this worker): what did
  // not fit goes on the next flush (ring_full()).
  void FlushOutboxes();
  bool ring_full() const { return !outbox_targets_.empty(); }
  // Worker `to` is woken at the next FlushOutboxes, with its mail if it
  // gets some then (ReplicationPrimary::FeedPart).
  void WakeLater(uint32_t to) {
    if (std::find(wake_later_.begin(), wake_later_.end(), to) == wake_later_.end()) wake_later_.push_back(to);
  }
  // Takes what the other workers sent (a bounded number each, so that a
  // busy sender cannot keep this worker here), calling handle(from, word)
  // on each word; true if anything arrived.
  template <typename F>
  bool Pop(F&& handle) {
    return Pop([](const uint64_t*, size_t) {}, std::forward<F>(handle));
  }
  // The same, with the messages' lines fetched before any is handled: their
  // first lines for every message taken from a ring, then `look(words, n)`
  // (which may prefetch what the messages point to, their first lines
  // having come meanwhile). What the other worker wrote then crosses cores
  // in one overlapping sweep rather than one miss after another.
  template <typename L, typename F>
  bool Pop(L&& look, F&& handle) {
    bool any = false;
    uint64_t words[64];
    const Cursor outer = cursor_;  // (a Pop may run inside a handler of another: SpillOuter)
    for (uint32_t from = 0; from < nworkers_; from++) {
      if (from == index_) continue;
      for (int round = 0; round < 4; round++) {
        size_t n = inbound_[from]->PopBatch(words, 64);
        if (n == 0) break;
        any = true;
        for (size_t i = 0; i < n; i++)
          if (!IsControl(words[i]))
            for (int line = 0; line < 4; line++)
              __builtin_prefetch(reinterpret_cast<const char*>(words[i]) + 64 * line);
        look(static_cast<const uint64_t*>(words), n);
        size_t i = 0;
        cursor_ = {from, words, &i, &n};
        for (; i < n; i++) handle(from, words[i]);
      }
    }
    cursor_ = outer;
    return any;
  }
  // A loop in the middle of a command that takes mail itself (a wait for
  // other workers' answers, a busy script) first hands `handle` what the
  // Pop it runs inside (if any) took and has yet to handle, then that Pop
  // stops there: one worker's words keep the order it sent them in.
  template <typename F>
  void SpillOuter(F&& handle) {
    if (cursor_.words == nullptr) return;
    const Cursor c = cursor_;
    const size_t end = *c.n;
    *c.n = *c.i + 1;  // (the word being handled now is the last of its loop)
    for (size_t j = *c.i + 1; j < end; j++) handle(c.from, c.words[j]);
  }

  // --- Lending ---
  // Whether this worker's shard is lent (the holder may read and write it
  // and this worker's state; this worker touches neither).
  bool lent() const { return lent_to_ >= 0; }
  // A control word from worker `from`: kLend queues it for the shard (lent
  // at once if it may be), kGrant ends a wait in Acquire, kReturn brings
  // the shard back (Worker::OnShardBack), kEvict asks for an eviction slice.
  void OnControl(uint32_t from, Control k);
  // While a script is busy (ScriptBusy): lend requests and eviction asks
  // are kept for when it is over.
  void KeepLendRequest(uint32_t from) {
    lend_queue_.push_back(from);
    UpdateGate();
  }
  void KeepEvictRequest() { evict_requested_ = true; }
  // A control word that came in the middle of a command (a busy script, a
  // wait for other workers' answers): nothing is lent nor evicted then, so
  // those requests are kept; a grant or a return is taken as usual.
  void OnControlMidCommand(uint32_t from, Control k) {
    if (k == Control::kLend)
      KeepLendRequest(from);
    else if (k == Control::kEvict)
      KeepEvictRequest();
    else
      OnControl(from, k);
  }
  // Lends the shard to the next worker waiting for it, if it may: every
  // write group's ticket taken on it has run (BatchRelay::Drained).
  void TryLend();
  // Takes the shards `sorted` (increasing, this worker's own included) for a
  // command that spans them; GiveBack returns them.
  void Acquire(std::span<const uint32_t> sorted);
  void GiveBack(std::span<const uint32_t> sorted);
  // One loop iteration has run since the shard last came back: it may go
  // out again (without this a stream of borrowers could keep this worker's
  // own clients waiting for ever).
  void EndLendPause() { lend_paused_ = false; }
  // Whether another worker asked this one to evict (clears it).
  bool TakeEvictRequest() {
    const bool r = evict_requested_;
    evict_requested_ = false;
    return r;
  }
  // Mail that arrived while the shard was lent (or a script was busy),
  // handled in order once it is back.
  std::deque<Mail*>& deferred() { return deferred_; }

 private:
  // Closes this shard to write groups (claims.h) while it is lent, held or
  // asked for, and opens it again once it is none of these.
  void UpdateGate() {
    const bool closed = lent_to_ >= 0 || !lend_queue_.empty() || holds_own_ || wants_own_;
    if (closed != gate_closed_) SetGate(closed);
  }
  void SetGate(bool closed);

  // The words a Pop took from a ring and is handling: the one at *i now.
  struct Cursor {
    uint32_t from = 0;
    const uint64_t* words = nullptr;
    size_t* i = nullptr;
    size_t* n = nullptr;
  };
  Cursor cursor_;

  Worker& worker_;
  Server& server_;
  const uint32_t index_;
  const uint32_t nworkers_;
  std::vector<MailRing*> inbound_;          // from each worker to this one
  std::vector<std::vector<uint64_t>> outbox_;  // per target, not yet in its ring
  std::vector<uint32_t> outbox_targets_;       // targets with a non-empty outbox
  std::vector<uint32_t> wake_later_;           // (WakeLater's)
  int32_t lent_to_ = -1;            // the worker holding this shard, or -1
  bool holds_own_ = false;          // a command of this worker has taken its own shard
  bool wants_own_ = false;          // ... is waiting for it to come back (it goes first)
  bool lend_paused_ = false;        // just came back: serve this worker's clients once before lending again
  bool acquiring_ = false;          // waiting for another worker's grant (must lend meanwhile)
  bool evict_requested_ = false;    // another worker asked this one to evict (kEvict)
  bool gate_closed_ = false;        // closed to write groups (UpdateGate)
  int32_t granted_by_ = -1;         // the last worker that lent its shard to this one
  std::deque<uint32_t> lend_queue_;  // workers waiting for this shard, in arrival order
  std::deque<Mail*> deferred_;
};

}  // namespace peregrine
