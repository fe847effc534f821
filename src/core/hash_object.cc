// Hashes in two encodings (see hash_object.h).
#include "core/hash_object.h"

#include <new>

#include "core/lazy_free.h"
#include "core/memory.h"

namespace peregrine {

namespace {

PackedTable* NewTable() { return new (CountedAlloc(sizeof(PackedTable))) PackedTable(2); }

}  // namespace

HashObject::HashObject() : ptr_(Page::Create(2, 0)) {}

void HashObject::Release() {
  if (ptr_ == nullptr) return;
  if (encoding() == Encoding::kListpack) {
    Page::Destroy(page());
  } else {
    lazy_free::FreeTable(table());
  }
  ptr_ = nullptr;
}

HashObject HashObject::Clone() const {
  HashObject copy;
  if (encoding() == Encoding::kHashtable) copy.ConvertToHashtable();
  const HashLimits unlimited{Page::kMaxCount, ~size_t{0}};
  ForEach([&](std::string_view f, std::string_view v) { copy.Set(f, v, unlimited); });
  return copy;
}

size_t HashObject::AllocatedBytes() const {
  if (encoding() == Encoding::kListpack) return page()->AllocatedBytes();
  return CountedUsableSize(ptr_) + table()->AllocatedBytes();
}

bool HashObject::Get(std::string_view field, std::string_view* value, char* scratch) const {
  const packed::Probe probe(field);
  if (encoding() == Encoding::kListpack) {
    Page::Pos pos;
    if (!page()->Find(probe, &pos)) return false;
    *value = packed::View(Page::ItemOf(page()->EntryAt(pos), 1), scratch);
    return true;
  }
  PackedTable::Ref ref;
  if (!table()->Find(probe, &ref)) return false;
  *value = packed::View(ref.item(1), scratch);
  return true;
}

void HashObject::ConvertToHashtable() {
  if (encoding() == Encoding::kHashtable) return;
  PackedTable* t = NewTable();
  Page* p = page();
  char scratch[packed::kScratchSize];
  // The entries move as they are (long strings' blocks change owner).
  for (const uint8_t *e = p->entries(), *end = e + p->used; e < end;) {
    const size_t size = p->EntrySize(e);
    t->InsertRaw(packed::Hash(packed::View(Page::ItemOf(e, 0), scratch)), e, size);
    e += size;
  }
  Page::FreeBlock(p);
  ptr_ = t;
  set_encoding(Encoding::kHashtable);
}

bool HashObject::Set(std::string_view field, std::string_view value, const HashLimits& limits) {
  if (encoding() == Encoding::kListpack &&
      (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value))
    ConvertToHashtable();
  const packed::Probe probe(field);
  const packed::ItemPlan items[2] = {packed::ItemPlan(field, probe), packed::ItemPlan(value)};
  if (encoding() == Encoding::kListpack) {
    Page::Pos pos;
    if (page()->Find(probe, &pos)) {
      ptr_ = Page::ReplaceItem(page(), pos, 1, items[1]);
      return false;
    }
    if (page()->count < Page::kMaxCount) {
      ptr_ = Page::Append(page(), probe.tag(), items);
      if (page()->count > limits.max_listpack_entries) ConvertToHashtable();
      return true;
    }
    ConvertToHashtable();
  }
  PackedTable::Ref ref;
  if (table()->Find(probe, &ref)) {
    table()->ReplaceItem(&ref, 1, items[1]);
    return false;
  }
  table()->Insert(probe, items);
  return true;
}

bool HashObject::Delete(std::string_view field) {
  const packed::Probe probe(field);
  if (encoding() == Encoding::kListpack) {
    Page::Pos pos;
    if (!page()->Find(probe, &pos)) return false;
    page()->Erase(pos);
    ptr_ = Page::Shrink(page());
    return true;
  }
  PackedTable::Ref ref;
  if (!table()->Find(probe, &ref)) return false;
  table()->Erase(ref);
  return true;
}

void HashObject::Random(std::mt19937_64& rng, std::string_view* field, std::string_view* value, char* scratch0,
                        char* scratch1) const {
  const uint8_t* e;
  if (encoding() == Encoding::kListpack) {
    e = page()->EntryAt(page()->PosOf(static_cast<uint32_t>(rng() % page()->count)));
  } else {
    e = table()->Random(rng).entry();
  }
  *field = packed::View(Page::ItemOf(e, 0), scratch0);
  *value = packed::View(Page::ItemOf(e, 1), scratch1);
}

}  // namespace peregrine
