// Pub/Sub subscriptions (see pubsub.h).
#include "server/pubsub.h"

#include <algorithm>
#include <memory>

#include "server/client.h"

namespace peregrine {

bool PubSubRegistry::Remove(Subscribers& subs, Client& c) {
  auto it = std::find(subs.begin(), subs.end(), &c);
  if (it == subs.end()) return false;
  subs.erase(it);
  return true;
}

// Adds `name` to the client's own set (or map) `mine`, a member of its
// subscriptions made at its first, and the client to the registry's list.
template <typename Map, typename Mine, typename... Extra>
bool PubSubRegistry::Join(Client& c, Mine ClientSubscriptions::*mine, Map& registry, std::string_view name,
                          Extra... extra) {
  if (c.subs == nullptr) c.subs = std::make_unique<ClientSubscriptions>();
  // The client's own set says whether it is new, so the registry's list
  // needs no search.
  if (!((*c.subs).*mine).emplace(name, extra...).second) return false;
  auto it = registry.find(name);
  if (it == registry.end()) it = registry.emplace(std::string(name), Subscribers{}).first;
  it->second.push_back(&c);
  Count(1);
  return true;
}

bool PubSubRegistry::Subscribe(Client& c, std::string_view channel) {
  return Join(c, &ClientSubscriptions::channels, channels_, channel);
}

bool PubSubRegistry::SSubscribe(Client& c, std::string_view channel, uint64_t table_version) {
  return Join(c, &ClientSubscriptions::shard_channels, shard_channels_, channel, table_version);
}

bool PubSubRegistry::PSubscribe(Client& c, std::string_view pattern) {
  return Join(c, &ClientSubscriptions::patterns, patterns_, pattern);
}

// Removes the client from the subscribers of `name` in `registry`; a
// channel or pattern left without subscribers goes.
template <typename Map>
void PubSubRegistry::Drop(Map& registry, std::string_view name, Client& c) {
  auto it = registry.find(name);
  if (it != registry.end() && Remove(it->second, c) && it->second.empty()) registry.erase(it);
}

// Removes `name` from the client's own set `mine` and the client from the
// registry's list.
template <typename Map, typename Mine>
bool PubSubRegistry::Leave(Client& c, Mine& mine, Map& registry, std::string_view name) {
  auto own = mine.find(name);
  if (own == mine.end()) return false;
  Drop(registry, name, c);
  mine.erase(own);  // after: `name` may view it
  Count(-1);
  if (c.subs->total() == 0) c.subs.reset();
  return true;
}

bool PubSubRegistry::Unsubscribe(Client& c, std::string_view channel) {
  return c.subs != nullptr && Leave(c, c.subs->channels, channels_, channel);
}

bool PubSubRegistry::PUnsubscribe(Client& c, std::string_view pattern) {
  return c.subs != nullptr && Leave(c, c.subs->patterns, patterns_, pattern);
}

bool PubSubRegistry::SUnsubscribe(Client& c, std::string_view channel) {
  return c.subs != nullptr && Leave(c, c.subs->shard_channels, shard_channels_, channel);
}

void PubSubRegistry::RemoveClient(Client& c) {
  if (c.subs == nullptr) return;
  for (const std::string& ch : c.subs->channels) Drop(channels_, ch, c);
  for (const std::string& p : c.subs->patterns) Drop(patterns_, p, c);
  for (const auto& [ch, version] : c.subs->shard_channels) Drop(shard_channels_, ch, c);
  Count(-static_cast<int64_t>(c.subs->total()));
  c.subs.reset();
}

void PubSubRegistry::ActiveChannels(std::optional<std::string_view> pattern, std::set<std::string, std::less<>>* out,
                                    bool shard) const {
  for (const auto& [channel, subs] : shard ? shard_channels_ : channels_)
    if (!pattern || GlobMatch(*pattern, channel)) out->insert(channel);
}

size_t PubSubRegistry::NumSub(std::string_view channel, bool shard) const {
  const auto& registry = shard ? shard_channels_ : channels_;
  auto it = registry.find(channel);
  return it == registry.end() ? 0 : it->second.size();
}

void PubSubRegistry::ActivePatterns(std::set<std::string, std::less<>>* out) const {
  for (const auto& [pattern, subs] : patterns_) out->insert(pattern);
}

}  // namespace peregrine
