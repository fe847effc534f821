// Sets in three encodings (see set_object.h).
#include "core/set_object.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/lazy_free.h"
#include "core/memory.h"
#include "core/numbers.h"

namespace peregrine {

namespace {

using packed::AsInt;

// Digits (and sign) of an integer's decimal form.
size_t DecimalLength(int64_t v) {
  char buf[24];
  return FormatInt64(v, buf);
}

PackedTable* NewTable() { return new (CountedAlloc(sizeof(PackedTable))) PackedTable(1); }

}  // namespace

SetObject::SetObject(std::string_view first, size_t hint, const SetLimits& limits) {
  int64_t v;
  if (AsInt(first, &v) && hint <= limits.max_intset_entries) {
    ptr_ = IntSet::Create(static_cast<uint32_t>(hint < 64 ? hint : 64));
    set_encoding(Encoding::kIntSet);
  } else if (hint <= limits.max_listpack_entries) {
    // Room for `hint` members of the first one's length (exact when they
    // are alike), no longer than a listpack member may be: a longer first
    // member converts the set when it is added.
    const size_t member = std::min(first.size(), limits.max_listpack_value);
    ptr_ = Page::Create(1, 0, hint, hint * (member + 1));
    set_encoding(Encoding::kListpack);
  } else {
    ptr_ = NewTable();
    set_encoding(Encoding::kHashtable);
  }
}

SetObject SetObject::Sized(size_t hint, const SetLimits& limits) {
  SetObject s;
  if (hint <= limits.max_listpack_entries) {
    s.ptr_ = Page::Create(1, 0, hint, hint * 8);
    s.set_encoding(Encoding::kListpack);
  } else {
    s.ptr_ = NewTable();
    s.set_encoding(Encoding::kHashtable);
  }
  return s;
}

void SetObject::MaybeConvert(size_t hint, const SetLimits& limits) {
  if ((encoding() == Encoding::kListpack && hint > limits.max_listpack_entries) ||
      (encoding() == Encoding::kIntSet && hint > limits.max_intset_entries))
    ToHashtable();
}

void SetObject::MaybeConvertToIntSet(const SetLimits& limits) {
  if (encoding() == Encoding::kIntSet || size() > limits.max_intset_entries) return;
  bool all_ints = true;
  int64_t v;
  ForEach([&](std::string_view m) { all_ints = all_ints && AsInt(m, &v); });
  if (!all_ints) return;
  IntSet* s = IntSet::Create(static_cast<uint32_t>(size()));
  bool added;
  ForEach([&](std::string_view m) {
    AsInt(m, &v);
    s = IntSet::Add(s, v, &added);
  });
  Release();
  ptr_ = s;
  set_encoding(Encoding::kIntSet);
}

void SetObject::Release() {
  if (ptr_ == nullptr) return;
  switch (encoding()) {
    case Encoding::kIntSet: IntSet::Destroy(intset()); break;
    case Encoding::kListpack: Page::Destroy(page()); break;
    case Encoding::kHashtable: lazy_free::FreeTable(table()); break;
  }
  ptr_ = nullptr;
}

SetObject SetObject::Clone() const {
  SetObject copy;
  copy.tag_ = tag_;
  switch (encoding()) {
    case Encoding::kIntSet: {
      const size_t n = sizeof(IntSet) + size_t{intset()->count} * intset()->width;
      copy.ptr_ = CountedAlloc(n);
      std::memcpy(copy.ptr_, ptr_, n);
      break;
    }
    case Encoding::kListpack: {
      Page* p = Page::Create(1, 0, page()->count, page()->used);
      ForEach([&](std::string_view m) {
        packed::Probe probe(m);
        packed::ItemPlan item(m, probe);
        p = Page::Append(p, probe.tag(), &item);
      });
      copy.ptr_ = p;
      break;
    }
    case Encoding::kHashtable: {
      PackedTable* t = NewTable();
      ForEach([&](std::string_view m) {
        packed::Probe probe(m);
        packed::ItemPlan item(m, probe);
        t->Insert(probe, &item);
      });
      copy.ptr_ = t;
      break;
    }
  }
  return copy;
}

std::string_view SetObject::EncodingName() const {
  switch (encoding()) {
    case Encoding::kIntSet: return "intset";
    case Encoding::kListpack: return "listpack";
    case Encoding::kHashtable: return "hashtable";
  }
  return "hashtable";
}

size_t SetObject::size() const {
  switch (encoding()) {
    case Encoding::kIntSet: return intset()->size();
    case Encoding::kListpack: return page()->count;
    case Encoding::kHashtable: return table()->size();
  }
  return 0;
}

size_t SetObject::AllocatedBytes() const {
  switch (encoding()) {
    case Encoding::kIntSet: return intset()->AllocatedBytes();
    case Encoding::kListpack: return page()->AllocatedBytes();
    case Encoding::kHashtable: return CountedUsableSize(ptr_) + table()->AllocatedBytes();
  }
  return 0;
}

std::string_view SetObject::FormatMember(int64_t v, char* scratch) { return {scratch, FormatInt64(v, scratch)}; }

bool SetObject::Contains(std::string_view member) const {
  switch (encoding()) {
    case Encoding::kIntSet: {
      int64_t v;
      return AsInt(member, &v) && intset()->Contains(v);
    }
    case Encoding::kListpack: {
      Page::Pos pos;
      return page()->Find(packed::Probe(member), &pos);
    }
    case Encoding::kHashtable: {
      PackedTable::Ref ref;
      return table()->Find(packed::Probe(member), &ref);
    }
  }
  return false;
}

void SetObject::IntSetToListpack(size_t extra) {
  IntSet* s = intset();
  Page* p = Page::Create(1, 0, s->size() + extra, (s->size() + extra) * 9);
  char scratch[packed::kScratchSize];
  for (uint32_t i = 0; i < s->size(); ++i) {
    const std::string_view m = FormatMember(s->At(i), scratch);
    packed::Probe probe(m);
    packed::ItemPlan item(m, probe);
    p = Page::Append(p, probe.tag(), &item);
  }
  IntSet::Destroy(s);
  ptr_ = p;
  set_encoding(Encoding::kListpack);
}

void SetObject::ToHashtable() {
  PackedTable* t = NewTable();
  if (encoding() == Encoding::kIntSet) {
    ForEach([&](std::string_view m) {
      packed::Probe probe(m);
      packed::ItemPlan item(m, probe);
      t->Insert(probe, &item);
    });
    IntSet::Destroy(intset());
  } else {
    // The entries move as they are (long members' blocks change owner).
    Page* p = page();
    char scratch[packed::kScratchSize];
    for (const uint8_t *e = p->entries(), *end = e + p->used; e < end;) {
      const size_t size = p->EntrySize(e);
      t->InsertRaw(packed::Hash(packed::View(e, scratch)), e, size);
      e += size;
    }
    Page::FreeBlock(p);
  }
  ptr_ = t;
  set_encoding(Encoding::kHashtable);
}

bool SetObject::Add(std::string_view member, const SetLimits& limits) {
  if (encoding() == Encoding::kIntSet) {
    int64_t v;
    if (AsInt(member, &v)) {
      bool added;
      ptr_ = IntSet::Add(intset(), v, &added);
      if (added && intset()->size() > limits.max_intset_entries) ToHashtable();
      return added;
    }
    // A string: a listpack if everything fits, else a hashtable (Redis
    // 7.2's rule, with the integers' longest decimal form as their size).
    const IntSet* s = intset();
    const size_t longest = s->size() == 0 ? 0 : std::max(DecimalLength(s->At(0)), DecimalLength(s->At(s->size() - 1)));
    if (s->size() < limits.max_listpack_entries && member.size() <= limits.max_listpack_value &&
        longest <= limits.max_listpack_value && s->size() < Page::kMaxCount) {
      IntSetToListpack(1);
    } else {
      ToHashtable();
    }
  }
  packed::Probe probe(member);
  if (encoding() == Encoding::kListpack) {
    Page::Pos pos;
    if (page()->Find(probe, &pos)) return false;
    if (page()->count < limits.max_listpack_entries && member.size() <= limits.max_listpack_value &&
        page()->count < Page::kMaxCount) {
      packed::ItemPlan item(member, probe);
      ptr_ = Page::Append(page(), probe.tag(), &item);
      return true;
    }
    ToHashtable();
  }
  PackedTable::Ref ref;
  if (table()->Find(probe, &ref)) return false;
  packed::ItemPlan item(member, probe);
  table()->Insert(probe, &item);
  return true;
}

bool SetObject::Remove(std::string_view member) {
  switch (encoding()) {
    case Encoding::kIntSet: {
      int64_t v;
      bool removed = false;
      if (AsInt(member, &v)) ptr_ = IntSet::Remove(intset(), v, &removed);
      return removed;
    }
    case Encoding::kListpack: {
      Page::Pos pos;
      if (!page()->Find(packed::Probe(member), &pos)) return false;
      page()->Erase(pos);
      ptr_ = Page::Shrink(page());
      return true;
    }
    case Encoding::kHashtable: {
      PackedTable::Ref ref;
      if (!table()->Find(packed::Probe(member), &ref)) return false;
      table()->Erase(ref);
      return true;
    }
  }
  return false;
}

std::string_view SetObject::Random(std::mt19937_64& rng, char* scratch) const {
  switch (encoding()) {
    case Encoding::kIntSet:
      return FormatMember(intset()->At(static_cast<uint32_t>(rng() % intset()->size())), scratch);
    case Encoding::kListpack: {
      const Page* p = page();
      return packed::View(p->EntryAt(p->PosOf(static_cast<uint32_t>(rng() % p->count))), scratch);
    }
    case Encoding::kHashtable:
      break;
  }
  return packed::View(table()->Random(rng).entry(), scratch);
}

}  // namespace peregrine
