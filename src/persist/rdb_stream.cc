// Streams in RDB files and DUMP payloads, as Redis 7 writes them
// (RDB_TYPE_STREAM_LISTPACKS_2 for version 10, so that Redis 7.0 loads what
// Peregrine writes; types 15, 19 and 21 are read): the nodes as listpacks
// keyed by their master ID, the metadata, then the consumer groups with
// their pending entries and consumers.
#include "persist/rdb_stream.h"

#include <vector>

#include "core/numbers.h"
#include "core/stream_groups.h"
#include "persist/rdb_blobs.h"
#include "persist/rdb_format.h"

namespace peregrine {
namespace {

std::string EncodeId(StreamID id) {
  std::string out(16, '\0');
  for (int i = 0; i < 8; i++) {
    out[static_cast<size_t>(i)] = static_cast<char>(id.ms >> (56 - 8 * i));
    out[static_cast<size_t>(8 + i)] = static_cast<char>(id.seq >> (56 - 8 * i));
  }
  return out;
}

StreamID DecodeId(const char* p) {
  StreamID id;
  for (int i = 0; i < 8; i++) {
    id.ms = id.ms << 8 | static_cast<uint8_t>(p[i]);
    id.seq = id.seq << 8 | static_cast<uint8_t>(p[8 + i]);
  }
  return id;
}

// A node as Redis's listpack: master entry (count, deleted, fields, 0),
// then each entry (flags, ms and seq differences, [fields], values,
// lp-count).
std::string NodeListpack(StreamID master, std::span<const std::string_view> master_fields, uint32_t live,
                         uint32_t deleted, std::span<const StreamObject::RawEntry> entries) {
  rdb::ListpackWriter lp;
  lp.AppendInt(live);
  lp.AppendInt(deleted);
  lp.AppendInt(static_cast<int64_t>(master_fields.size()));
  for (std::string_view f : master_fields) lp.AppendString(f);
  lp.AppendInt(0);
  for (const StreamObject::RawEntry& e : entries) {
    const bool same = e.flags & StreamObject::kFlagSameFields;
    lp.AppendInt(e.flags);
    lp.AppendInt(static_cast<int64_t>(e.id.ms - master.ms));
    lp.AppendInt(static_cast<int64_t>(e.id.seq - master.seq));
    if (!same) lp.AppendInt(static_cast<int64_t>(e.fields.size()));
    for (size_t i = 0; i < e.values.size(); i++) {
      if (!same) lp.AppendString(e.fields[i]);
      lp.AppendString(e.values[i]);
    }
    lp.AppendInt(static_cast<int64_t>(same ? e.values.size() + 3 : e.values.size() * 2 + 4));
  }
  return lp.Finish();
}

// The elements of a node's listpack, checked as Redis's deep integrity
// validation does, into entries for StreamObject::LoadNode.
bool ParseNode(RdbReader& r, StreamID master, const std::vector<std::string>& el,
               std::vector<std::string_view>* master_fields, std::vector<StreamObject::RawEntry>* entries) {
  const auto fail = [&] { return r.Fail("Stream listpack integrity check failed."); };
  size_t i = 0;
  const auto next_int = [&](int64_t* v) {
    if (i >= el.size()) return false;
    const std::string& s = el[i++];
    return ParseInt64(s, v);
  };
  int64_t count, deleted, nf;
  if (!next_int(&count) || !next_int(&deleted) || !next_int(&nf) || count < 0 || deleted < 0 || nf < 0 ||
      static_cast<uint64_t>(nf) > el.size())
    return fail();
  for (int64_t k = 0; k < nf; k++) {
    if (i >= el.size()) return fail();
    master_fields->push_back(el[i++]);
  }
  int64_t zero;
  if (!next_int(&zero) || zero != 0) return fail();
  int64_t live_seen = 0, deleted_seen = 0;
  while (i < el.size()) {
    StreamObject::RawEntry e;
    int64_t flags, dms, dseq;
    if (!next_int(&flags) || !next_int(&dms) || !next_int(&dseq) || (flags & ~int64_t{3}) != 0) return fail();
    e.flags = static_cast<uint8_t>(flags);
    e.id.ms = master.ms + static_cast<uint64_t>(dms);
    e.id.seq = master.seq + static_cast<uint64_t>(dseq);
    const bool same = flags & StreamObject::kFlagSameFields;
    int64_t n = nf;
    if (!same && (!next_int(&n) || n < 0)) return fail();
    if (static_cast<uint64_t>(n) > el.size()) return fail();
    for (int64_t k = 0; k < n; k++) {
      if (same) {
        e.fields.push_back((*master_fields)[static_cast<size_t>(k)]);
      } else {
        if (i >= el.size()) return fail();
        e.fields.push_back(el[i++]);
      }
      if (i >= el.size()) return fail();
      e.values.push_back(el[i++]);
    }
    int64_t lp_count;
    if (!next_int(&lp_count) || lp_count != (same ? n + 3 : n * 2 + 4)) return fail();
    (flags & StreamObject::kFlagDeleted ? deleted_seen : live_seen)++;
    entries->push_back(std::move(e));
  }
  if (live_seen != count || deleted_seen != deleted) return fail();
  return true;
}

}  // namespace

void WriteStream(RdbWriter& w, const StreamObject& s) {
  w.Len(s.nodes());
  s.ForEachNode([&](StreamID master, std::span<const std::string_view> fields, uint32_t live, uint32_t deleted,
                    std::span<const StreamObject::RawEntry> entries) {
    w.String(EncodeId(master));
    w.String(NodeListpack(master, fields, live, deleted, entries));
  });
  w.Len(s.size());
  w.Len(s.last_id().ms);
  w.Len(s.last_id().seq);
  w.Len(s.first_id().ms);
  w.Len(s.first_id().seq);
  w.Len(s.max_deleted_id().ms);
  w.Len(s.max_deleted_id().seq);
  w.Len(s.entries_added());
  const StreamGroups* groups = s.groups();
  w.Len(groups == nullptr ? 0 : groups->size());
  if (groups == nullptr) return;
  for (const auto& [name, g] : groups->all()) {
    w.String(name);
    w.Len(g->last_id.ms);
    w.Len(g->last_id.seq);
    w.Len(static_cast<uint64_t>(g->entries_read));  // -1 as Redis writes it
    w.Len(g->pel.size());
    for (const auto& [id, nack] : g->pel) {
      w.Raw(EncodeId(id));
      w.MillisTime(nack.delivery_time);
      w.Len(nack.delivery_count);
    }
    w.Len(g->consumers.size());
    for (const auto& [cname, c] : g->consumers) {
      w.String(cname);
      w.MillisTime(c->seen_time);
      w.Len(c->pending.size());
      for (const StreamID& id : c->pending) w.Raw(EncodeId(id));
    }
  }
}

RdbLoadStatus LoadStream(RdbReader& r, int type, Value* out) {
  StreamObject s;
  uint64_t nodes;
  if (!r.Len(&nodes)) return RdbLoadStatus::kError;
  std::string key, blob, err;
  std::vector<std::string> elements;
  std::vector<std::string_view> master_fields;
  std::vector<StreamObject::RawEntry> entries;
  for (uint64_t n = 0; n < nodes; n++) {
    if (!r.String(&key)) return RdbLoadStatus::kError;
    if (key.size() != 16) {
      r.Fail("Stream node key entry is not the size of a stream ID");
      return RdbLoadStatus::kError;
    }
    if (!r.String(&blob)) return RdbLoadStatus::kError;
    elements.clear();
    const bool ok = rdb::WalkListpack(
        blob,
        [&](const rdb::Element& e) {
          char scratch[24];
          elements.emplace_back(e.View(scratch));
          return true;
        },
        &err);
    if (!ok) {
      r.Fail("Stream listpack integrity check failed.");
      return RdbLoadStatus::kError;
    }
    if (elements.empty()) {
      r.Fail("Empty listpack inside stream");
      return RdbLoadStatus::kError;
    }
    const StreamID master = DecodeId(key.data());
    master_fields.clear();
    entries.clear();
    if (!ParseNode(r, master, elements, &master_fields, &entries)) return RdbLoadStatus::kError;
    if (!s.LoadNode(master, master_fields, entries)) {
      r.Fail("Stream listpack integrity check failed.");
      return RdbLoadStatus::kError;
    }
  }
  uint64_t length, last_ms, last_seq;
  if (!r.Len(&length) || !r.Len(&last_ms) || !r.Len(&last_seq)) return RdbLoadStatus::kError;
  s.SetLoadedLength(length);
  s.set_last_id({last_ms, last_seq});
  if (type >= rdb::kTypeStreamListpacks2) {
    uint64_t fms, fseq, dms, dseq, added;
    if (!r.Len(&fms) || !r.Len(&fseq) || !r.Len(&dms) || !r.Len(&dseq) || !r.Len(&added))
      return RdbLoadStatus::kError;
    s.set_first_id({fms, fseq});
    s.set_max_deleted_id({dms, dseq});
    s.set_entries_added(added);
  } else {
    s.set_entries_added(length);
    s.set_first_id(s.EdgeID(true, true));
  }
  // Checks Redis leaves to deep sanitization, needed here: the length is
  // the live entries', and no entry is above the last ID (XADD's next ID
  // would then go backwards).
  if (s.CountLive() != length || (s.nodes() > 0 && s.last_id() < s.EdgeID(false, false))) {
    r.Fail("Stream length inconsistent with rax entries");
    return RdbLoadStatus::kError;
  }
  if (length == 0) s.set_first_id({});
  uint64_t ngroups;
  if (!r.Len(&ngroups)) return RdbLoadStatus::kError;
  for (uint64_t gi = 0; gi < ngroups; gi++) {
    std::string name;
    uint64_t ms, seq;
    if (!r.String(&name) || !r.Len(&ms) || !r.Len(&seq)) return RdbLoadStatus::kError;
    int64_t entries_read = kStreamEntriesReadInvalid;
    if (type >= rdb::kTypeStreamListpacks2) {
      uint64_t v;
      if (!r.Len(&v)) return RdbLoadStatus::kError;
      entries_read = static_cast<int64_t>(v);
    }
    StreamGroup* g = s.mutable_groups().Add(name, {ms, seq}, entries_read);
    if (g == nullptr) {
      r.Fail("Duplicated consumer group name " + name);
      return RdbLoadStatus::kError;
    }
    uint64_t pel;
    if (!r.Len(&pel)) return RdbLoadStatus::kError;
    for (uint64_t k = 0; k < pel; k++) {
      const char* raw;
      StreamNack nack;
      uint64_t count;
      if (!r.Bytes(16, &raw) || !r.MillisTime(&nack.delivery_time) || !r.Len(&count)) return RdbLoadStatus::kError;
      nack.delivery_count = count;
      if (!g->pel.emplace(DecodeId(raw), nack).second) {
        r.Fail("Duplicated global PEL entry loading stream consumer group");
        return RdbLoadStatus::kError;
      }
    }
    uint64_t consumers;
    if (!r.Len(&consumers)) return RdbLoadStatus::kError;
    for (uint64_t c = 0; c < consumers; c++) {
      std::string cname;
      int64_t seen;
      if (!r.String(&cname) || !r.MillisTime(&seen)) return RdbLoadStatus::kError;
      StreamConsumer* consumer = g->AddConsumer(cname, seen);
      if (consumer == nullptr) {
        r.Fail("Duplicate stream consumer detected.");
        return RdbLoadStatus::kError;
      }
      consumer->active_time = seen;
      if (type >= rdb::kTypeStreamListpacks3 && !r.MillisTime(&consumer->active_time)) return RdbLoadStatus::kError;
      uint64_t own;
      if (!r.Len(&own)) return RdbLoadStatus::kError;
      for (uint64_t k = 0; k < own; k++) {
        const char* raw;
        if (!r.Bytes(16, &raw)) return RdbLoadStatus::kError;
        const StreamID id = DecodeId(raw);
        auto it = g->pel.find(id);
        if (it == g->pel.end()) {
          r.Fail("Consumer entry not found in group global PEL");
          return RdbLoadStatus::kError;
        }
        if (it->second.consumer != nullptr || !consumer->pending.insert(id).second) {
          r.Fail("Duplicated consumer PEL entry  loading a stream consumer group");
          return RdbLoadStatus::kError;
        }
        it->second.consumer = consumer;
      }
    }
    // Every pending entry has an owner (Redis checks it in deep
    // sanitization; an owner-less one would break XPENDING and XCLAIM).
    for (const auto& [id, nack] : g->pel) {
      if (nack.consumer == nullptr) {
        r.Fail("Stream CG PEL entry without consumer");
        return RdbLoadStatus::kError;
      }
    }
  }
  *out = Value(StreamValue(std::move(s)));
  return RdbLoadStatus::kOk;
}

}  // namespace peregrine
