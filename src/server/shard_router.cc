// ShardRouter: a worker's side of the mailbox and of shard lending (see
// shard_router.h, docs/transactions.md).
#include "server/shard_router.h"

#include "server/server.h"
#include "server/worker.h"

#include "server/worker_internal.h"

namespace peregrine {

ShardRouter::ShardRouter(Worker& worker, Server& server, uint32_t index, uint32_t nworkers)
    : worker_(worker), server_(server), index_(index), nworkers_(nworkers), outbox_(nworkers) {
  // (The rings exist before any worker: Server makes them first.)
  for (uint32_t from = 0; from < nworkers; from++)
    inbound_.push_back(from == index || nworkers == 1 ? nullptr : &server.ring(from, index));
}

ShardRouter::~ShardRouter() {
  for (Mail* m : deferred_) delete m;
  for (auto& box : outbox_)
    for (uint64_t w : box)
      if (!IsControl(w)) delete reinterpret_cast<Mail*>(w);
}

void ShardRouter::Send(uint32_t to, uint64_t word) {
  std::vector<uint64_t>& box = outbox_[to];
  if (box.empty()) outbox_targets_.push_back(to);
  box.push_back(word);
}

void ShardRouter::FlushOutboxes() {
  worker_.FlushAof();  // replies to other workers' clients acknowledge what it logged
  size_t keep = 0;
  for (uint32_t to : outbox_targets_) {
    std::vector<uint64_t>& box = outbox_[to];
    MailRing& ring = server_.ring(index_, to);
    // Everything for one worker in one publication (one message per
    // target per loop iteration, however many clients' work it carries).
    const size_t pushed = ring.PushBatch(box.data(), box.size());
    if (pushed > 0) {
      server_.worker(to).waker().Notify();
      box.erase(box.begin(), box.begin() + static_cast<ptrdiff_t>(pushed));
      if (!wake_later_.empty()) std::erase(wake_later_, to);  // (woken now)
    }
    if (!box.empty()) outbox_targets_[keep++] = to;
  }
  outbox_targets_.resize(keep);
  for (uint32_t to : wake_later_) server_.worker(to).waker().Notify();
  wake_later_.clear();
}

void ShardRouter::OnControl(uint32_t from, Control k) {
  switch (k) {
    case Control::kLend:
      lend_queue_.push_back(from);
      UpdateGate();
      TryLend();
      break;
    case Control::kGrant:
      granted_by_ = static_cast<int32_t>(from);
      break;
    case Control::kEvict:
      evict_requested_ = true;
      break;
    case Control::kReturn:
      lent_to_ = -1;
      lend_paused_ = true;
      worker_.OnShardBack();
      TryLend();
      break;
  }
}

void ShardRouter::SetGate(bool closed) {
  gate_closed_ = closed;
  server_.claims().SetClosed(index_, closed);
}

void ShardRouter::TryLend() {
  if (lent_to_ >= 0 || holds_own_ || wants_own_ || (lend_paused_ && !acquiring_) || lend_queue_.empty()) {
    UpdateGate();  // (back, and nobody waiting for it: open)
    return;
  }
  // A holder must see every write group whole or not at all: the groups
  // registered here before the gate closed run first (their parts are on
  // their way; Worker::Drain tries again).
  if (!worker_.relay_.Drained()) return;
  worker_.BeforeLending();
  lent_to_ = static_cast<int32_t>(lend_queue_.front());
  lend_queue_.pop_front();
  Send(static_cast<uint32_t>(lent_to_), ControlWord(index_, Control::kGrant));
  FlushOutboxes();
}

void ShardRouter::Acquire(std::span<const uint32_t> sorted) {
  if (nworkers_ == 1) return;
  for (uint32_t s : sorted) {
    if (s == index_) {
      // Lent while this worker waited for a lower shard: wait until it is
      // back, and take it before anyone else waiting for it.
      // (And after the write groups registered on it: closed to them now,
      // it waits for the parts already on their way.)
      wants_own_ = true;
      UpdateGate();
      worker_.WaitUntil([this] {
        if (lent_to_ >= 0) return false;
        worker_.ServeDeferred();  // (mail kept while it was lent or a script was busy: parts among it)
        return worker_.relay_.Drained();
      });
      wants_own_ = false;
      holds_own_ = true;
      continue;
    }
    // Waiting for another shard, this worker must lend its own (if not
    // taken yet) to whoever holds what it waits for: no pause.
    acquiring_ = true;
    granted_by_ = -1;
    Send(s, ControlWord(index_, Control::kLend));
    worker_.WaitUntil([this, s] {
      // (Mail kept while a script was busy runs meanwhile: a write group's
      // part among it may be what keeps this worker from lending its shard
      // to whoever holds the one it waits for.)
      if (lent_to_ < 0) worker_.ServeDeferred();
      return granted_by_ == static_cast<int32_t>(s);
    });
    acquiring_ = false;
  }
}

void ShardRouter::GiveBack(std::span<const uint32_t> sorted) {
  if (nworkers_ == 1) return;
  for (uint32_t s : sorted) {
    server_.shard(s).BumpVersion();  // (whatever the holder ran may have changed it)
    if (s == index_) {
      holds_own_ = false;
      UpdateGate();
    } else {
      Send(s, ControlWord(index_, Control::kReturn));
    }
  }
  FlushOutboxes();
}

}  // namespace peregrine
