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

bool PubSubRegistry::Subscribe(Client& c, std::string_view channel) {
  if (c.subs == nullptr) c.subs = std::make_unique<ClientSubscriptions>();
  // The client's own set says whether it is new, so the registry's list
  // needs no search.
  if (!c.subs->channels.emplace(channel).second) return false;
  auto it = channels_.find(channel);
  if (it == channels_.end()) it = channels_.emplace(std::string(channel), Subscribers{}).first;
  it->second.push_back(&c);
  Count(1);
  return true;
}

bool PubSubRegistry::PSubscribe(Client& c, std::string_view pattern) {
  if (c.subs == nullptr) c.subs = std::make_unique<ClientSubscriptions>();
  if (!c.subs->patterns.emplace(pattern).second) return false;
  auto it = patterns_.find(pattern);
  if (it == patterns_.end()) it = patterns_.emplace(std::string(pattern), Subscribers{}).first;
  it->second.push_back(&c);
  Count(1);
  return true;
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
template <typename Map>
bool PubSubRegistry::Leave(Client& c, std::set<std::string, std::less<>>& mine, Map& registry,
                           std::string_view name) {
  auto own = mine.find(name);
  if (own == mine.end()) return false;
  Drop(registry, name, c);
  mine.erase(own);  // after: `name` may view it
  Count(-1);
  if (c.subs->count() == 0) c.subs.reset();
  return true;
}

bool PubSubRegistry::Unsubscribe(Client& c, std::string_view channel) {
  return c.subs != nullptr && Leave(c, c.subs->channels, channels_, channel);
}

bool PubSubRegistry::PUnsubscribe(Client& c, std::string_view pattern) {
  return c.subs != nullptr && Leave(c, c.subs->patterns, patterns_, pattern);
}

void PubSubRegistry::RemoveClient(Client& c) {
  if (c.subs == nullptr) return;
  for (const std::string& ch : c.subs->channels) Drop(channels_, ch, c);
  for (const std::string& p : c.subs->patterns) Drop(patterns_, p, c);
  Count(-static_cast<int64_t>(c.subs->count()));
  c.subs.reset();
}

void PubSubRegistry::ActiveChannels(std::optional<std::string_view> pattern,
                                    std::set<std::string, std::less<>>* out) const {
  for (const auto& [channel, subs] : channels_)
    if (!pattern || GlobMatch(*pattern, channel)) out->insert(channel);
}

size_t PubSubRegistry::NumSub(std::string_view channel) const {
  auto it = channels_.find(channel);
  return it == channels_.end() ? 0 : it->second.size();
}

void PubSubRegistry::ActivePatterns(std::set<std::string, std::less<>>* out) const {
  for (const auto& [pattern, subs] : patterns_) out->insert(pattern);
}

}  // namespace peregrine
