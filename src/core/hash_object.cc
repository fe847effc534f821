// Hashes in two encodings (see hash_object.h).
#include "core/hash_object.h"

#include <new>
#include <string>
#include <vector>

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
  ForEachEntry([&](const uint8_t* e) {
    char s0[packed::kScratchSize], s1[packed::kScratchSize];
    const std::string_view field = packed::View(Page::ItemOf(e, 0), s0);
    copy.Set(field, packed::View(Page::ItemOf(e, 1), s1), unlimited);
    const int64_t deadline = Page::DeadlineOfEntry(e);
    if (deadline != kNoDeadline) copy.SetDeadline(field, deadline);
  });
  if (tag_ & kExBit) copy.MarkFieldExpiry();
  return copy;
}

size_t HashObject::AllocatedBytes() const {
  if (encoding() == Encoding::kListpack) return page()->AllocatedBytes();
  return CountedUsableSize(ptr_) + table()->AllocatedBytes();
}

const uint8_t* HashObject::FindEntry(std::string_view field) const {
  const packed::Probe probe(field);
  if (encoding() == Encoding::kListpack) {
    Page::Pos pos;
    return page()->Find(probe, &pos) ? page()->EntryAt(pos) : nullptr;
  }
  PackedTable::Ref ref;
  return table()->Find(probe, &ref) ? ref.entry() : nullptr;
}

bool HashObject::Get(std::string_view field, std::string_view* value, char* scratch) const {
  const uint8_t* e = FindEntry(field);
  if (e == nullptr) return false;
  *value = packed::View(Page::ItemOf(e, 1), scratch);
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

bool HashObject::SetImpl(std::string_view field, std::string_view value, const HashLimits& limits,
                         bool keep_deadline) {
  if (encoding() == Encoding::kListpack &&
      (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value))
    ConvertToHashtable();
  const packed::Probe probe(field);
  const packed::ItemPlan items[2] = {packed::ItemPlan(field, probe), packed::ItemPlan(value)};
  if (encoding() == Encoding::kListpack) {
    Page::Pos pos;
    if (page()->Find(probe, &pos)) {
      // The deadline item leads the entry: removing it first keeps `pos`.
      if (!keep_deadline) ptr_ = Page::SetDeadline(page(), pos, kNoDeadline);
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
    if (!keep_deadline) table()->SetDeadline(&ref, kNoDeadline);
    table()->ReplaceItem(&ref, 1, items[1]);
    return false;
  }
  table()->Insert(probe, items);
  return true;
}

bool HashObject::GetDeadline(std::string_view field, int64_t* ms) const {
  const uint8_t* e = FindEntry(field);
  if (e == nullptr) return false;
  *ms = Page::DeadlineOfEntry(e);
  return true;
}

bool HashObject::SetDeadline(std::string_view field, int64_t ms) {
  const packed::Probe probe(field);
  if (encoding() == Encoding::kListpack) {
    Page::Pos pos;
    if (!page()->Find(probe, &pos)) return false;
    ptr_ = Page::SetDeadline(page(), pos, ms);
  } else {
    PackedTable::Ref ref;
    if (!table()->Find(probe, &ref)) return false;
    table()->SetDeadline(&ref, ms);
  }
  // A removed deadline leaves the bound low: the next ExpireFields() after
  // it makes the bound exact.
  if (ms != kNoDeadline) NoteDeadline(ms);
  return true;
}

size_t HashObject::ExpireFields(int64_t now_ms, std::vector<std::string>* names) {
  int64_t next = 0;
  auto keep = [&](int64_t d) {
    if (next == 0 || d < next) next = d;
  };
  size_t removed = 0;
  if (encoding() == Encoding::kListpack) {
    Page* p = page();
    for (Page::Pos pos; pos.index < p->count;) {
      const int64_t d = Page::DeadlineOfEntry(p->EntryAt(pos));
      if (d != kNoDeadline && d <= now_ms) {
        if (names != nullptr) {
          char scratch[packed::kScratchSize];
          names->emplace_back(packed::View(Page::ItemOf(p->EntryAt(pos), 0), scratch));
        }
        p->Erase(pos);  // the next entry moves to `pos`
        removed++;
        continue;
      }
      if (d != kNoDeadline) keep(d);
      pos = p->Next(pos);
    }
    if (removed > 0) ptr_ = Page::Shrink(p);
  } else {
    // Only pages whose bound has passed are looked at (PackedTable::
    // VisitDue). Erasing may merge pages: collect the fields first, then
    // delete them.
    std::vector<std::string> expired;
    table()->VisitDue(now_ms, [&](const uint8_t* e) {
      char scratch[packed::kScratchSize];
      expired.emplace_back(packed::View(Page::ItemOf(e, 0), scratch));
    });
    for (const std::string& f : expired) removed += Delete(f);
    if (names != nullptr) names->insert(names->end(), expired.begin(), expired.end());
    next = table()->MinDeadline();
  }
  set_min_deadline(next);
  return removed;
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
