// ZSetObject: a sorted set in the encoding Redis 7.2 would pick, with the
// same conversions: one ZLeaf (core/zset_leaf.h, Redis's "listpack") while
// there are at most zset-max-listpack-entries members of at most
// zset-max-listpack-value bytes; beyond, a ZTree of leaves (ranks and
// ranges) and a ZIndex (member -> score without a second copy of the
// member), which OBJECT ENCODING calls "skiplist" as Redis does. A set
// converts back to a leaf only where Redis does (a Z*STORE result).
//
// Positions (Pos) walk both encodings alike: a listpack's position is its
// one leaf, an offset and an index (its rank). The commands
// (commands/zset_commands.cc) hold one per sorted set key. Not thread-safe, like
// everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/packed.h"
#include "core/zset_index.h"
#include "core/zset_leaf.h"
#include "core/zset_tree.h"

namespace peregrine {

// The zset-max-* directives.
struct ZSetLimits {
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;
};

class ZSetObject {
 public:
  // The tag byte of a Value holding one (core/value.h): 0x80 | type << 3,
  // the encoding in the low bits.
  static constexpr uint8_t kValueTag = 0x98;
  enum class Encoding : uint8_t { kListpack, kSkiplist };

  // An empty sorted set in the encoding Redis 7.2's zsetTypeCreate picks for
  // `size_hint` members of about `value_len_hint` bytes.
  static ZSetObject Create(size_t size_hint, size_t value_len_hint, const ZSetLimits& limits);
  ~ZSetObject() { Release(); }
  ZSetObject(ZSetObject&& other) noexcept : ptr_(other.ptr_), tag_(other.tag_) { other.ptr_ = nullptr; }
  // The old contents leave with `other` (freed by its destructor).
  ZSetObject& operator=(ZSetObject&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(tag_, other.tag_);
    return *this;
  }
  ZSetObject(const ZSetObject&) = delete;
  ZSetObject& operator=(const ZSetObject&) = delete;
  // A deep copy (COPY), in the same encoding.
  ZSetObject Clone() const;

  Encoding encoding() const { return static_cast<Encoding>(tag_ & 7); }
  // OBJECT ENCODING's name.
  std::string_view EncodingName() const { return encoding() == Encoding::kListpack ? "listpack" : "skiplist"; }
  size_t size() const { return encoding() == Encoding::kListpack ? leaf()->count : big()->tree.size(); }
  // Bytes allocated for the set (MEMORY USAGE); O(leaves).
  size_t AllocatedBytes() const;

  // ZADD's options (Redis's ZADD_IN_*).
  enum AddFlags : int { kNx = 1, kXx = 2, kGt = 4, kLt = 8, kIncr = 16 };
  // What Add did (Redis's ZADD_OUT_*): kNone when the member kept the score
  // it had (an INCR by 0 still replies the score).
  enum class AddResult : uint8_t { kNaN, kAdded, kUpdated, kNop, kNone };
  // Redis's zsetAdd: adds `member` or changes its score as `flags` say;
  // *newscore is the member's score after (for kAdded, kUpdated, kNone).
  // Converts to a tree first when the limits say so.
  AddResult Add(double score, std::string_view member, int flags, const ZSetLimits& limits, double* newscore);
  // The member's score; false if it is not here.
  bool Score(std::string_view member, double* score) const;
  // Removes `member`; returns whether it was there.
  bool Remove(std::string_view member);
  // The member's 0-based rank (from the lowest) and score; false if absent.
  bool Rank(std::string_view member, uint64_t* rank, double* score) const;

  // ZADD's conversion before it adds `size_hint` members (Redis 7.2's
  // zsetTypeMaybeConvert).
  void MaybeConvert(size_t size_hint, const ZSetLimits& limits);
  // Whether the member -> score table is being resized (core/zset_index.h:
  // a few members move with each write); StepMove moves up to `members`
  // more (between events: a set nobody writes to would otherwise keep
  // both tables) and returns whether the move goes on.
  bool moving() const { return encoding() == Encoding::kSkiplist && big()->index.moving(); }
  bool StepMove(size_t members) { return moving() && !big()->Step(members); }
  // Whether a move under way is yet to be handed to the database's list of
  // moves to go on with (Db::NoteZSetMove); true once a move.
  bool TakeMoveNote() {
    if (!moving() || big()->noted) return false;
    big()->noted = true;
    return true;
  }

  // A Z*STORE result small enough becomes a leaf again (Redis's
  // zsetConvertToListpackIfNeeded); `max_member` is its longest member.
  void ConvertToListpackIfNeeded(size_t max_member, const ZSetLimits& limits);
  // SORT's zsetConvert: a listpack becomes a skiplist (Redis's SORT and
  // SORT_RO do it to any sorted set they read, which OBJECT ENCODING shows).
  void ConvertToSkiplist() {
    if (encoding() == Encoding::kListpack) ToSkiplist();
  }

  // Positions (see the top). Any write invalidates them.
  using Pos = ZTree::Pos;
  // The entry at rank r (invalid when r >= size()).
  Pos AtRank(uint64_t r) const;
  // The first entry with score >= min (> min when exclusive).
  Pos LowerBoundScore(double min, bool exclusive) const;
  // The last entry with score <= max (< max when exclusive).
  Pos UpperBoundScore(double max, bool exclusive) const;
  // The first entry whose member is >= min (> min), and the last whose
  // member is <= max (< max): ZRANGEBYLEX's order, members only.
  Pos LowerBoundLex(std::string_view min, bool exclusive) const;
  Pos UpperBoundLex(std::string_view max, bool exclusive) const;
  // The next / previous entry; false (and an invalid position) past the
  // ends.
  bool Next(Pos* pos) const;
  bool Prev(Pos* pos) const;
  static double ScoreAt(const Pos& pos) { return pos.leaf->ScoreAt(pos.off); }
  // The member's string form (an integer formatted into `scratch`,
  // packed::kScratchSize bytes).
  static std::string_view MemberAt(const Pos& pos, char* scratch) { return pos.leaf->MemberAt(pos.off, scratch); }

  // Removes the `count` entries from rank `start` on.
  void EraseRanks(uint64_t start, uint64_t count);

  // Calls f(member, score) for every entry in order.
  template <typename F>
  void ForEach(F&& f) const {
    char scratch[packed::kScratchSize];
    if (size() == 0) return;
    Pos p = AtRank(0);
    do f(MemberAt(p, scratch), ScoreAt(p));
    while (Next(&p));
  }

  // Checks the structure (tests).
  bool Validate() const;

 private:
  struct Big {
    ZTree tree;
    ZIndex index;
    // While the index moves to a new table: the members before (cursor_score,
    // cursor_member) in the tree's order are there too (none before the
    // first step).
    bool cursor_set = false;
    double cursor_score = 0;
    std::string cursor_member;
    bool noted = false;  // on a database's list of moves (TakeMoveNote)

    bool Moved(double score, std::string_view member) const {
      return cursor_set && CompareZKey(score, member, cursor_score, cursor_member) < 0;
    }
    // Before a new member goes in: steps the move, or starts one (a set
    // of a few thousand moves at once).
    void BeforeInsert();
    // After a write: steps the move, or after a removal starts a shrink.
    void AfterWrite(bool removed);
    void StartMove(uint64_t groups);
    // Moves up to `members` members on; true once the move is over.
    bool Step(size_t members);
  };
  ZLeaf* leaf() const { return static_cast<ZLeaf*>(ptr_); }
  Big* big() const { return static_cast<Big*>(ptr_); }
  void Release();
  void ToSkiplist();
  void ToListpack();
  // Confirms an index candidate: whether (score, member) is in the tree.
  bool InTree(double score, std::string_view member) const { return big()->tree.Find(score, member); }
  ZSetObject() = default;

  void set_encoding(Encoding e) { tag_ = static_cast<uint8_t>(kValueTag | static_cast<uint8_t>(e)); }

  // 16 bytes laid out as a Value's (core/value.h): the pointer, then
  // unused bytes, the owner's byte (a key's access data) and the tag
  // (kValueTag | encoding).
  void* ptr_ = nullptr;
  [[maybe_unused]] uint8_t unused_[6] = {};
  [[maybe_unused]] uint8_t spare_ = 0;  // the owner's byte: Value reads and writes it
  uint8_t tag_ = kValueTag;
};

static_assert(sizeof(ZSetObject) == 16);

}  // namespace peregrine
