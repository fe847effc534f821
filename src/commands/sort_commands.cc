// SORT and SORT_RO (Redis 7.2's sort.c): the elements of a list, set or
// sorted set, by their own value or by the keys and hash fields a BY
// pattern names, numerically or ALPHA, ASC/DESC, a LIMIT, GET patterns
// (with `#` for the element), and STORE into a list.
//
// BY and GET patterns name keys that no key position gives: with several
// shards the command then holds every shard (CommandSpec::all_shards_when),
// so the patterns work as on a single Redis rather than being refused as
// Redis Cluster refuses them.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/zset_commands.h"
#include "core/list_object.h"
#include "server/config.h"

namespace peregrine {
namespace {

struct SortOptions {
  bool desc = false;
  bool alpha = false;
  bool dontsort = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  bool by = false;
  std::string_view by_pattern;
  std::vector<std::string_view> gets;
  bool store = false;
  std::string_view store_key;
};

bool HasStar(std::string_view p) { return UpToNul(p).find('*') != std::string_view::npos; }

// Whether the client's ACL user may read every key with this command (BY
// and GET patterns name keys the key specs do not: Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess).
bool FullKeyAccess(const CommandContext& ctx) {
  const AclUser* u = ctx.client.user;
  if (u == nullptr || u->unrestricted || ctx.client.last_cmd == nullptr) return true;
  return ctx.server.acl().CheckWithAllKeys(*u, *ctx.client.last_cmd, ctx.args, kKeyRead);
}

// Parses args[2..]; false after replying the error.
bool ParseSort(CommandContext& ctx, bool readonly, SortOptions* o) {
  const size_t argc = ctx.args.size();
  const bool full_access = FullKeyAccess(ctx);
  for (size_t j = 2; j < argc; j++) {
    const size_t left = argc - j - 1;
    const std::string_view a = ctx.args[j];
    if (EqualsIgnoreCase(a, "asc")) {
      o->desc = false;
    } else if (EqualsIgnoreCase(a, "desc")) {
      o->desc = true;
    } else if (EqualsIgnoreCase(a, "alpha")) {
      o->alpha = true;
    } else if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      if (!ParseIntArg(ctx, ctx.args[j + 1], &o->limit_start) || !ParseIntArg(ctx, ctx.args[j + 2], &o->limit_count))
        return false;
      j += 2;
    } else if (!readonly && EqualsIgnoreCase(a, "store") && left >= 1) {
      o->store = true;
      o->store_key = ctx.args[++j];
    } else if (EqualsIgnoreCase(a, "by") && left >= 1) {
      o->by = true;
      o->by_pattern = ctx.args[++j];
      // A pattern without '*' is a constant: nothing to sort by.
      o->dontsort = !HasStar(o->by_pattern);
      // (Keys the pattern makes may be on other nodes: Redis Cluster refuses.)
      if (!o->dontsort && ctx.server.cluster() != nullptr) {
        ctx.reply.Error("ERR BY option of SORT denied in Cluster mode.");
        return false;
      }
      if (!o->dontsort && !full_access) {
        ctx.reply.Error("ERR BY option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
    } else if (EqualsIgnoreCase(a, "get") && left >= 1) {
      if (ctx.server.cluster() != nullptr) {
        ctx.reply.Error("ERR GET option of SORT denied in Cluster mode.");
        return false;
      }
      if (!full_access) {
        ctx.reply.Error("ERR GET option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
      o->gets.push_back(ctx.args[++j]);
    } else {
      ctx.reply.Error(kErrSyntax);
      return false;
    }
  }
  return true;
}

// Redis's lookupKeyByPattern: `#` is the element itself; otherwise the
// first '*' is replaced by the element, and "->field" after it reads a
// hash field. A pattern without '*', a missing key, or one of another type
// gives nothing (false).
bool LookupByPattern(CommandContext& ctx, std::string_view pattern, std::string_view element, std::string* out) {
  if (UpToNul(pattern) == "#") {
    out->assign(element);
    return true;
  }
  const size_t star = UpToNul(pattern).find('*');
  if (star == std::string_view::npos) return false;
  std::string_view field;
  size_t arrow = UpToNul(pattern.substr(star + 1)).find("->");
  if (arrow != std::string_view::npos) {
    arrow += star + 1;
    if (arrow + 2 < pattern.size() && pattern[arrow + 2] != '\0') field = pattern.substr(arrow + 2);
  }
  const size_t postfix = pattern.size() - star - 1 - (field.empty() ? 0 : field.size() + 2);
  std::string key;
  key.reserve(star + element.size() + postfix);
  key.append(pattern.substr(0, star)).append(element).append(pattern.substr(star + 1, postfix));
  Db::Entry* e = LookupRead(ctx, key);
  if (e == nullptr) return false;
  char scratch[CompactString::kIntBufferSize > packed::kScratchSize ? CompactString::kIntBufferSize
                                                                     : packed::kScratchSize];
  if (!field.empty()) {
    if (e->value.type() != ValueType::kHash) return false;
    std::string_view v;
    if (!e->value.hash().Get(field, &v, scratch)) return false;
    out->assign(v);
    return true;
  }
  if (e->value.type() != ValueType::kString) return false;
  out->assign(e->value.str().View(scratch));
  return true;
}

struct Item {
  std::string element;
  double score = 0;
  bool has_by = false;  // ALPHA BY: whether the pattern gave a value
  std::string by;
};

// The elements of `v`: a set's all, in its order; a list's or sorted set's
// in their own order from the end DESC names, ranks [start, end] of it (or
// all of them when `all`).
void LoadItems(const Value& v, bool all, int64_t start, int64_t end, bool desc, std::vector<Item>* items) {
  char scratch[packed::kScratchSize];
  if (v.type() == ValueType::kSet) {
    v.set().ForEach([&](std::string_view m) { items->push_back({std::string(m)}); });
    return;
  }
  if (v.type() == ValueType::kList) {
    const ListObject& l = v.list();
    if (all) {
      for (ListObject::Pos p = l.First(); !l.AtEnd(p); p = l.Next(p)) items->push_back({std::string(l.View(p, scratch))});
      return;
    }
    if (end < start) return;
    const int64_t n = static_cast<int64_t>(l.size());
    ListObject::Pos p = l.Seek(static_cast<size_t>(desc ? n - start - 1 : start));
    for (int64_t k = start;; k++) {
      items->push_back({std::string(l.View(p, scratch))});
      if (k == end) break;
      if (desc) {
        if (!l.Prev(&p)) break;
      } else {
        p = l.Next(p);
        if (l.AtEnd(p)) break;
      }
    }
    return;
  }
  const ZSetObject& z = v.zset();
  const auto push = [&](std::string_view m, double) { items->push_back({std::string(m)}); };
  if (all) {
    ForEachInSpan(z, RankSpan{0, z.size(), false}, push);
    return;
  }
  if (end < start) return;
  const uint64_t first = desc ? z.size() - 1 - static_cast<uint64_t>(start) : static_cast<uint64_t>(start);
  ForEachInSpan(z, RankSpan{first, static_cast<uint64_t>(end - start + 1), desc}, push);
}

// Redis's strtod check: the whole text a double, not NaN, in range.
bool ParseScore(const std::string& s, double* out) {
  errno = 0;
  char* end;
  *out = std::strtod(s.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*out);
}

int CompareBytes(std::string_view a, std::string_view b) {
  const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  return c != 0 ? c : a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

// Redis's collateStringObjects / strcoll (the server runs in the C locale,
// where it is strcmp up to the first NUL) for ALPHA without STORE, and
// compareStringObjects (binary) with STORE.
int Collate(const std::string& a, const std::string& b, bool binary) {
  return binary ? CompareBytes(a, b) : std::strcoll(a.c_str(), b.c_str());
}

void SortGeneric(CommandContext& ctx, bool readonly) {
  SortOptions o;
  if (!ParseSort(ctx, readonly, &o)) return;
  Db::Entry* e = LookupRead(ctx, ctx.args[1]);
  if (e != nullptr && e->value.type() != ValueType::kList && e->value.type() != ValueType::kSet &&
      e->value.type() != ValueType::kZSet) {
    ctx.reply.Error(kErrWrongType);
    return;
  }
  const ValueType type = e != nullptr ? e->value.type() : ValueType::kList;
  // As Redis, which reads a sorted set through its skiplist and converts a
  // listpack one first, for good (SORT_RO too).
  if (type == ValueType::kZSet) e->value.mutable_zset().ConvertToSkiplist();
  // A set's order is its own: unsorted output would differ between
  // servers, so a set stored or read by a script is sorted ALPHA (Redis).
  if (o.dontsort && type == ValueType::kSet && (o.store || ctx.client.is_script)) {
    o.dontsort = false;
    o.alpha = true;
    o.by = false;
  }
  const int64_t len = e == nullptr ? 0 : static_cast<int64_t>(type == ValueType::kList  ? e->value.list().size()
                                                               : type == ValueType::kSet ? e->value.set().size()
                                                                                         : e->value.zset().size());
  int64_t start = std::min(std::max<int64_t>(o.limit_start, 0), len);
  const int64_t count = std::min(std::max<int64_t>(o.limit_count, -1), len);
  int64_t end = count < 0 ? len - 1 : start + count - 1;
  if (start >= len) {
    start = len - 1;
    end = len - 2;
  }
  if (end >= len) end = len - 1;
  std::vector<Item> items;
  // Not sorted (BY a constant): a list or sorted set is read in its own
  // order, DESC from its end, and only the LIMIT's range of it.
  const bool ranged = type != ValueType::kSet && o.dontsort;
  if (e != nullptr) LoadItems(e->value, !ranged, start, end, o.desc, &items);
  if (ranged && end >= start) {
    end -= start;
    start = 0;
  }
  bool conversion_error = false;
  if (!o.dontsort) {
    std::string by;
    for (Item& it : items) {
      const std::string* source = &it.element;
      if (o.by) {
        if (!LookupByPattern(ctx, o.by_pattern, it.element, &by)) continue;
        source = &by;
      }
      if (o.alpha) {
        if (o.by) {
          it.has_by = true;
          it.by = by;
        }
      } else if (!ParseScore(*source, &it.score)) {
        conversion_error = true;
      }
    }
    const bool binary = o.store;
    auto compare = [&](const Item& a, const Item& b) {
      int c;
      if (!o.alpha) {
        c = a.score > b.score ? 1 : a.score < b.score ? -1 : CompareBytes(a.element, b.element);
      } else if (o.by) {
        c = !a.has_by || !b.has_by ? (a.has_by == b.has_by ? 0 : !a.has_by ? -1 : 1) : Collate(a.by, b.by, binary);
      } else {
        c = Collate(a.element, b.element, binary);
      }
      return (o.desc ? -c : c) < 0;
    };
    // (stable: elements that compare equal, as ALPHA BY with missing
    // weights, keep the order they were read in)
    std::stable_sort(items.begin(), items.end(), compare);
  }
  if (conversion_error) {
    ctx.reply.Error("ERR One or more scores can't be converted into double");
    return;
  }
  const int64_t n = end - start + 1;
  const size_t out_len = static_cast<size_t>(std::max<int64_t>(n, 0)) * std::max<size_t>(o.gets.size(), 1);
  std::string v;
  if (!o.store) {
    ctx.reply.ArrayHeader(out_len);
    for (int64_t j = start; j <= end; j++) {
      const std::string& element = items[static_cast<size_t>(j)].element;
      if (o.gets.empty()) ctx.reply.Bulk(element);
      for (std::string_view g : o.gets) {
        if (LookupByPattern(ctx, g, element, &v))
          ctx.reply.Bulk(v);
        else
          ctx.reply.Null();
      }
    }
    return;
  }
  std::vector<std::string> out;
  out.reserve(out_len);
  for (int64_t j = start; j <= end; j++) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (o.gets.empty()) out.push_back(element);
    for (std::string_view g : o.gets) out.push_back(LookupByPattern(ctx, g, element, &v) ? v : std::string());
  }
  const std::string_view dest = o.store_key;
  Db& db = ctx.DbOf(dest);
  Db::Entry* d = LookupWrite(ctx, dest);
  if (!out.empty()) {
    ListObject list;
    std::vector<std::string_view> views(out.begin(), out.end());
    list.Push(ListObject::End::kTail, views, ListLimitsOf(ctx.server.config()));
    if (d == nullptr) {
      InsertKey(ctx, db, dest, Value(std::move(list)));
    } else {
      d->value = Value(std::move(list));
      db.SetExpire(d, Db::kNoExpire);
    }
    SignalModifiedKey(ctx, dest);
    Notify(ctx, notify::kList, "sortstore", dest);
    // (A list made here serves the clients blocked on it: Redis's dbAdd /
    // setKey signal it.)
    SignalKeyAsReady(ctx, ctx.ShardOf(dest), ctx.client.db, dest);
  } else if (d != nullptr) {
    db.Erase(dest);
    SignalModifiedKey(ctx, dest);
    Notify(ctx, notify::kGeneric, "del", dest);
  }
  ctx.reply.Integer(static_cast<int64_t>(out_len));
}

void SortCommand(CommandContext& ctx) { SortGeneric(ctx, false); }
void SortRoCommand(CommandContext& ctx) { SortGeneric(ctx, true); }

// SORT's keys: the key, and STORE's destination (Redis's sortGetKeys: the
// last STORE wins; options are skipped by their argument counts).
bool SortKeys(std::span<const std::string_view> args, std::vector<size_t>* out) {
  out->clear();
  if (args.size() < 2) return false;
  out->push_back(1);
  size_t store = 0;
  for (size_t j = 2; j < args.size(); j++) {
    const std::string_view a = args[j];
    const size_t left = args.size() - j - 1;
    if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      j += 2;
    } else if ((EqualsIgnoreCase(a, "get") || EqualsIgnoreCase(a, "by")) && left >= 1) {
      j += 1;
    } else if (EqualsIgnoreCase(a, "store") && left >= 1) {
      store = j + 1;
      j += 1;
    }
  }
  if (store != 0) out->push_back(store);
  return true;
}

// Whether a BY or GET pattern may name keys of any shard.
bool SortNeedsAllShards(std::span<const std::string_view> args) {
  for (size_t j = 2; j + 1 < args.size(); j++) {
    const std::string_view a = args[j];
    if (EqualsIgnoreCase(a, "limit")) {
      j += 2;
    } else if (EqualsIgnoreCase(a, "store")) {
      j += 1;
    } else if (EqualsIgnoreCase(a, "by") || EqualsIgnoreCase(a, "get")) {
      if (HasStar(args[j + 1])) return true;
      j += 1;
    }
  }
  return false;
}

}  // namespace

void RegisterSortCommands(CommandTable& t) {
  CommandFamily f(t, kAclSet | kAclSortedSet | kAclList | kAclDangerous, "generic");
  f.Add({.name = "sort", .arity = -2, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1, .last_key = 1,
         .find_keys = SortKeys, .all_shards_when = SortNeedsAllShards,
         .summary = "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.",
         .since = "1.0.0",
         .complexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number "
                       "of returned elements. When the elements are not sorted, complexity is O(N).",
         .handler = SortCommand});
  f.Add({.name = "sort_ro", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1, .find_keys = SortKeys,
         .all_shards_when = SortNeedsAllShards,
         .summary = "Returns the sorted elements of a list, a set, or a sorted set.", .since = "7.0.0",
         .complexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number "
                       "of returned elements. When the elements are not sorted, complexity is O(N).",
         .handler = SortRoCommand});
}

}  // namespace peregrine
