// The order in which the shards' logged commands enter the replication
// stream while write groups run (docs/replication.md, "Order across
// shards"). A write group's parts run side by side, one per shard, each in
// its ticket's place on its shard (claims.h); on the primary no reader sees
// one part's effect without the others'. A replica applies the stream in
// its order, so the group must reach it as one piece, at one place in every
// shard's sequence: each part waits here until every part of its group has
// come and stands first on its shard, and the group goes out as one
// MULTI ... EXEC. What a shard logs after a part waits behind it (its
// commands ran after the part's), and a command over several shards waits
// until it is first on each of them.
//
// The tickets give every shard the groups in the same order, and a shard
// is held for a command over several only after its groups' parts ran, so
// nothing here waits in a cycle: once every part has run, everything is
// out (every shard held: nothing waits). A part only waits while another
// shard's worker has yet to run its own part of the group.
//
// Each part carries its ticket on its shard (claims.h): once the part is
// out, the ticket is released (`released(s)`), and what the shard's worker
// held back for it (replies that could reveal the part's effect, or the
// effect of anything that ran on the shard after it) may go: a reply never
// leaves before what it acknowledges is in the stream (BatchRelay).
//
// A Flush or Reset starts a new epoch: a part of a group from an earlier
// epoch (one whose group may have gone without it) goes as its shard's
// chunk. Every part is given here exactly once, so a group of the current
// epoch always comes whole.
//
// Not thread-safe: the stream's owner (ReplicationPrimary) calls it under
// its lock. Chunks that can go at once are handed to `emit` in order.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "persist/aof_format.h"

namespace peregrine {

class StreamOrder {
 public:
  using Emit = std::function<void(const AofChunk&)>;

  explicit StreamOrder(uint32_t shards) : queues_(shards), released_(shards, 0) {}

  // Whether shard `s` has nothing waiting: its next chunk may go to the
  // stream at once (the common case, checked before calling Chunk).
  bool idle(uint32_t s) const { return queues_[s].empty(); }
  bool empty() const { return waiting_ == 0; }
  // Bytes waiting (a part that does not come for long holds its shards'
  // later chunks: the owner bounds this with Flush).
  uint64_t bytes() const { return bytes_; }

  // What shard `s` logged: out now if nothing of `s` waits, else after it;
  // with a ticket (a part that goes as its shard's), released once out.
  void Chunk(uint32_t s, const AofChunk& chunk, const Emit& emit, uint64_t ticket = 0);
  // A command over several shards (`shards`, distinct): out once it is
  // first on each of them.
  void Multi(std::span<const uint32_t> shards, const AofChunk& chunk, const Emit& emit);
  // Shard `s`'s part of write group `group` (of `parts` parts; ids are the
  // caller's, unique while a group is here), its ticket there, and the
  // epoch when the group was made; possibly empty: the group goes out when
  // all its parts are here and first on their shards.
  void Part(uint32_t s, uint64_t group, uint32_t parts, uint64_t ticket, uint64_t epoch, const AofChunk& chunk,
            const Emit& emit);
  // Everything waiting goes out now, shard by shard, each group's parts
  // that are here one by one (and those still to come as their shards'
  // chunks: a new epoch): for when waiting is no longer possible (too many
  // bytes), never in the normal course.
  void Flush(const Emit& emit);
  // Forgets everything (the stream starts again): what waited is released
  // without going out. A new epoch.
  void Reset();
  uint64_t epoch() const { return epoch_; }

  // The last ticket of shard `s` that is out (or forgotten), and the
  // shards whose ticket moved since ClearMoved.
  uint64_t released(uint32_t s) const { return released_[s]; }
  const std::vector<uint32_t>& moved() const { return moved_; }
  void ClearMoved() { moved_.clear(); }

 private:
  struct Item {
    uint64_t group = 0;   // 0: the shard's own chunk
    uint64_t ticket = 0;  // a part's (or a part that goes as the shard's chunk)
    AofChunk chunk;
  };
  struct Group {
    uint32_t need = 0;                 // parts (shards) it has
    uint32_t arrived = 0;              // parts that came
    std::vector<uint32_t> shards;      // those whose part waits here, in that order
    // Flush let it go without its missing parts (they go as their shards'
    // chunks when they come: another epoch).
    bool broken = false;
  };
  void Push(uint32_t s, uint64_t group, uint64_t ticket, const AofChunk& chunk);
  void Release(uint32_t s, uint64_t ticket);
  // Sends what stands first on the shards in `work_` and may go, and what
  // that frees behind it.
  void Drain(const Emit& emit);
  // Whether group `id` can go: all its parts here (a broken one: those
  // that came), each first on its shard.
  bool Ready(uint64_t id, const Group& g) const;
  void SendGroup(uint64_t id, const Emit& emit);
  void Pop(uint32_t s);

  std::vector<std::deque<Item>> queues_;
  std::vector<uint64_t> released_;
  std::vector<uint32_t> moved_;
  uint64_t epoch_ = 1;
  std::unordered_map<uint64_t, Group> groups_;
  std::vector<uint32_t> work_;  // (scratch: shards to look at)
  AofChunk wrapped_;            // (scratch: a group as one transaction)
  uint64_t waiting_ = 0, bytes_ = 0;
  // Ids for commands over several shards (apart from the groups' ids,
  // which have the top bit clear).
  uint64_t next_multi_ = uint64_t{1} << 63;
};

}  // namespace peregrine
