// LoadRdbObject (see rdb_value.h): every value type and encoding Redis has
// written since 2.4, checked as Redis's rdbLoadObject checks them (with
// deep integrity validation always on: duplicates, NaN scores, malformed
// blobs), with Redis's error texts.
#include "persist/rdb_value.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/numbers.h"
#include "persist/rdb_blobs.h"
#include "persist/rdb_format.h"
#include "persist/rdb_stream.h"

namespace peregrine {
namespace {

// The largest field deadline Redis 7.4 accepts (EB_EXPIRE_TIME_MAX), which
// is also what a hash field can hold here (48 bits).
constexpr uint64_t kMaxFieldDeadline = (uint64_t{1} << 48) - 1;

// What a size claimed by the input may reserve: no more elements than
// there are bytes left, each taking one at least.
size_t Hint(const RdbReader& r, uint64_t claimed) { return static_cast<size_t>(std::min(claimed, r.remaining())); }

// Building each container, with the checks Redis makes as it loads.
struct ListBuild {
  const ListLimits& limits;
  ListObject list;
  void Add(std::string_view s) { list.Push(ListObject::End::kTail, s, limits); }
};

struct SetBuild {
  const SetLimits& limits;
  std::optional<SetObject> set;
  bool Add(RdbReader& r, std::string_view m, size_t hint) {
    if (!set) set.emplace(m, hint, limits);
    return set->Add(m, limits) || r.Fail("Duplicate set members detected");
  }
};

struct ZSetBuild {
  const ZSetLimits& limits;
  std::optional<ZSetObject> zset;
  bool Add(RdbReader& r, std::string_view m, double score, size_t hint) {
    if (std::isnan(score)) return r.Fail("Zset with NAN score detected");
    if (!zset) zset.emplace(ZSetObject::Create(hint, m.size(), limits));
    double ns;
    return zset->Add(score, m, 0, limits, &ns) == ZSetObject::AddResult::kAdded ||
           r.Fail("Duplicate zset fields detected");
  }
};

struct HashBuild {
  const HashLimits& limits;
  int64_t now_ms;
  HashObject hash;
  bool any_deadline = false;
  // Adds a field with its deadline (0: none); a field already past its
  // deadline is left out.
  bool Add(RdbReader& r, std::string_view f, std::string_view v, uint64_t deadline = 0) {
    if (deadline > kMaxFieldDeadline) return r.Fail("invalid expireAt time: " + std::to_string(deadline));
    if (deadline != 0 && static_cast<int64_t>(deadline) <= now_ms) {
      // Still a duplicate if the field comes again.
      return !hash.Delete(f) || r.Fail("Duplicate hash fields detected");
    }
    if (!hash.Set(f, v, limits)) return r.Fail("Duplicate hash fields detected");
    if (deadline != 0) {
      hash.SetDeadline(f, static_cast<int64_t>(deadline));
      any_deadline = true;
    }
    return true;
  }
  void Finish() {
    if (any_deadline) hash.MarkFieldExpiry();
  }
};

// The element count a listpack's or ziplist's header claims (a hint only:
// the walk counts them), 0 if it says it does not know.
size_t BlobCount(std::string_view blob, bool ziplist) {
  const size_t at = ziplist ? 8 : 4;
  if (blob.size() < at + 2) return 0;
  const size_t n = static_cast<uint8_t>(blob[at]) | static_cast<uint8_t>(blob[at + 1]) << 8;
  return n == 65535 ? 0 : n;
}

// A blob's elements in groups of `arity` (pairs for hashes and sorted
// sets): calls f(elements) for each group.
template <typename F>
bool WalkGroups(std::string_view blob, bool ziplist, size_t arity, std::string* err, F&& f) {
  rdb::Element group[3];
  char scratch[3][24];
  std::string_view views[3];
  size_t n = 0;
  auto each = [&](const rdb::Element& e) {
    group[n] = e;
    views[n] = e.View(scratch[n]);
    if (++n < arity) return true;
    n = 0;
    return f(group, views);
  };
  const bool ok = ziplist ? rdb::WalkZiplist(blob, each, err) : rdb::WalkListpack(blob, each, err);
  if (ok && n != 0) {
    *err = ziplist ? "Ziplist integrity check failed." : "Listpack integrity check failed.";
    return false;
  }
  return ok;
}

double ElementScore(const rdb::Element& e, std::string_view view, bool* ok) {
  if (e.is_int) return static_cast<double>(e.num);
  double d = 0;
  *ok = ParseDouble(view, &d);
  return d;
}

// A blob walker's error goes to the reader.
bool BlobOk(RdbReader& r, bool ok, const std::string& err) {
  if (!ok && r.ok()) r.Fail(err);
  return ok;
}

// The value a build made, or kEmpty if it holds nothing.
template <typename C>
RdbLoadStatus Emit(std::optional<C>& c, Value* out) {
  if (!c) return RdbLoadStatus::kEmpty;
  *out = Value(std::move(*c));
  return RdbLoadStatus::kOk;
}
RdbLoadStatus Emit(ListBuild& b, Value* out) {
  if (b.list.size() == 0) return RdbLoadStatus::kEmpty;
  *out = Value(std::move(b.list));
  return RdbLoadStatus::kOk;
}
RdbLoadStatus Emit(HashBuild& b, Value* out) {
  b.Finish();
  if (b.hash.size() == 0) return RdbLoadStatus::kEmpty;
  *out = Value(std::move(b.hash));
  return RdbLoadStatus::kOk;
}

RdbLoadStatus LoadList(RdbReader& r, int type, const ContainerLimits& limits, Value* out) {
  ListBuild b{limits.list, {}};
  std::string s, err;
  uint64_t len;
  if (!r.Len(&len)) return RdbLoadStatus::kError;
  if (type == rdb::kTypeList) {
    for (uint64_t i = 0; i < len; i++) {
      if (!r.String(&s)) return RdbLoadStatus::kError;
      b.Add(s);
    }
  } else {
    for (uint64_t i = 0; i < len; i++) {
      uint64_t container = rdb::kQuicklistPacked;
      if (type == rdb::kTypeListQuicklist2) {
        if (!r.Len(&container)) return RdbLoadStatus::kError;
        if (container != rdb::kQuicklistPacked && container != rdb::kQuicklistPlain)
          return r.Fail("Quicklist integrity check failed."), RdbLoadStatus::kError;
      }
      if (!r.String(&s)) return RdbLoadStatus::kError;
      if (s.empty()) return r.Fail("Quicklist integrity check failed."), RdbLoadStatus::kError;
      if (container == rdb::kQuicklistPlain) {
        b.Add(s);
        continue;
      }
      char scratch[24];
      auto add = [&](const rdb::Element& e) {
        b.Add(e.View(scratch));
        return true;
      };
      const bool ok = type == rdb::kTypeListQuicklist2 ? rdb::WalkListpack(s, add, &err) : rdb::WalkZiplist(s, add, &err);
      if (!BlobOk(r, ok, err)) return RdbLoadStatus::kError;
    }
  }
  return Emit(b, out);
}

}  // namespace

std::string RdbTypeName(int type) {
  switch (type) {
    case rdb::kTypeStreamListpacks:
    case rdb::kTypeStreamListpacks2:
    case rdb::kTypeStreamListpacks3:
      return "stream";
    case rdb::kTypeModulePreGa:
    case rdb::kTypeModule2:
      return "module";
  }
  return "type " + std::to_string(type);
}

RdbLoadStatus LoadRdbObject(RdbReader& r, int type, const ContainerLimits& limits, int64_t now_ms, Value* out) {
  std::string s, t, err;
  uint64_t len = 0;
  switch (type) {
    case rdb::kTypeString:
      if (!r.String(&s)) return RdbLoadStatus::kError;
      *out = Value::String(s);
      return RdbLoadStatus::kOk;

    case rdb::kTypeList:
    case rdb::kTypeListQuicklist:
    case rdb::kTypeListQuicklist2:
      return LoadList(r, type, limits, out);

    case rdb::kTypeListZiplist: {
      if (!r.String(&s)) return RdbLoadStatus::kError;
      ListBuild b{limits.list, {}};
      char scratch[24];
      const bool ok = rdb::WalkZiplist(
          s,
          [&](const rdb::Element& e) {
            b.Add(e.View(scratch));
            return true;
          },
          &err);
      if (!BlobOk(r, ok, err)) return RdbLoadStatus::kError;
      return Emit(b, out);
    }

    case rdb::kTypeSet: {
      if (!r.Len(&len)) return RdbLoadStatus::kError;
      SetBuild b{limits.set, {}};
      for (uint64_t i = 0; i < len; i++)
        if (!r.String(&s) || !b.Add(r, s, Hint(r, len))) return RdbLoadStatus::kError;
      return Emit(b.set, out);
    }

    case rdb::kTypeSetIntset:
    case rdb::kTypeSetListpack: {
      if (!r.String(&s)) return RdbLoadStatus::kError;
      SetBuild b{limits.set, {}};
      bool ok;
      if (type == rdb::kTypeSetIntset) {
        const uint8_t width = s.size() >= 8 ? static_cast<uint8_t>(s[0]) : 0;
        const size_t hint = width != 0 ? (s.size() - 8) / width : 0;
        char scratch[24];
        ok = rdb::WalkIntset(
            s, [&](int64_t v) { return b.Add(r, std::string_view(scratch, FormatInt64(v, scratch)), hint); }, &err);
      } else {
        char scratch[24];
        ok = rdb::WalkListpack(s, [&](const rdb::Element& e) { return b.Add(r, e.View(scratch), BlobCount(s, false)); },
                               &err);
      }
      if (!BlobOk(r, ok, err)) return RdbLoadStatus::kError;
      return Emit(b.set, out);
    }

    case rdb::kTypeZSet:
    case rdb::kTypeZSet2: {
      if (!r.Len(&len)) return RdbLoadStatus::kError;
      ZSetBuild b{limits.zset, {}};
      for (uint64_t i = 0; i < len; i++) {
        double score;
        if (!r.String(&s)) return RdbLoadStatus::kError;
        if (!(type == rdb::kTypeZSet2 ? r.BinaryDouble(&score) : r.StringDouble(&score))) return RdbLoadStatus::kError;
        if (!b.Add(r, s, score, Hint(r, len))) return RdbLoadStatus::kError;
      }
      return Emit(b.zset, out);
    }

    case rdb::kTypeZSetZiplist:
    case rdb::kTypeZSetListpack: {
      if (!r.String(&s)) return RdbLoadStatus::kError;
      ZSetBuild b{limits.zset, {}};
      const bool ok = WalkGroups(s, type == rdb::kTypeZSetZiplist, 2, &err,
                                 [&](const rdb::Element* e, const std::string_view* v) {
                                   bool parsed = true;
                                   const double score = ElementScore(e[1], v[1], &parsed);
                                   if (!parsed) return r.Fail("Zset listpack integrity check failed.");
                                   return b.Add(r, v[0], score, BlobCount(s, type == rdb::kTypeZSetZiplist) / 2);
                                 });
      if (!BlobOk(r, ok, err)) return RdbLoadStatus::kError;
      return Emit(b.zset, out);
    }

    case rdb::kTypeHash:
    case rdb::kTypeHashMetadata:
    case rdb::kTypeHashMetadataPreGa: {
      int64_t min = 0;
      if (type == rdb::kTypeHashMetadata && !r.MillisTime(&min)) return RdbLoadStatus::kError;
      if (!r.Len(&len)) return RdbLoadStatus::kError;
      HashBuild b{limits.hash, now_ms, {}};
      if (len > limits.hash.max_listpack_entries) b.hash.ConvertToHashtable();
      for (uint64_t i = 0; i < len; i++) {
        uint64_t ttl = 0;
        if (type != rdb::kTypeHash && !r.Len(&ttl)) return RdbLoadStatus::kError;
        if (type == rdb::kTypeHashMetadata && ttl != 0) ttl = ttl + static_cast<uint64_t>(min) - 1;
        if (!r.String(&s) || !r.String(&t) || !b.Add(r, s, t, ttl)) return RdbLoadStatus::kError;
      }
      return Emit(b, out);
    }

    case rdb::kTypeHashZipmap: {
      if (!r.String(&s)) return RdbLoadStatus::kError;
      HashBuild b{limits.hash, now_ms, {}};
      const bool ok = rdb::WalkZipmap(
          s, [&](std::string_view f, std::string_view v) { return b.Add(r, f, v); }, &err);
      if (!BlobOk(r, ok, err)) return RdbLoadStatus::kError;
      return Emit(b, out);
    }

    case rdb::kTypeHashZiplist:
    case rdb::kTypeHashListpack:
    case rdb::kTypeHashListpackEx:
    case rdb::kTypeHashListpackExPreGa: {
      int64_t min = 0;
      if (type == rdb::kTypeHashListpackEx && !r.MillisTime(&min)) return RdbLoadStatus::kError;
      if (!r.String(&s)) return RdbLoadStatus::kError;
      HashBuild b{limits.hash, now_ms, {}};
      const bool with_ttl = type == rdb::kTypeHashListpackEx || type == rdb::kTypeHashListpackExPreGa;
      const bool ok = WalkGroups(s, type == rdb::kTypeHashZiplist, with_ttl ? 3 : 2, &err,
                                 [&](const rdb::Element* e, const std::string_view* v) {
                                   uint64_t ttl = 0;
                                   if (with_ttl) {
                                     if (!e[2].is_int || e[2].num < 0)
                                       return r.Fail("Hash listpack integrity check failed.");
                                     ttl = static_cast<uint64_t>(e[2].num);
                                   }
                                   return b.Add(r, v[0], v[1], ttl);
                                 });
      if (!BlobOk(r, ok, err)) return RdbLoadStatus::kError;
      return Emit(b, out);
    }
  }
  if (type == rdb::kTypeStreamListpacks || type == rdb::kTypeStreamListpacks2 || type == rdb::kTypeStreamListpacks3)
    return LoadStream(r, type, out);
  if (type == rdb::kTypeModulePreGa || type == rdb::kTypeModule2)
    r.Fail("The RDB file holds a " + RdbTypeName(type) + " value, a type Peregrine does not support yet");
  else
    r.Fail("Unknown RDB encoding type " + std::to_string(type));
  return RdbLoadStatus::kError;
}

}  // namespace peregrine
