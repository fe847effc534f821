#include "server/client_eviction.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "server/client.h"
#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

uint64_t ClientMemory(const Client& c) {
  const uint64_t multi = (c.multi != nullptr ? c.multi->Bytes() : 0) +
                         (c.watch != nullptr ? c.watch->keys.capacity() * sizeof(WatchState::Key) : 0);
  return c.in.capacity() + c.big_arg_bytes() + c.out.capacity() + c.out.referenced_bytes() + multi + sizeof(Client);
}

bool Evictable(const Client& c) { return !c.replica && !c.no_evict && !c.closed; }

ClientEviction::ClientEviction(size_t workers) : figures_(new Figures[workers]), workers_(workers) {}

void ClientEviction::Check(Server& server, Worker& w) {
  const uint64_t limit = server.config().MaxmemoryClients();
  Figures& mine = figures_[w.index()];
  if (limit == 0) {
    mine.total.store(0, std::memory_order_relaxed);
    mine.largest.store(0, std::memory_order_relaxed);
    return;
  }
  uint64_t total = 0;
  std::vector<std::pair<uint64_t, Client*>> candidates;
  for (const auto& [id, c] : w.clients()) {
    if (c->replica) continue;  // (Redis counts normal and pub/sub clients)
    const uint64_t bytes = ClientMemory(*c);
    total += bytes;
    if (Evictable(*c)) candidates.emplace_back(bytes, c.get());
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  size_t next = 0;
  for (;;) {
    mine.total.store(total, std::memory_order_relaxed);
    mine.largest.store(next < candidates.size() ? candidates[next].first : 0, std::memory_order_relaxed);
    uint64_t all = 0, others_largest = 0;
    for (size_t i = 0; i < workers_; i++) {
      all += figures_[i].total.load(std::memory_order_relaxed);
      if (i != w.index()) others_largest = std::max(others_largest, figures_[i].largest.load(std::memory_order_relaxed));
    }
    if (all < limit) return;
    if (next == candidates.size()) {
      // (As Redis: every evictable client of this worker went; the rest are
      // NO-EVICT ones, or others' to evict.)
      if (next > 0 && others_largest == 0) LOG_WARNING("Over client maxmemory after evicting all evictable clients");
      return;
    }
    if (candidates[next].first < others_largest) return;
    Client& c = *candidates[next].second;
    LOG_NOTICE("Evicting client: %s", server.ClientInfoLine(c, UnixTimeMs()).c_str());
    total -= candidates[next].first;
    next++;
    w.stats().evicted_clients++;
    w.CloseClient(c);
  }
}

}  // namespace peregrine
