// The keyspace table's storage (core/db.h's Db derives from DbLayout): the
// entries that hold the keys, the index groups, arenas, segments and
// directory entries, and the static functions that address them and work on
// one segment. Db names Entry and TtlEntry as Db::Entry and Db::TtlEntry;
// the rest is for Db's own code (src/core/db*.cc).
//
// Layout (docs/storage.md has the diagram and the measurements):
//
//   directory[2^D] ──► Segment (extendible hashing: a segment of local depth d
//                      holds the keys whose hash starts with its d-bit prefix)
//     index:  Group[n], each one cache line: 21 control bytes (0 = empty,
//             else 8 hash bits), an overflow count, 21 two-byte refs
//     arenas: Entry[] (key + value, 32 bytes) and TtlEntry[] (+ deadline,
//             40 bytes), dense, in chunks of 64 entries (one allocator size
//             class each, so growth frees nothing and fragments nothing),
//             with freed slots on a free list
//
// A lookup reads the directory and the segment header (both small and hot),
// one group (a miss), and one entry (a miss): the key is compared in place.
// A key's home group is picked by the 16 hash bits just below its segment's
// prefix, so the table is ordered by hash from segment to segment and group
// to group; SCAN's cursor is a position in that order, which splits and
// resizes do not change (see Db::Scan).
//
// Growth never touches more than one segment: a full segment first grows its
// index (by 1/4), and at its largest size splits in two (~1,200 keys, tens of
// microseconds). Deletion needs no tombstones: a group's overflow count says
// whether a probe must go on past it (as Folly's F14).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/compact_key.h"
#include "core/value.h"

namespace peregrine {

// No data members: as Db's base it adds nothing to Db's size or layout.
class DbLayout {
 public:
  // One key: its CompactKey and value, in an arena of its segment. Keys with
  // a deadline live in the TTL arena, whose entries are followed by it.
  struct Entry {
    CompactKey key_;  // the table's (flags: kFlagTtl)
    Value value;

    // The key's bytes; a packed key is unpacked into `scratch`
    // (CompactKey::kScratchSize bytes), which must outlive the view.
    std::string_view key(char* scratch) const { return key_.View(scratch); }
    std::string key_string() const { return key_.ToString(); }
    bool has_expire() const { return (key_.flags() & CompactKey::kFlagTtl) != 0; }
    // The absolute unix time in ms, or Db::kNoExpire.
    int64_t expire_ms() const;
  };
  struct TtlEntry {
    Entry entry;
    int64_t expire_ms;
  };
  static_assert(sizeof(Entry) == 32 && sizeof(TtlEntry) == 40);

 protected:
  DbLayout() = default;
  ~DbLayout() = default;

  static constexpr int kGroupSlots = 21;
  struct alignas(64) Group {
    uint8_t ctrl[kGroupSlots];  // 0 = empty, else the tag (Tag())
    uint8_t overflow;           // keys whose probe went past this group (saturates)
    uint16_t ref[kGroupSlots];  // see kRef*
  };
  static_assert(sizeof(Group) == 64);

  // A ref names an arena slot: the index, the arena, and SIEVE's visited bit.
  static constexpr uint16_t kRefIndex = 0x1FFF;
  static constexpr uint16_t kRefTtl = 0x2000;
  static constexpr uint16_t kRefVisited = 0x4000;
  static constexpr uint32_t kNoFree = 0xFFFFFFFF;

  // A segment's index has at most kMaxGroups groups (then it splits), so an
  // arena holds at most Capacity(kMaxGroups) = 1,176 entries: 19 chunks.
  static constexpr uint32_t kMaxGroups = 64;
  // Segments (of ~600-1,200 keys, 384-byte headers) above which a lookup
  // prefetches its segment's chunk table: 1.5 MB of headers, past the L2
  // cache of this machine (1 MB per core), about 3.5M keys.
  static constexpr size_t kPrefetchHeadersAbove = 4096;
  static constexpr uint32_t kChunkShift = 6;
  static constexpr uint32_t kChunkEntries = 1u << kChunkShift;
  static constexpr uint32_t kMaxChunks = (kMaxGroups * kGroupSlots * 7 / 8 + kChunkEntries - 1) / kChunkEntries;

  template <typename E>
  struct Arena {
    E* chunks[kMaxChunks] = {};
    uint32_t size = 0;  // slots in use, holes included
    uint32_t free_head = kNoFree;
    uint32_t holes = 0;
    uint32_t live() const { return size - holes; }
    uint32_t nchunks() const { return (size + kChunkEntries - 1) >> kChunkShift; }
    E& at(uint32_t i) const { return chunks[i >> kChunkShift][i & (kChunkEntries - 1)]; }
  };

  // The plain arena's chunk table comes first: a lookup reads the line that
  // holds its entry's chunk pointer (and the directory, not this header,
  // for the index).
  struct alignas(64) Segment {
    Arena<Entry> plain;
    Arena<TtlEntry> ttl;
    Group* groups = nullptr;
    uint32_t ngroups = 0;
    uint32_t live = 0;   // keys in the segment
    uint8_t depth = 0;   // local depth
    uint32_t saved_epoch = 0;  // the last snapshot that has this segment's keys
  };

  // A directory entry: the segment and a copy of what a lookup needs to find
  // the home group (the index and its size, the segment's depth), so that a
  // lookup reads the directory line and then the group, not the header.
  struct DirEntry {
    uint64_t bits = 0;  // Group* | ngroups << 48 | depth << 56
    Segment* seg_ = nullptr;  // untagged, so leak checkers see the segment
    Segment* seg() const { return seg_; }
    Group* groups() const { return reinterpret_cast<Group*>(bits & ((uint64_t{1} << 48) - 1)); }
    uint32_t ngroups() const { return static_cast<uint32_t>((bits >> 48) & 0xFF); }
    int depth() const { return static_cast<int>(bits >> 56); }
    static DirEntry Of(Segment* s) {
      return {reinterpret_cast<uint64_t>(s->groups) | (uint64_t{s->ngroups} << 48) | (uint64_t{s->depth} << 56), s};
    }
  };
  static_assert(kMaxGroups < 256);

  // Where a key is in the index, with its ref and entry (a search has them
  // at hand; callers use them rather than find them again).
  struct Slot {
    Slot() = default;
    Slot(Segment* s, uint32_t g, int i, Entry* e, uint16_t* r) : seg(s), group(g), slot(i), entry(e), ref(r) {}
    Segment* seg = nullptr;
    uint32_t group = 0;
    int slot = -1;
    Entry* entry = nullptr;  // where *ref points
    uint16_t* ref = nullptr;
    bool found() const { return slot >= 0; }
  };

  static uint32_t HomeGroup(uint64_t hash, int depth, uint32_t ngroups) {
    const uint64_t field = (hash << depth) >> 48;
    return static_cast<uint32_t>((field * ngroups) >> 16);
  }
  static uint32_t HomeGroup(uint64_t hash, const Segment* s) { return HomeGroup(hash, s->depth, s->ngroups); }
  // Hash bits 24..31, with 0 (an empty slot) folded onto 1: a lookup
  // compares a key in vain for 1 in ~255 occupied slots it passes.
  static uint8_t Tag(uint64_t hash) {
    const uint8_t t = static_cast<uint8_t>(hash >> 24);
    return static_cast<uint8_t>(t + (t == 0));
  }
  static uint32_t MatchTag(const Group& g, uint8_t tag);
  static uint32_t MatchEmpty(const Group& g) { return MatchTag(g, 0); }
  static constexpr uint32_t Capacity(uint32_t ngroups) { return ngroups * kGroupSlots * 7 / 8; }

  static Entry* EntryAt(const Segment* s, uint16_t ref) {
    const uint32_t i = ref & kRefIndex;
    return (ref & kRefTtl) ? &s->ttl.at(i).entry : &s->plain.at(i);
  }

  // Puts `ref` into the index of `s` for a key with hash `h` (there must be room).
  static void IndexInsert(Segment* s, uint64_t h, uint16_t ref);
  // Takes an arena slot (a hole, or the end, adding a chunk if needed).
  template <typename E>
  static uint32_t ArenaTake(Arena<E>& a);
  // Frees a slot whose entry was destroyed or moved: it becomes a hole, or
  // the arena shrinks (and frees its last chunk) if it was the last slot.
  template <typename E>
  static void ArenaRelease(Arena<E>& a, uint32_t i);
  template <typename E>
  static void ArenaFree(Arena<E>& a);
  static uint32_t GroupsFor(uint32_t keys);
  // Calls fn(Entry&) for each key of `s` (of its TTL arena only if
  // ttl_only) until fn returns false; returns false if it stopped early.
  template <typename Fn>
  static bool ForEachLive(const Segment* s, bool ttl_only, Fn&& fn);
  // The first hash of the segment after `s` (0 after the last).
  static uint64_t SegmentEnd(uint64_t hash_in_s, const Segment* s);
};

}  // namespace peregrine
