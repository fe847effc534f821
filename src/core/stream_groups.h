// A stream's consumer groups: for each group its last delivered ID, the
// entries read so far (for the lag), the pending entries list (every entry
// delivered and not yet acknowledged: when, how often, to whom) and its
// consumers, each with its own pending entries. Ordered maps keep groups,
// consumers and pending entries in the order Redis's radix trees list them
// (names by bytes, IDs ascending).
//
// Not thread-safe; owned by one shard like everything in core/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "core/stream_object.h"

namespace peregrine {

struct StreamConsumer;

// A pending entry (Redis's streamNACK).
struct StreamNack {
  int64_t delivery_time = 0;  // unix ms of the last delivery
  uint64_t delivery_count = 0;
  StreamConsumer* consumer = nullptr;
};

struct StreamConsumer {
  std::string name;
  int64_t seen_time = 0;    // the last interaction (any read, claim ...)
  int64_t active_time = -1;  // the last successful interaction (-1: never)
  std::set<StreamID> pending;  // its entries in the group's PEL
};

// Redis's SCG_INVALID_ENTRIES_READ: the group's read count is not known.
constexpr int64_t kStreamEntriesReadInvalid = -1;

struct StreamGroup {
  StreamID last_id;
  int64_t entries_read = kStreamEntriesReadInvalid;
  std::map<StreamID, StreamNack> pel;
  std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>> consumers;

  StreamConsumer* FindConsumer(std::string_view name) const {
    auto it = consumers.find(name);
    return it == consumers.end() ? nullptr : it->second.get();
  }
  // Adds a consumer (null if the name exists).
  StreamConsumer* AddConsumer(std::string_view name, int64_t now_ms);
  // Removes a consumer and its pending entries from the group's PEL;
  // returns how many it had.
  size_t RemoveConsumer(std::string_view name);
  // Acknowledges `id`: out of the PEL and its consumer's. Returns whether
  // it was pending.
  bool Ack(StreamID id);
  // Gives the pending entry `id` to `to` (from whoever had it).
  void MoveNack(StreamID id, StreamNack& nack, StreamConsumer* to);
};

class StreamGroups {
 public:
  using Map = std::map<std::string, std::unique_ptr<StreamGroup>, std::less<>>;
  StreamGroup* Find(std::string_view name) const {
    auto it = groups_.find(name);
    return it == groups_.end() ? nullptr : it->second.get();
  }
  // Adds a group (null if the name exists).
  StreamGroup* Add(std::string_view name, StreamID last_id, int64_t entries_read);
  bool Remove(std::string_view name) { return groups_.erase(std::string(name)) > 0; }
  const Map& all() const { return groups_; }
  size_t size() const { return groups_.size(); }
  std::unique_ptr<StreamGroups> Clone() const;
  // Heap bytes, estimated from the nodes of the maps and sets.
  size_t AllocatedBytes() const;

 private:
  Map groups_;
};

}  // namespace peregrine
