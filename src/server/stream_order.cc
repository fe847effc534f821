// StreamOrder: write groups whole in the replication stream (see
// stream_order.h).
#include "server/stream_order.h"

#include <algorithm>
#include <utility>

namespace peregrine {

void StreamOrder::Push(uint32_t s, uint64_t group, uint64_t ticket, const AofChunk& chunk) {
  queues_[s].push_back(Item{group, ticket, chunk});
  waiting_++;
  bytes_ += chunk.size();
}

void StreamOrder::Release(uint32_t s, uint64_t ticket) {
  if (ticket <= released_[s]) return;
  if (std::find(moved_.begin(), moved_.end(), s) == moved_.end()) moved_.push_back(s);
  released_[s] = ticket;
}

void StreamOrder::Pop(uint32_t s) {
  const Item& front = queues_[s].front();
  if (front.ticket != 0) Release(s, front.ticket);
  bytes_ -= front.chunk.size();
  waiting_--;
  queues_[s].pop_front();
}

void StreamOrder::Chunk(uint32_t s, const AofChunk& chunk, const Emit& emit, uint64_t ticket) {
  // (A shard's queue, when not empty, starts with a group that cannot go
  // yet: Drain sends everything up to one.)
  if (queues_[s].empty()) {
    if (!chunk.empty()) emit(chunk);
    if (ticket != 0) Release(s, ticket);
    return;
  }
  Push(s, 0, ticket, chunk);
}

void StreamOrder::Multi(std::span<const uint32_t> shards, const AofChunk& chunk, const Emit& emit) {
  if (std::all_of(shards.begin(), shards.end(), [&](uint32_t t) { return queues_[t].empty(); })) {
    emit(chunk);
    return;
  }
  // One item on each shard, the chunk on the first (the others empty): it
  // goes as a group whose parts are all here.
  const uint64_t id = next_multi_++;
  Group& g = groups_[id];
  g.need = g.arrived = static_cast<uint32_t>(shards.size());
  const AofChunk none;
  for (uint32_t t : shards) {
    Push(t, id, 0, g.shards.empty() ? chunk : none);
    g.shards.push_back(t);
  }
  work_.assign(shards.begin(), shards.end());
  Drain(emit);
}

void StreamOrder::Part(uint32_t s, uint64_t group, uint32_t parts, uint64_t ticket, uint64_t epoch,
                       const AofChunk& chunk, const Emit& emit) {
  if (epoch != epoch_) [[unlikely]] {
    // (Its group may have gone without it: it goes as the shard's.)
    Chunk(s, chunk, emit, ticket);
    return;
  }
  auto [it, fresh] = groups_.try_emplace(group);
  Group& g = it->second;
  if (fresh) g.need = parts;
  g.arrived++;
  g.shards.push_back(s);
  Push(s, group, ticket, chunk);
  if (g.arrived < g.need) return;
  work_.assign(g.shards.begin(), g.shards.end());
  Drain(emit);
}

bool StreamOrder::Ready(uint64_t id, const Group& g) const {
  if (g.arrived < g.need && !g.broken) return false;
  return std::all_of(g.shards.begin(), g.shards.end(), [&](uint32_t t) { return queues_[t].front().group == id; });
}

void StreamOrder::Drain(const Emit& emit) {
  while (!work_.empty()) {
    const uint32_t s = work_.back();
    work_.pop_back();
    while (!queues_[s].empty()) {
      const Item& front = queues_[s].front();
      if (front.group == 0) {
        if (!front.chunk.empty()) emit(front.chunk);
        Pop(s);
        continue;
      }
      auto it = groups_.find(front.group);
      if (!Ready(front.group, it->second)) break;
      SendGroup(front.group, emit);  // (pops it off `s` too; its other shards are looked at next)
    }
  }
}

void StreamOrder::SendGroup(uint64_t id, const Emit& emit) {
  auto it = groups_.find(id);
  Group& g = it->second;
  // As one transaction when more than one part logged something, as a
  // transaction's or script's commands are (AofLog::EndGather): a replica
  // applies it at once.
  const AofChunk* only = nullptr;
  int logged = 0;
  for (uint32_t t : g.shards) {
    const AofChunk& c = queues_[t].front().chunk;
    if (c.empty()) continue;
    only = &c;
    logged++;
  }
  if (logged == 1) {
    emit(*only);
  } else if (logged > 1) {
    wrapped_.Clear();
    for (uint32_t t : g.shards) {
      const AofChunk& c = queues_[t].front().chunk;
      if (c.empty()) continue;
      if (wrapped_.empty()) wrapped_.Add(c.first_db(), {"MULTI"});
      wrapped_.Add(c);
    }
    wrapped_.Add(wrapped_.last_db(), {"EXEC"});
    emit(wrapped_);
  }
  for (uint32_t t : g.shards) {
    Pop(t);
    work_.push_back(t);
  }
  groups_.erase(it);
}

void StreamOrder::Reset() {
  for (uint32_t s = 0; s < queues_.size(); s++) {
    // (Forgotten, not sent: what waited for these tickets may go.)
    for (const Item& item : queues_[s])
      if (item.ticket != 0) Release(s, item.ticket);
    queues_[s].clear();
  }
  groups_.clear();
  waiting_ = bytes_ = 0;
  epoch_++;
}

void StreamOrder::Flush(const Emit& emit) {
  // Every group goes as it is now, its missing parts as their shards' when
  // they come (a new epoch); but each still waits to stand first on each of
  // its shards, and so does a command over several (sent shard by shard,
  // one could overtake a write to its key on another shard). With nothing
  // missing, nothing waits in a cycle: everything drains.
  for (auto& [id, g] : groups_)
    if (g.arrived < g.need) g.broken = true;
  work_.clear();
  for (uint32_t s = 0; s < queues_.size(); s++)
    if (!queues_[s].empty()) work_.push_back(s);
  Drain(emit);
  groups_.clear();
  epoch_++;
}

}  // namespace peregrine
