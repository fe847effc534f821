// DEBUG's subcommands about how values and tables are laid out: LISTPACK and
// QUICKLIST (a value's nodes, written to the log, which is stdout unless
// `logfile` is set: Redis prints them on stdout), HTSTATS (the keyspace
// table of a database: every shard's) and HTSTATS-KEY (a hash's or set's
// table), and QUICKLIST-PACKED-THRESHOLD (core/list_object.h: the items that
// make nodes of their own). Peregrine's structures are its own
// (docs/storage.md): the output names them, starting with the lines of
// Redis's output that mean the same.
#include <cstdlib>
#include <string>

#include "commands/common.h"
#include "commands/debug_structure.h"
#include "core/numbers.h"
#include "protocol/parser.h"
#include "server/log.h"

namespace peregrine {

namespace {

// The value at `key` as OBJECT looks it up (Redis's
// objectCommandLookupOrReply: not touched, an expired key is no key), or
// null after the error reply.
const Value* LookOrReply(CommandContext& ctx, std::string_view key) {
  Db::Entry* e = LookupRead(ctx, key, /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Error("ERR no such key");
    return nullptr;
  }
  return &e->value;
}

// An item for the log: its first 64 bytes quoted as MONITOR quotes
// arguments (Redis's sdscatrepr), and its length when cut.
std::string Shown(std::string_view item) {
  constexpr size_t kShown = 64;
  std::string out = Repr(item.substr(0, kShown));
  if (item.size() > kShown) out += "... (" + std::to_string(item.size()) + " bytes)";
  return out;
}

}  // namespace

void DebugListpack(CommandContext& ctx) {
  const Value* v = LookOrReply(ctx, ctx.args[2]);
  if (v == nullptr) return;
  if (v->EncodingName() != "listpack") {
    ctx.reply.Error("ERR Not a listpack encoded object.");
    return;
  }
  size_t i = 0;
  auto line = [&](const std::string& text) { LOG_NOTICE("{ element[%zu]: %s }", i++, text.c_str()); };
  switch (v->type()) {
    case ValueType::kList: {
      const ListObject& l = v->list();
      const ListObject::NodeStats st = l.StatsOf(0);
      LOG_NOTICE("{listpack %s} {total_bytes %zu} {num_entries %u}", Shown(ctx.args[2]).c_str(), st.bytes, st.count);
      char scratch[packed::kScratchSize];
      for (ListObject::Pos p = l.First(); st.count > 0 && !l.AtEnd(p); p = l.Next(p)) line(Shown(l.View(p, scratch)));
      break;
    }
    case ValueType::kSet:
      LOG_NOTICE("{listpack %s} {num_entries %zu}", Shown(ctx.args[2]).c_str(), v->set().size());
      v->set().ForEach([&](std::string_view m) { line(Shown(m)); });
      break;
    case ValueType::kHash:
      LOG_NOTICE("{listpack %s} {num_entries %zu}", Shown(ctx.args[2]).c_str(), 2 * v->hash().size());
      v->hash().ForEach([&](std::string_view f, std::string_view val) {
        line(Shown(f));
        line(Shown(val));
      });
      break;
    case ValueType::kZSet:
      LOG_NOTICE("{listpack %s} {num_entries %zu}", Shown(ctx.args[2]).c_str(), 2 * v->zset().size());
      v->zset().ForEach([&](std::string_view m, double score) {
        line(Shown(m));
        line(FormatDouble(score));
      });
      break;
    default:
      break;
  }
  ctx.reply.SimpleString("Listpack structure printed on stdout");
}

void DebugQuicklist(CommandContext& ctx) {
  const Value* v = LookOrReply(ctx, ctx.args[2]);
  if (v == nullptr) return;
  // (atoi, as Redis: 1 lists every node, 2 and more their items too.)
  const int full = ctx.args.size() == 4 ? std::atoi(std::string(ctx.args[3]).c_str()) : 0;
  if (v->type() != ValueType::kList || v->list().encoding() != ListObject::Encoding::kQuicklist) {
    ctx.reply.Error("ERR Not a quicklist encoded object.");
    return;
  }
  const ListObject& l = v->list();
  const ListLimits limits = ListLimitsOf(ctx.server.config());
  LOG_NOTICE("{quicklist %s} {count %zu} {len %u} {fill %lld} {compress %lld} {packed_threshold %zu} {compressed %u}",
             Shown(ctx.args[2]).c_str(), l.size(), l.nodes(), static_cast<long long>(limits.fill),
             static_cast<long long>(limits.compress_depth), limits.plain_threshold, l.CompressedNodes());
  if (full > 0) {
    char scratch[packed::kScratchSize];
    ListObject::Pos p = l.First();
    for (uint32_t i = 0; i < l.nodes(); i++) {
      const ListObject::NodeStats st = l.StatsOf(i);
      LOG_NOTICE("{node %u} {count %u} {bytes %zu} {compressed_bytes %zu}", i, st.count, st.bytes,
                 st.compressed_bytes);
      for (uint32_t k = 0; k < st.count; k++, p = l.Next(p))
        if (full > 1) LOG_NOTICE("  { element[%u]: %s }", k, Shown(l.View(p, scratch)).c_str());
    }
    l.DropCache();
  }
  ctx.reply.SimpleString("Quicklist structure printed on stdout");
}

void DebugHtstats(CommandContext& ctx) {
  int64_t dbid;
  if (!ParseIntArg(ctx, ctx.args[2], &dbid)) return;
  if (dbid < 0 || dbid >= ctx.server.config().databases) {
    ctx.reply.Error("ERR Out of range database");
    return;
  }
  const bool full = ctx.args.size() >= 4 && EqualsIgnoreCase(ctx.args[3], "full");
  const size_t shards = ctx.server.num_shards();
  std::string out = "[Dictionary HT]\n";
  size_t with_deadline = 0;
  for (size_t s = 0; s < shards; s++) {
    const Db& db = ctx.server.shard(s).db(static_cast<int>(dbid));
    with_deadline += db.expires_count();
    if (shards > 1) out += "Shard " + std::to_string(s) + ":\n";
    out += db.TableStats(full);
  }
  // (A key's deadline lives beside it in the one table: no second table.)
  out += "[Expires HT]\n";
  out += "Keys with a deadline, held in the main table: " + std::to_string(with_deadline) + "\n";
  ctx.reply.Verbatim(out, "txt");
}

void DebugHtstatsKey(CommandContext& ctx) {
  const bool full = ctx.args.size() >= 4 && EqualsIgnoreCase(ctx.args[3], "full");
  const Value* v = LookOrReply(ctx, ctx.args[2]);
  if (v == nullptr) return;
  const PackedTable* table = v->type() == ValueType::kSet    ? v->set().hashtable()
                             : v->type() == ValueType::kHash ? v->hash().hashtable()
                                                             : nullptr;
  if (table == nullptr) {
    ctx.reply.Error("ERR The value stored at the specified key is not represented using an hash table");
    return;
  }
  ctx.reply.Verbatim(table->StatsText(full), "txt");
}

void DebugQuicklistPackedThreshold(CommandContext& ctx) {
  // As Redis's quicklistisSetPackedThreshold: up to 4 GB less 1 MB; 0 puts
  // the default (1 GB) back.
  const std::optional<uint64_t> size = ParseMemorySize(ctx.args[2]);
  if (!size || *size > (uint64_t{1} << 32) - (uint64_t{1} << 20)) {
    ctx.reply.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
    return;
  }
  // (DEBUG holds every shard: no command reads the configuration meanwhile.)
  ctx.server.config().list_plain_threshold = *size == 0 ? ListLimits::kDefaultPlainThreshold : *size;
  ctx.reply.Ok();
}

}  // namespace peregrine
