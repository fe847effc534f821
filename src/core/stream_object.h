// StreamObject: a stream's entries, in packed nodes ordered by ID, with the
// metadata Redis keeps (length, last / first / max-deleted IDs, entries
// added) and its consumer groups (core/stream_groups.h).
//
// A node holds up to stream-node-max-entries entries (live and deleted)
// within about stream-node-max-bytes, as Redis's listpack nodes do, so that
// approximate trimming (which drops whole nodes) removes what Redis removes.
// Its bytes, after a header with the node's master ID and counts:
//
//   master fields:  varint n, then n packed items (core/packed.h): the
//                   fields of the node's first entry
//   each entry:     flags (bit 0 deleted, bit 1 same fields as the master)
//                   varint ms - master.ms
//                   varint seq - master.seq when the ms are equal, else seq
//                   [varint n, n field items]  unless "same fields"
//                   the values, one packed item each
//
// Against Redis's listpack (each element with a length byte and a back
// length, the IDs as listpack integers, a count after every entry to walk
// back), an entry of two small fields takes about half the bytes; walking
// backwards reads a node's entry offsets forwards first (a node is small).
//
// Not thread-safe; owned by one shard like everything in core/.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/memory.h"
#include "core/packed.h"

namespace peregrine {

struct StreamID {
  uint64_t ms = 0;
  uint64_t seq = 0;
  friend auto operator<=>(const StreamID&, const StreamID&) = default;
  static constexpr StreamID Max() { return {UINT64_MAX, UINT64_MAX}; }
  std::string ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

// The next / previous ID (false, and unchanged, at the largest / 0-0).
bool IncrStreamID(StreamID* id);
bool DecrStreamID(StreamID* id);

struct StreamLimits {
  uint64_t node_max_bytes = 4096;   // stream-node-max-bytes (0: no limit)
  int64_t node_max_entries = 100;   // stream-node-max-entries (0: no limit)
};

class StreamGroups;

class StreamObject {
 public:
  static constexpr uint8_t kFlagDeleted = 1;
  static constexpr uint8_t kFlagSameFields = 2;

  StreamObject();
  ~StreamObject();
  StreamObject(StreamObject&& other) noexcept;
  StreamObject& operator=(StreamObject&& other) noexcept;
  StreamObject(const StreamObject&) = delete;
  StreamObject& operator=(const StreamObject&) = delete;
  StreamObject Clone() const;

  uint64_t size() const { return length_; }
  StreamID last_id() const { return last_id_; }
  StreamID first_id() const { return first_id_; }
  StreamID max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  void set_last_id(StreamID id) { last_id_ = id; }
  void set_max_deleted_id(StreamID id) { max_deleted_id_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }
  void set_first_id(StreamID id) { first_id_ = id; }

  // Adds an entry (`pairs`: field, value, ...) with `id`, above every ID in
  // the stream (the caller checks); it becomes the last ID; entries_added
  // grows by one.
  void Append(StreamID id, std::span<const std::string_view> pairs, const StreamLimits& limits);

  // One entry met by Range: its ID and field/value pairs.
  class EntryView {
   public:
    StreamID id() const { return id_; }
    size_t pairs() const { return count_; }
    // f(field, value) for each pair, in order (views live for the call).
    template <typename F>
    void ForEach(F&& f) const {
      char fs[packed::kScratchSize], vs[packed::kScratchSize];
      const uint8_t* p = values_;
      const uint8_t* q = fields_;
      for (size_t i = 0; i < count_; i++) {
        const std::string_view field = packed::View(q, fs);
        q += packed::ItemSize(q);
        if (!same_) {  // fields and values interleave
          f(field, packed::View(q, vs));
          q += packed::ItemSize(q);
        } else {
          f(field, packed::View(p, vs));
          p += packed::ItemSize(p);
        }
      }
    }

   private:
    friend class StreamObject;
    StreamID id_;
    size_t count_ = 0;
    bool same_ = false;
    const uint8_t* fields_ = nullptr;  // the master fields, or the entry's interleaved pairs
    const uint8_t* values_ = nullptr;
  };

  // Visits the live entries with start <= ID <= end, ascending (or
  // descending when `rev`), until f returns false.
  using Visitor = std::function<bool(const EntryView&)>;
  void Range(StreamID start, StreamID end, bool rev, const Visitor& f) const;

  // XDEL of one ID: marks a live entry deleted (the node goes when it has
  // none left). Returns whether there was one.
  bool Delete(StreamID id);
  // Whether a live entry has this ID.
  bool Contains(StreamID id) const;

  // Redis's streamTrim: MAXLEN or MINID, whole nodes first; approximate
  // stops at the first node it cannot drop whole; `limit` (0: none) bounds
  // the entries a call removes. Returns the entries removed.
  struct Trim {
    enum Strategy : uint8_t { kNone, kMaxLen, kMinId } strategy = kNone;
    bool approx = false;
    uint64_t maxlen = 0;
    StreamID minid;
    int64_t limit = 0;
  };
  int64_t TrimEntries(const Trim& args);

  // Redis's streamGetEdgeID: the first or last ID, of live entries only or
  // of tombstones too ({0,0} / {max,max} in an empty stream as Redis).
  StreamID EdgeID(bool first, bool skip_tombstones) const;
  // Whether an entry deleted (a tombstone still in a node, or a gap the
  // max-deleted ID says exists) may lie in [start, end] (Redis's
  // streamRangeHasTombstones).
  bool RangeHasTombstones(StreamID start, StreamID end) const;

  // Redis's streamEstimateDistanceFromFirstEverEntry: how many entries had
  // been added up to `id`, or -1 when that cannot be known (a consumer
  // group's read count and lag).
  int64_t EntriesReadAt(StreamID id) const;

  size_t nodes() const { return nodes_.size(); }
  // Frees up to `count` nodes from the end (the lazy free of a large
  // stream, StreamValue); true once none is left.
  bool DestroySome(size_t count);
  // Heap bytes: nodes (usable sizes), external items, the node index and
  // the groups.
  size_t AllocatedBytes() const;

  // Consumer groups (null until the first is made).
  StreamGroups* groups() const { return groups_.get(); }
  StreamGroups& mutable_groups();

  // The nodes as Redis's RDB lists them: each node's master ID and its
  // entries in order (deleted ones included, with their flags), for the
  // RDB writer to encode as listpacks.
  struct RawEntry {
    StreamID id;
    uint8_t flags;
    std::vector<std::string_view> fields;  // the entry's own, or the master's
    std::vector<std::string_view> values;
  };
  using NodeVisitor = std::function<void(StreamID master, std::span<const std::string_view> master_fields,
                                         uint32_t live, uint32_t deleted, std::span<const RawEntry> entries)>;
  void ForEachNode(const NodeVisitor& f) const;

  // Adds a node read from an RDB file (master ID, master fields, entries
  // with flags, in order, IDs above every node's before). False if the
  // entries are not in order or the node would be empty.
  bool LoadNode(StreamID master, std::span<const std::string_view> master_fields,
                std::span<const RawEntry> entries);
  // After LoadNode: the metadata as the file gives it.
  void SetLoadedLength(uint64_t n) { length_ = n; }
  // The sum of the live entries of the nodes (checked against the length).
  uint64_t CountLive() const;

 private:
  struct Node;
  static Node* NewNode(size_t cap);
  static void FreeNode(Node* n);
  // The index of the node that may hold `id` (the last whose master ID is
  // not above it), or -1.
  ptrdiff_t NodeFor(StreamID id) const;
  void RemoveNode(size_t i);
  // Decodes the entry at offset `off` of node `n`: its view, flags, and the
  // offset after it.
  static uint32_t ReadEntry(const Node* n, uint32_t off, EntryView* view, uint8_t* flags);
  static StreamID NodeLastId(const Node* n);
  // Appends to the last node, or false if it is full (Redis's rule, on the
  // bytes Redis's listpack would take).
  bool FitsLastNode(size_t raw_bytes, const StreamLimits& limits) const;

  std::deque<Node*, CountedAllocator<Node*>> nodes_;
  uint64_t length_ = 0;
  StreamID last_id_;
  StreamID first_id_;
  StreamID max_deleted_id_;
  uint64_t entries_added_ = 0;
  std::unique_ptr<StreamGroups> groups_;
};

// A Value's stream (core/value.h): 16 bytes laid out as a Value's (the
// pointer, unused bytes, the owner's byte, the tag), the StreamObject in a
// counted block of its own.
class StreamValue {
 public:
  static constexpr uint8_t kValueTag = 0xA8;  // 0x80 | kStream << 3
  explicit StreamValue(StreamObject s) : ptr_(new (CountedAlloc(sizeof(StreamObject))) StreamObject(std::move(s))) {}
  ~StreamValue() { Release(); }
  StreamValue(StreamValue&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  StreamValue& operator=(StreamValue&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  StreamValue(const StreamValue&) = delete;
  StreamValue& operator=(const StreamValue&) = delete;
  StreamValue Clone() const { return StreamValue(ptr_->Clone()); }
  const StreamObject& get() const { return *ptr_; }
  StreamObject& get() { return *ptr_; }
  size_t AllocatedBytes() const { return CountedUsableSize(ptr_) + ptr_->AllocatedBytes(); }

 private:
  // Redis frees a stream lazily past 64 allocations (LAZYFREE_THRESHOLD):
  // one of more nodes goes a few nodes at a time between events
  // (core/lazy_free.h), and counts in lazyfreed_objects.
  static constexpr size_t kLazyNodes = 64;
  void Release();
  StreamObject* ptr_ = nullptr;
  [[maybe_unused]] uint8_t unused_[6] = {};
  [[maybe_unused]] uint8_t spare_ = 0;  // the owner's byte: Value reads and writes it
  [[maybe_unused]] uint8_t tag_ = kValueTag;  // read through the Value's bytes
};

static_assert(sizeof(StreamValue) == 16);

}  // namespace peregrine
