// Pub/Sub subscriptions (docs/pubsub.md): which of a worker's clients listen
// to which channels and patterns. Each worker keeps its own registry and only
// its own thread (or a command holding the worker, as PUBLISH does with
// several workers) reads or changes it; PUBLISH walks the registry of every
// worker that has subscribers. A client keeps its own sets beside it, for
// its replies' counts, UNSUBSCRIBE without arguments and CLIENT LIST.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/glob.h"

namespace peregrine {

struct Client;

// A client's own subscriptions (allocated at its first SUBSCRIBE,
// PSUBSCRIBE or SSUBSCRIBE, freed when it has none left).
struct ClientSubscriptions {
  std::set<std::string, std::less<>> channels;
  std::set<std::string, std::less<>> patterns;
  // SSUBSCRIBE's, each with the slot table's version when it was made (a
  // slot that leaves this node drops the subscriptions made before).
  std::map<std::string, uint64_t, std::less<>> shard_channels;
  // The count SUBSCRIBE's and PSUBSCRIBE's confirmations carry (Redis's
  // clientSubscriptionsCount: shard channels are counted apart).
  size_t count() const { return channels.size() + patterns.size(); }
  size_t total() const { return count() + shard_channels.size(); }
};

class PubSubRegistry {
 public:
  // Each returns true if the subscription is new (false: already there, or
  // not subscribed for the removals). They keep the client's own sets too.
  bool Subscribe(Client& c, std::string_view channel);
  bool Unsubscribe(Client& c, std::string_view channel);
  bool PSubscribe(Client& c, std::string_view pattern);
  bool PUnsubscribe(Client& c, std::string_view pattern);
  // Sharded Pub/Sub's (SSUBSCRIBE): channels of their own, no patterns.
  bool SSubscribe(Client& c, std::string_view channel, uint64_t table_version = 0);
  bool SUnsubscribe(Client& c, std::string_view channel);
  // Drops every subscription of `c` (disconnect, RESET).
  void RemoveClient(Client& c);

  // Calls `deliver(client, pattern)` for every subscription that matches
  // `channel`: the channel's subscribers (pattern empty), then every
  // matching pattern's (a client subscribed both ways gets both). Returns
  // how many deliveries there were (PUBLISH's count).
  template <typename Deliver>
  size_t ForEachReceiver(std::string_view channel, Deliver deliver) const;
  // The same for SPUBLISH: the shard channel's subscribers.
  template <typename Deliver>
  size_t ForEachShardReceiver(std::string_view channel, Deliver deliver) const;

  // Channels with at least one subscriber here, matching `pattern` (every one
  // without a pattern: also "", which no pattern but "" matches), added to *out.
  void ActiveChannels(std::optional<std::string_view> pattern, std::set<std::string, std::less<>>* out,
                      bool shard = false) const;
  // Subscribers of `channel` here (patterns not counted); `shard`: of the
  // shard channel.
  size_t NumSub(std::string_view channel, bool shard = false) const;
  // Shard channels with subscribers here for which `gone` is true (their
  // slot left this node), each with its subscribers.
  template <typename Gone>
  std::vector<std::pair<std::string, std::vector<Client*>>> ShardChannelsWhere(Gone gone) const;
  // Patterns with at least one subscriber here, added to *out.
  void ActivePatterns(std::set<std::string, std::less<>>* out) const;
  size_t channel_count() const { return channels_.size(); }
  size_t pattern_count() const { return patterns_.size(); }
  size_t shard_channel_count() const { return shard_channels_.size(); }

  // Subscriptions of this worker's clients (of all three kinds), for
  // other workers to see whether a PUBLISH must reach this one: written by
  // the owner's thread, read by any.
  uint64_t subscriptions() const { return subscriptions_.load(std::memory_order_acquire); }
  // Where the count of every worker's subscriptions is kept too
  // (KeyspaceNotifier: an event nobody can hear is dropped where it
  // happens).
  void set_total(std::atomic<int64_t>* total) { total_ = total; }

 private:
  using Subscribers = std::vector<Client*>;  // in subscription order
  // Lets PUBLISH look a channel up by its view, without a string per call.
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  static bool Remove(Subscribers& subs, Client& c);
  template <typename Map>
  static void Drop(Map& registry, std::string_view name, Client& c);
  using NameSet = std::set<std::string, std::less<>>;
  // (`extra`: a shard channel's table version, the client's map holding it.)
  template <typename Map, typename Mine, typename... Extra>
  bool Join(Client& c, Mine ClientSubscriptions::*mine, Map& registry, std::string_view name, Extra... extra);
  template <typename Map, typename Mine>
  bool Leave(Client& c, Mine& mine, Map& registry, std::string_view name);
  void Count(int64_t delta) {
    subscriptions_.fetch_add(static_cast<uint64_t>(delta), std::memory_order_release);
    if (total_ != nullptr) total_->fetch_add(delta, std::memory_order_relaxed);
  }

  std::unordered_map<std::string, Subscribers, ViewHash, std::equal_to<>> channels_;
  std::map<std::string, Subscribers, std::less<>> patterns_;
  std::unordered_map<std::string, Subscribers, ViewHash, std::equal_to<>> shard_channels_;
  std::atomic<uint64_t> subscriptions_{0};
  std::atomic<int64_t>* total_ = nullptr;  // every worker's (set_total)
  // ForEachReceiver's list, kept between calls for its capacity.
  mutable std::vector<std::pair<Client*, std::string>> receivers_;
};

template <typename Deliver>
size_t PubSubRegistry::ForEachReceiver(std::string_view channel, Deliver deliver) const {
  // Who receives is decided before anything is delivered: a delivery may
  // close a client over its output limit, which unsubscribes it and changes
  // these lists (the caller skips clients closed meanwhile).
  std::vector<std::pair<Client*, std::string>> receivers;
  receivers.swap(receivers_);
  receivers.clear();
  auto it = channels_.find(channel);
  if (it != channels_.end())
    for (Client* c : it->second) receivers.emplace_back(c, std::string());
  for (const auto& [pattern, subs] : patterns_)
    if (GlobMatch(pattern, channel))
      for (Client* c : subs) receivers.emplace_back(c, pattern);
  for (auto& [c, pattern] : receivers) deliver(*c, std::string_view(pattern));
  const size_t n = receivers.size();
  receivers.swap(receivers_);
  return n;
}

template <typename Deliver>
size_t PubSubRegistry::ForEachShardReceiver(std::string_view channel, Deliver deliver) const {
  auto it = shard_channels_.find(channel);
  if (it == shard_channels_.end()) return 0;
  // (Decided first, for the reason above, in the same kept list.)
  std::vector<std::pair<Client*, std::string>> receivers;
  receivers.swap(receivers_);
  receivers.clear();
  for (Client* c : it->second) receivers.emplace_back(c, std::string());
  for (auto& [c, unused] : receivers) deliver(*c);
  const size_t n = receivers.size();
  receivers.swap(receivers_);
  return n;
}

template <typename Gone>
std::vector<std::pair<std::string, std::vector<Client*>>> PubSubRegistry::ShardChannelsWhere(Gone gone) const {
  std::vector<std::pair<std::string, std::vector<Client*>>> out;
  for (const auto& [channel, subs] : shard_channels_)
    if (gone(std::string_view(channel))) out.emplace_back(channel, subs);
  return out;
}

}  // namespace peregrine
