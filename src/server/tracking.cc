// CLIENT TRACKING's tables (see tracking.h).
#include "server/tracking.h"

#include <algorithm>

#include "server/client.h"
#include "server/server_state.h"
#include "server/shard.h"

namespace peregrine {

thread_local TrackingInvalidations* TrackingInvalidations::current_ = nullptr;

// --- TrackingRegistry ---

void TrackingRegistry::SetRedirect(uint64_t tracker, const Redirect& r) { ChangeRedirects(tracker, &r); }

void TrackingRegistry::ClearRedirect(uint64_t tracker) { ChangeRedirects(tracker, nullptr); }

void TrackingRegistry::ChangeRedirects(uint64_t tracker, const Redirect* r) {
  std::lock_guard<std::mutex> lock(redirect_mu_);
  if (r == nullptr && !redirects_->contains(tracker)) return;
  auto next = std::make_shared<Redirects>(*redirects_);
  if (r != nullptr)
    (*next)[tracker] = *r;
  else
    next->erase(tracker);
  redirect_count_.store(static_cast<int64_t>(next->size()), std::memory_order_relaxed);
  redirects_ = std::move(next);
  redirect_generation_.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<const TrackingRegistry::Redirects> TrackingRegistry::redirects(uint64_t* generation) const {
  std::lock_guard<std::mutex> lock(redirect_mu_);
  *generation = redirect_generation_.load(std::memory_order_relaxed);
  return redirects_;
}

void TrackingRegistry::Subscribe(uint64_t id, uint32_t home, std::span<const std::string> prefixes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto next = std::make_shared<Prefixes>(*prefixes_);
  int64_t added = 0;
  for (const std::string& p : prefixes) {
    auto it = std::find_if(next->begin(), next->end(), [&](const Prefix& x) { return x.prefix == p; });
    if (it == next->end()) {
      next->push_back({p, {}});
      it = next->end() - 1;
      added++;
    }
    if (std::none_of(it->clients.begin(), it->clients.end(), [&](const Subscriber& s) { return s.id == id; }))
      it->clients.push_back({id, home});
  }
  prefixes_ = std::move(next);
  bcast_prefixes_.fetch_add(added, std::memory_order_relaxed);
  CountObserved(added);
  generation_.fetch_add(1, std::memory_order_release);
}

void TrackingRegistry::Unsubscribe(uint64_t id, std::span<const std::string> prefixes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto next = std::make_shared<Prefixes>(*prefixes_);
  int64_t removed = 0;
  for (const std::string& p : prefixes) {
    auto it = std::find_if(next->begin(), next->end(), [&](const Prefix& x) { return x.prefix == p; });
    if (it == next->end()) continue;
    std::erase_if(it->clients, [&](const Subscriber& s) { return s.id == id; });
    if (it->clients.empty()) {
      next->erase(it);
      removed++;
    }
  }
  prefixes_ = std::move(next);
  bcast_prefixes_.fetch_sub(removed, std::memory_order_relaxed);
  CountObserved(-removed);
  generation_.fetch_add(1, std::memory_order_release);
}

std::shared_ptr<const TrackingRegistry::Prefixes> TrackingRegistry::prefixes(uint64_t* generation) const {
  std::lock_guard<std::mutex> lock(mu_);
  *generation = generation_.load(std::memory_order_relaxed);
  return prefixes_;
}

void DisableTracking(TrackingRegistry& registry, Client& c) {
  if (!(c.tracking & tracking::kOn)) return;
  if (!c.tracking_prefixes.empty()) registry.Unsubscribe(c.id, c.tracking_prefixes);
  c.tracking_prefixes.clear();
  registry.clients().fetch_sub(1, std::memory_order_relaxed);
  if (c.tracking_redirect != 0) registry.ClearRedirect(c.id);
  c.tracking = 0;
  c.track_reads = false;
  c.tracking_redirect = 0;
}

void PublishRedirect(TrackingRegistry& registry, const Client& c) {
  if (!(c.tracking & tracking::kOn) || c.tracking_redirect == 0) {
    registry.ClearRedirect(c.id);
    return;
  }
  registry.SetRedirect(c.id, {.to = c.tracking_redirect,
                              .to_home = c.tracking_redirect_home,
                              .resp = static_cast<uint8_t>(c.resp),
                              .bcast = (c.tracking & tracking::kBcast) != 0,
                              .noloop = (c.tracking & tracking::kNoloop) != 0});
}

void FlushTracking(ServerState& server) {
  for (size_t s = 0; s < server.num_shards(); s++) server.shard(s).tracking().Clear();
  if (server.tracking().clients().load(std::memory_order_relaxed) == 0) return;
  TrackingInvalidations* inv = TrackingInvalidations::Current();
  if (inv == nullptr) return;
  for (const Client* c : server.AllClients())
    if (!c->closed && (c->tracking & tracking::kOn)) inv->Flush(c->id, c->home);
}

// --- TrackingInvalidations ---

uint64_t TrackingInvalidations::Changer() const {
  return running_ != nullptr && *running_ != nullptr ? (*running_)->id : 0;
}

void TrackingInvalidations::Key(uint64_t client, uint32_t home, std::string_view key) {
  Invalidation inv;
  inv.client = client;
  inv.home = home;
  inv.keys.emplace_back(std::string(key), Changer());
  pending_.push_back(std::move(inv));
}

void TrackingInvalidations::Flush(uint64_t client, uint32_t home) {
  Invalidation inv;
  inv.kind = Invalidation::Kind::kFlush;
  inv.client = client;
  inv.home = home;
  pending_.push_back(std::move(inv));
}

void TrackingInvalidations::Broadcast(std::string_view key, bool by_command) {
  if (registry_.generation() != prefixes_generation_) {
    // The prefixes changed: what was noted against the old ones goes out
    // as they were, then this thread reads the new ones.
    if (bcast_keys_ != 0) {
      std::vector<Invalidation> out = Take();
      pending_ = std::move(out);
    }
    prefixes_ = registry_.prefixes(&prefixes_generation_);
    bcast_.assign(prefixes_->size(), {});
  }
  // (An expiry's or an eviction's key has no changer: NOLOOP keeps it.)
  const uint64_t changer = by_command ? Changer() : 0;
  for (size_t i = 0; i < prefixes_->size(); i++) {
    if (!key.starts_with((*prefixes_)[i].prefix)) continue;
    bcast_[i][std::string(key)] = changer;
    bcast_keys_++;
  }
}

bool TrackingInvalidations::RedirectOf(uint64_t tracker, TrackingRegistry::Redirect* out) {
  if (registry_.redirect_generation() != redirects_generation_) redirects_ = registry_.redirects(&redirects_generation_);
  auto it = redirects_->find(tracker);
  if (it == redirects_->end()) return false;
  *out = it->second;
  return true;
}

std::vector<Invalidation> TrackingInvalidations::Take() {
  std::vector<Invalidation> out;
  out.swap(pending_);
  if (bcast_keys_ == 0) return out;
  for (size_t i = 0; i < bcast_.size(); i++) {
    if (bcast_[i].empty()) continue;
    std::vector<std::pair<std::string, uint64_t>> keys(bcast_[i].begin(), bcast_[i].end());
    bcast_[i].clear();
    std::sort(keys.begin(), keys.end());
    for (const TrackingRegistry::Subscriber& s : (*prefixes_)[i].clients) {
      Invalidation inv;
      inv.bcast = true;
      inv.client = s.id;
      inv.home = s.home;
      inv.keys = keys;
      out.push_back(std::move(inv));
    }
  }
  bcast_keys_ = 0;
  return out;
}

std::vector<Invalidation> TrackingInvalidations::TakeFor(uint64_t client, uint32_t home) {
  std::vector<Invalidation> mine;
  for (Invalidation& inv : Take()) {
    if (inv.kind == Invalidation::Kind::kKeys && inv.behalf == 0 && inv.client == client && inv.home == home)
      mine.push_back(std::move(inv));
    else
      pending_.push_back(std::move(inv));
  }
  return mine;
}

// --- TrackingTable ---

void TrackingTable::Remember(std::string_view key, uint64_t id, uint32_t home) {
  if (registry_ == nullptr) return;
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    it = keys_.emplace(std::string(key), std::vector<Tracker>()).first;
    registry_->keys().fetch_add(1, std::memory_order_relaxed);
    registry_->CountObserved(1);
  } else if (std::any_of(it->second.begin(), it->second.end(), [&](const Tracker& t) { return t.id == id; })) {
    return;
  }
  it->second.push_back({id, home});
  registry_->items().fetch_add(1, std::memory_order_relaxed);
}

void TrackingTable::Drop(Map::iterator it, bool counted) {
  if (TrackingInvalidations* inv = TrackingInvalidations::Current(); inv != nullptr)
    for (const Tracker& t : it->second) inv->Key(t.id, t.home, it->first);
  registry_->items().fetch_sub(static_cast<int64_t>(it->second.size()), std::memory_order_relaxed);
  if (!counted) registry_->keys().fetch_sub(1, std::memory_order_relaxed);
  registry_->CountObserved(-1);
  keys_.erase(it);
}

void TrackingTable::Changed(std::string_view key, bool by_command) {
  if (registry_ == nullptr) return;
  if (registry_->bcast())
    if (TrackingInvalidations* inv = TrackingInvalidations::Current(); inv != nullptr) inv->Broadcast(key, by_command);
  if (keys_.empty()) return;
  auto it = keys_.find(key);
  if (it != keys_.end()) Drop(it, /*counted=*/false);
}

void TrackingTable::Clear() {
  if (keys_.empty()) return;
  int64_t items = 0;
  for (const auto& [key, trackers] : keys_) items += static_cast<int64_t>(trackers.size());
  registry_->items().fetch_sub(items, std::memory_order_relaxed);
  registry_->keys().fetch_sub(static_cast<int64_t>(keys_.size()), std::memory_order_relaxed);
  registry_->CountObserved(-static_cast<int64_t>(keys_.size()));
  keys_.clear();
}

void TrackingTable::Limit(size_t effort) {
  if (registry_ == nullptr) return;
  const uint64_t max = registry_->max_keys();
  if (max == 0) return;
  std::atomic<int64_t>& total = registry_->keys();
  for (size_t done = 0; done < effort && !keys_.empty();) {
    // The total is taken down before the key goes, so that tables over the
    // limit at once drop no more than the excess between them.
    int64_t now = total.load(std::memory_order_relaxed);
    if (now <= static_cast<int64_t>(max)) return;
    if (!total.compare_exchange_weak(now, now - 1, std::memory_order_relaxed)) continue;
    Drop(keys_.begin(), /*counted=*/true);
    done++;
  }
}

}  // namespace peregrine
