// ListObject: a list's items in the encoding Redis 7.2 would pick: one node
// (core/list_node.h) while the list fits the list-max-listpack-size limit
// ("listpack"), else a deque of nodes ("quicklist"): an array of node
// pointers with room at both ends, each node filled up to the limit. Pushes
// and pops at either end touch one node and move nothing most of the time;
// reaching an index walks the nodes by their counts, from the nearer end,
// then the entries of one node, again from its nearer end.
//
// list-max-listpack-size (Redis's "fill"): a positive count of entries per
// node (and at most 8 KB, Redis's safety limit), or -1..-5 for 4..64 KB per
// node. A listpack converts when a write would pass the limit; a quicklist
// that shrinks to one node within half of it converts back, as in Redis
// 7.2.
//
// list-compress-depth: a quicklist made while it is N > 0 keeps N nodes at
// each end plain and compresses the nodes between them with LZF
// (core/list_node.h: ListNodeLzf), as Redis does; like Redis, a list keeps
// the depth it was made with. A compressed node reads as a plain copy (one
// per list) kept until a read of another compressed node, a write, or the
// command's end (DropCache, Settle). A write in the middle unpacks its node
// in place and leaves it plain ("loose") until the next write elsewhere or
// Settle; writes at the ends and the nodes they shift across the depth
// boundary are settled as they go. Compression only saves memory: every
// read and write works on either form.
//
// The commands (commands/list_commands.cc) hold one per list key. Not thread-safe,
// like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "core/list_node.h"
#include "core/packed.h"

namespace peregrine {

// The list-* directives.
struct ListLimits {
  int64_t fill = -2;           // list-max-listpack-size
  int64_t compress_depth = 0;  // list-compress-depth
  // Redis's quicklist packed_threshold (DEBUG QUICKLIST-PACKED-THRESHOLD):
  // in a quicklist, an item of at least this many bytes is a node of its
  // own (Redis's "plain" node), and no other item joins that node.
  size_t plain_threshold = kDefaultPlainThreshold;
  static constexpr size_t kDefaultPlainThreshold = size_t{1} << 30;
};

// Whether a node of `bytes` bytes and `count` entries passes the limit
// `fill` (Redis's quicklistNodeExceedsLimit).
bool ListNodeExceedsLimit(int64_t fill, size_t bytes, size_t count);

class ListObject {
 public:
  // The tag byte of a Value holding one (core/value.h): 0x80 | type << 3,
  // the encoding in the low bits.
  static constexpr uint8_t kValueTag = 0x88;
  enum class Encoding : uint8_t { kListpack, kQuicklist };
  enum class End : uint8_t { kHead, kTail };

  // A position: a node's index and an entry's offset in it. The end of the
  // list is {nodes, 0}.
  struct Pos {
    uint32_t node = 0;
    uint32_t off = 0;
  };

  // An empty list ("listpack").
  ListObject();
  ~ListObject() { Release(); }
  ListObject(ListObject&& other) noexcept : ptr_(other.ptr_), tag_(other.tag_) { other.ptr_ = nullptr; }
  // The old contents leave with `other` (freed by its destructor).
  ListObject& operator=(ListObject&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(tag_, other.tag_);
    return *this;
  }
  ListObject(const ListObject&) = delete;
  ListObject& operator=(const ListObject&) = delete;
  // A deep copy (COPY), in the same encoding.
  ListObject Clone() const;

  Encoding encoding() const { return static_cast<Encoding>(tag_ & 1); }
  std::string_view EncodingName() const { return encoding() == Encoding::kListpack ? "listpack" : "quicklist"; }
  size_t size() const;
  // Bytes allocated for the items (MEMORY USAGE); O(nodes).
  size_t AllocatedBytes() const;
  // Nodes (1 for a listpack).
  uint32_t nodes() const;

  // Pushes `items` one by one at `end` (LPUSH's order: each at the head).
  // Converts first when the limit says so (Redis's
  // listTypeTryConversionAppend).
  void Push(End end, std::span<const std::string_view> items, const ListLimits& limits);
  void Push(End end, std::string_view item, const ListLimits& limits) { Push(end, std::span(&item, 1), limits); }
  // Calls f(std::string_view item) with the item at `end`, then removes it
  // (the view is valid during the call only). REQUIRES: size() > 0.
  template <typename F>
  void Pop(End end, F&& f) {
    const uint32_t i = end == End::kHead ? 0 : nodes() - 1;
    ListNode* n = Touch(i);
    const uint32_t off = end == End::kHead ? n->begin : n->LastOf();
    char scratch[packed::kScratchSize];
    f(n->View(off, scratch));
    EraseAt(i, n, off);
  }
  // Removes `n` items from the head or the tail (LTRIM), a node at a time.
  void Trim(End end, size_t n);
  // Converts back to a listpack when it shrank enough (after removals);
  // settles first.
  void MaybeShrinkEncoding(const ListLimits& limits);
  // Compresses the node a write in the middle left plain and drops the
  // read copy (a command calls it when it is done writing the list: LSET,
  // LINSERT, LREM, and every removal through MaybeShrinkEncoding).
  void Settle();
  // Frees the plain copy that reading a compressed node made (a command
  // calls it when it is done reading the list: LINDEX, LRANGE, LPOS).
  void DropCache() const;
  // Nodes held compressed (tests).
  uint32_t CompressedNodes() const;
  // Node i's entries, bytes packed, and bytes compressed (0: held plain)
  // (DEBUG QUICKLIST; DropCache after).
  struct NodeStats {
    uint32_t count;
    size_t bytes;
    size_t compressed_bytes;
  };
  NodeStats StatsOf(uint32_t i) const;

  // Positions. REQUIRES for First/Last/Seek: size() > 0, index < size().
  Pos First() const;
  Pos Last() const;
  Pos Seek(size_t index) const;
  bool AtEnd(Pos pos) const { return pos.node == nodes(); }
  // The end: after the last item (Prev from it gives the last one).
  Pos EndPos() const { return {nodes(), 0}; }
  // The next position (possibly the end) / the previous one (false at the
  // first item).
  Pos Next(Pos pos) const;
  bool Prev(Pos* pos) const;
  // The item at `pos` (an integer formatted into `scratch`,
  // packed::kScratchSize bytes).
  std::string_view View(Pos pos, char* scratch) const;
  // Whether the item at `pos` equals `s` (integers compared as integers).
  bool Equals(Pos pos, const packed::Probe& probe) const;

  // Replaces the item at `pos` (LSET).
  void Set(Pos pos, std::string_view item, const ListLimits& limits);
  // Inserts `item` before or after the one at `pos` (LINSERT).
  void Insert(Pos pos, bool after, std::string_view item, const ListLimits& limits);
  // Removes the item at `pos`; returns the position of the one after it.
  Pos Erase(Pos pos);

  // Checks the structure (tests): counts, offsets, back-lengths, and which
  // nodes are compressed.
  bool Validate() const;

 private:
  struct Deque;
  ListNode* single() const { return static_cast<ListNode*>(ptr_); }
  Deque* deque() const { return static_cast<Deque*>(ptr_); }
  // Node i for a read: a compressed one as the list's plain copy.
  const ListNode* node(uint32_t i) const;
  const ListNode* NodeSlow(uint32_t i) const;
  // Node i's entries, compressed or not.
  uint32_t Count(uint32_t i) const;
  // Node i for a write: a compressed one is unpacked in place; an interior
  // one becomes the loose node (the one before it is compressed).
  ListNode* Touch(uint32_t i);
  ListNode* TouchSlow(uint32_t i);
  // The first entry of node i, or the end when i is past the last node.
  Pos StartOf(uint32_t i) const { return i < nodes() ? Pos{i, node(i)->begin} : EndPos(); }
  // Stores the plain node n as node i (whose old block it replaced).
  void set_node(uint32_t i, ListNode* n);
  void Release();
  void ToQuicklist(const ListLimits& limits);
  // Compression (quicklists only): whether node i is between the plain
  // ends; compress / unpack it in place; after a node came or went, the
  // nodes that crossed the depth boundary; the read copy dropped.
  bool Interior(uint32_t i) const;
  void CompressNode(uint32_t i);
  void UnpackNode(uint32_t i);
  void Rebalance();
  // Trim's first step: frees the nodes that go whole from `end` (at least
  // one node stays), lowering *count.
  void DropWholeNodes(End end, size_t* count);
  // Erase of the entry at `off` of node i (n: the node, touched).
  Pos EraseAt(uint32_t i, ListNode* n, uint32_t off);
  // Before a listpack takes `add_count` items of `add_bytes` bytes: converts
  // to a quicklist when the limit says so (Redis's
  // listTypeTryConversionAppend).
  void ConvertForGrowth(size_t add_bytes, size_t add_count, const ListLimits& limits);
  // Puts node `n` at index i of a quicklist / takes the one at i out.
  void InsertNode(uint32_t i, ListNode* n);
  void RemoveNode(uint32_t i);
  // Splits node i in two halves (a listpack becomes a quicklist first).
  void SplitNode(uint32_t i, const ListLimits& limits);
  // Splits node i of a quicklist after its first k entries.
  void SplitAfter(uint32_t i, uint32_t k);
  // Whether node i of a quicklist is a plain node (one item at or over
  // the threshold).
  bool IsPlain(uint32_t i, size_t threshold) const;
  // After a write to node i of a quicklist that added a large item or
  // joined a plain node: splits it so that each large item is alone, and
  // the rest by the limit.
  void SeparateLarge(uint32_t i, const ListLimits& limits);
  // After LSET or LINSERT wrote to node i: SeparateLarge where the write
  // involved a large item or a plain node (`large`), else SplitIfOver.
  void Reshape(uint32_t i, bool large, const ListLimits& limits);
  // After node i grew (it is plain): splits it if it passed the limit.
  void SplitIfOver(uint32_t i, const ListLimits& limits) {
    const ListNode* n = node(i);
    if (n->count >= 2 && ListNodeExceedsLimit(limits.fill, n->bytes(), n->count)) SplitNode(i, limits);
  }
  void set_encoding(Encoding e) { tag_ = static_cast<uint8_t>(kValueTag | static_cast<uint8_t>(e)); }
  void AddCount(int64_t delta);

  // 16 bytes laid out as a Value's (core/value.h): the pointer, then
  // unused bytes, the owner's byte (a key's access data) and the tag.
  void* ptr_ = nullptr;
  [[maybe_unused]] uint8_t unused_[6] = {};
  [[maybe_unused]] uint8_t spare_ = 0;  // the owner's byte: Value reads and writes it
  uint8_t tag_ = kValueTag;
};

static_assert(sizeof(ListObject) == 16);

}  // namespace peregrine
