// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP
// (Redis 7.2's replies: maps in RESP3, flat arrays in RESP2).
#include <string>

#include "commands/common.h"
#include "commands/stream_commands.h"
#include "core/stream_groups.h"

namespace peregrine {
namespace {

// The stream XINFO looks at: false after replying ("no such key",
// WRONGTYPE).
bool InfoStream(CommandContext& ctx, const StreamObject** s) {
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[2], ValueType::kStream, &e)) return false;
  if (e == nullptr) {
    ctx.reply.Error(kErrNoSuchKey);
    return false;
  }
  *s = &e->value.stream();
  return true;
}

// A group's lag (Redis's streamReplyWithCGLag): null when unknown.
void ReplyLag(CommandContext& ctx, const StreamObject& s, const StreamGroup& g) {
  const auto added = static_cast<int64_t>(s.entries_added());
  if (added == 0) {
    ctx.reply.Integer(0);
  } else if (g.entries_read != kStreamEntriesReadInvalid && !s.RangeHasTombstones(g.last_id, StreamID::Max())) {
    ctx.reply.Integer(added - g.entries_read);
  } else {
    const int64_t read = s.EntriesReadAt(g.last_id);
    if (read != kStreamEntriesReadInvalid)
      ctx.reply.Integer(added - read);
    else
      ctx.reply.Null();
  }
}

void ReplyEntriesRead(CommandContext& ctx, const StreamGroup& g) {
  if (g.entries_read != kStreamEntriesReadInvalid)
    ctx.reply.Integer(g.entries_read);
  else
    ctx.reply.Null();
}

void ReplyFirstOrLast(CommandContext& ctx, const StreamObject& s, bool last) {
  bool any = false;
  s.Range({}, StreamID::Max(), last, [&](const StreamObject::EntryView& e) {
    ReplyStreamEntry(ctx, e);
    any = true;
    return false;
  });
  if (!any) ctx.reply.Null();
}

void ReplyGroupFull(CommandContext& ctx, const StreamObject& s, const std::string& name, const StreamGroup& g,
                    int64_t count) {
  ctx.reply.MapHeader(7);
  ctx.reply.Bulk("name");
  ctx.reply.Bulk(name);
  ctx.reply.Bulk("last-delivered-id");
  ReplyStreamId(ctx, g.last_id);
  ctx.reply.Bulk("entries-read");
  ReplyEntriesRead(ctx, g);
  ctx.reply.Bulk("lag");
  ReplyLag(ctx, s, g);
  ctx.reply.Bulk("pel-count");
  ctx.reply.Integer(static_cast<int64_t>(g.pel.size()));
  ctx.reply.Bulk("pending");
  const size_t pel = count == 0 ? g.pel.size() : std::min<size_t>(g.pel.size(), static_cast<size_t>(count));
  ctx.reply.ArrayHeader(pel);
  size_t n = 0;
  for (auto it = g.pel.begin(); n < pel; ++it, ++n) {
    ctx.reply.ArrayHeader(4);
    ReplyStreamId(ctx, it->first);
    ctx.reply.Bulk(it->second.consumer->name);
    ctx.reply.Integer(it->second.delivery_time);
    ctx.reply.Integer(static_cast<int64_t>(it->second.delivery_count));
  }
  ctx.reply.Bulk("consumers");
  ctx.reply.ArrayHeader(g.consumers.size());
  for (const auto& [cname, c] : g.consumers) {
    ctx.reply.MapHeader(5);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(cname);
    ctx.reply.Bulk("seen-time");
    ctx.reply.Integer(c->seen_time);
    ctx.reply.Bulk("active-time");
    ctx.reply.Integer(c->active_time);
    ctx.reply.Bulk("pel-count");
    ctx.reply.Integer(static_cast<int64_t>(c->pending.size()));
    ctx.reply.Bulk("pending");
    const size_t own = count == 0 ? c->pending.size() : std::min<size_t>(c->pending.size(), static_cast<size_t>(count));
    ctx.reply.ArrayHeader(own);
    size_t k = 0;
    for (auto it = c->pending.begin(); k < own; ++it, ++k) {
      const StreamNack& nack = g.pel.at(*it);
      ctx.reply.ArrayHeader(3);
      ReplyStreamId(ctx, *it);
      ctx.reply.Integer(nack.delivery_time);
      ctx.reply.Integer(static_cast<int64_t>(nack.delivery_count));
    }
  }
}

// XINFO STREAM key [FULL [COUNT count]]
void XinfoStreamCommand(CommandContext& ctx) {
  const size_t optc = ctx.args.size() - 3;
  bool full = false;
  int64_t count = 10;
  if (optc > 0) {
    if ((optc != 1 && optc != 3) || !EqualsIgnoreCase(ctx.args[3], "full") ||
        (optc == 3 && !EqualsIgnoreCase(ctx.args[4], "count"))) {
      ReplySubcommandSyntaxError(ctx);
      return;
    }
    full = true;
    if (optc == 3) {
      if (!ParseIntArg(ctx, ctx.args[5], &count)) return;
      if (count < 0) count = 10;
    }
  }
  const StreamObject* s;
  if (!InfoStream(ctx, &s)) return;
  ctx.reply.MapHeader(full ? 9 : 10);
  ctx.reply.Bulk("length");
  ctx.reply.Integer(static_cast<int64_t>(s->size()));
  // Our nodes stand for Redis's radix tree keys; its inner nodes have no
  // counterpart (reported as one more, the root).
  ctx.reply.Bulk("radix-tree-keys");
  ctx.reply.Integer(static_cast<int64_t>(s->nodes()));
  ctx.reply.Bulk("radix-tree-nodes");
  ctx.reply.Integer(static_cast<int64_t>(s->nodes() + 1));
  ctx.reply.Bulk("last-generated-id");
  ReplyStreamId(ctx, s->last_id());
  ctx.reply.Bulk("max-deleted-entry-id");
  ReplyStreamId(ctx, s->max_deleted_id());
  ctx.reply.Bulk("entries-added");
  ctx.reply.Integer(static_cast<int64_t>(s->entries_added()));
  ctx.reply.Bulk("recorded-first-entry-id");
  ReplyStreamId(ctx, s->first_id());
  const StreamGroups* groups = s->groups();
  if (!full) {
    ctx.reply.Bulk("groups");
    ctx.reply.Integer(groups != nullptr ? static_cast<int64_t>(groups->size()) : 0);
    ctx.reply.Bulk("first-entry");
    ReplyFirstOrLast(ctx, *s, false);
    ctx.reply.Bulk("last-entry");
    ReplyFirstOrLast(ctx, *s, true);
    return;
  }
  ctx.reply.Bulk("entries");
  ReplyStreamRange(ctx, *s, {}, StreamID::Max(), static_cast<size_t>(count), false);
  ctx.reply.Bulk("groups");
  ctx.reply.ArrayHeader(groups != nullptr ? groups->size() : 0);
  if (groups != nullptr)
    for (const auto& [name, g] : groups->all()) ReplyGroupFull(ctx, *s, name, *g, count);
}

// XINFO GROUPS key
void XinfoGroupsCommand(CommandContext& ctx) {
  const StreamObject* s;
  if (!InfoStream(ctx, &s)) return;
  const StreamGroups* groups = s->groups();
  ctx.reply.ArrayHeader(groups != nullptr ? groups->size() : 0);
  if (groups == nullptr) return;
  for (const auto& [name, g] : groups->all()) {
    ctx.reply.MapHeader(6);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("consumers");
    ctx.reply.Integer(static_cast<int64_t>(g->consumers.size()));
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(g->pel.size()));
    ctx.reply.Bulk("last-delivered-id");
    ReplyStreamId(ctx, g->last_id);
    ctx.reply.Bulk("entries-read");
    ReplyEntriesRead(ctx, *g);
    ctx.reply.Bulk("lag");
    ReplyLag(ctx, *s, *g);
  }
}

// XINFO CONSUMERS key group
void XinfoConsumersCommand(CommandContext& ctx) {
  const StreamObject* s;
  if (!InfoStream(ctx, &s)) return;
  const StreamGroup* g = s->groups() != nullptr ? s->groups()->Find(ctx.args[3]) : nullptr;
  if (g == nullptr) {
    ctx.reply.Error("NOGROUP No such consumer group '" + AsCString(ctx.args[3]) + "' for key name '" +
                    AsCString(ctx.args[2]) + "'");
    return;
  }
  ctx.reply.ArrayHeader(g->consumers.size());
  for (const auto& [name, c] : g->consumers) {
    ctx.reply.MapHeader(4);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(c->pending.size()));
    ctx.reply.Bulk("idle");
    ctx.reply.Integer(std::max<int64_t>(ctx.now_ms - c->seen_time, 0));
    ctx.reply.Bulk("inactive");
    ctx.reply.Integer(c->active_time != -1 ? ctx.now_ms - c->active_time : -1);
  }
}

void XinfoHelpCommand(CommandContext& ctx) {
  ReplyContainerHelp(ctx, "XINFO", {
                     "CONSUMERS <key> <groupname>",
                     "    Show consumers of <groupname>.",
                     "GROUPS <key>",
                     "    Show the stream consumer groups.",
                     "STREAM <key> [FULL [COUNT <count>]",
                     "    Show information about the stream.",
                 });
}

}  // namespace

void RegisterStreamInfoCommands(CommandTable& t) {
  CommandFamily f(t, kAclStream, "stream");
  f.Add({.name = "xinfo", .arity = -2, .summary = "A container for stream introspection commands.", .since = "5.0.0",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "stream", .arity = -3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Returns information about a stream.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XinfoStreamCommand},
             {.name = "groups", .arity = 3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Returns a list of the consumer groups of a stream.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XinfoGroupsCommand},
             {.name = "consumers", .arity = 4, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Returns a list of the consumers in a consumer group.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XinfoConsumersCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = XinfoHelpCommand},
         }});
}

}  // namespace peregrine
