// Stream consumer groups (core/stream_groups.h): XGROUP CREATE / SETID /
// DESTROY / CREATECONSUMER / DELCONSUMER / HELP, XACK, XPENDING and XCLAIM,
// with Redis 7.2's replies and errors (t_stream.c) and the forms Redis
// propagates (XCLAIM ... FORCE JUSTID LASTID, XGROUP SETID ... ENTRIESREAD,
// XGROUP CREATECONSUMER) logged to the AOF.
//
// Group changes count as changes (the AOF, `save` schedules) but, as in
// Redis, do not touch WATCHed keys: only a stream made by MKSTREAM does.
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/stream_commands.h"
#include "core/stream_groups.h"

namespace peregrine {
namespace {

constexpr std::string_view kErrKeyRequired =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM "
    "option to create an empty stream automatically.";

std::string NoGroup(std::string_view key, std::string_view group) {
  return "NOGROUP No such consumer group '" + AsCString(group) + "' for key name '" + AsCString(key) + "'";
}
std::string NoKeyOrGroup(std::string_view key, std::string_view group) {
  return "NOGROUP No such key '" + AsCString(key) + "' or consumer group '" + AsCString(group) + "'";
}

// The stream at `key` for a change (WRONGTYPE replied: false); null when
// missing.
bool StreamForWrite(CommandContext& ctx, std::string_view key, StreamObject** s) {
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kStream, &e, /*write=*/true)) return false;
  *s = e != nullptr ? &e->value.mutable_stream() : nullptr;
  return true;
}

StreamGroup* FindGroup(StreamObject* s, std::string_view name) {
  return s != nullptr && s->groups() != nullptr ? s->groups()->Find(name) : nullptr;
}

// A change to a group: counted (AOF, save schedules), no watch touched.
void GroupChanged(CommandContext& ctx) { ctx.shard.AddDirty(); }

// XGROUP CREATE/SETID's options from args[5]: MKSTREAM (CREATE only) and
// ENTRIESREAD n. False after replying.
bool ParseGroupOptions(CommandContext& ctx, bool create, bool* mkstream, int64_t* entries_read) {
  for (size_t i = 5; i < ctx.args.size();) {
    if (create && EqualsIgnoreCase(ctx.args[i], "mkstream")) {
      *mkstream = true;
      i++;
    } else if (EqualsIgnoreCase(ctx.args[i], "entriesread") && i + 1 < ctx.args.size()) {
      if (!ParseIntArg(ctx, ctx.args[i + 1], entries_read)) return false;
      if (*entries_read < 0 && *entries_read != kStreamEntriesReadInvalid) {
        ctx.reply.Error("ERR value for ENTRIESREAD must be positive or -1");
        return false;
      }
      i += 2;
    } else {
      ReplySubcommandSyntaxError(ctx);
      return false;
    }
  }
  return true;
}

// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n]
void XgroupCreateCommand(CommandContext& ctx) {
  bool mkstream = false;
  int64_t entries_read = kStreamEntriesReadInvalid;
  if (!ParseGroupOptions(ctx, true, &mkstream, &entries_read)) return;
  const std::string_view key = ctx.args[2], name = ctx.args[3];
  StreamObject* s;
  if (!StreamForWrite(ctx, key, &s)) return;
  if (s == nullptr && !mkstream) {
    ctx.reply.Error(kErrKeyRequired);
    return;
  }
  if (ctx.args.size() > 8) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  StreamID id;
  if (IsStreamSpecial(ctx.args[4], '$')) {
    id = s != nullptr ? s->last_id() : StreamID{};
  } else if (!ParseStreamIdOrReply(ctx, ctx.args[4], &id, 0, true, nullptr)) {
    return;
  }
  if (s == nullptr) {
    Db::Entry* e = InsertKey(ctx, ctx.DbOf(key), key, Value(StreamValue(StreamObject())));
    s = &e->value.mutable_stream();
    SignalModifiedKey(ctx, key);
  }
  if (s->mutable_groups().Add(name, id, entries_read) == nullptr) {
    ctx.reply.Error("BUSYGROUP Consumer Group name already exists");
    return;
  }
  GroupChanged(ctx);
  ctx.reply.Ok();
  Notify(ctx, notify::kStream, "xgroup-create", key);
}

// The stream and group XGROUP's other subcommands need: false after
// replying (WRONGTYPE, the key's or the group's absence when required).
bool StreamAndGroup(CommandContext& ctx, bool group_required, StreamObject** s, StreamGroup** g) {
  if (!StreamForWrite(ctx, ctx.args[2], s)) return false;
  if (*s == nullptr) {
    ctx.reply.Error(kErrKeyRequired);
    return false;
  }
  *g = FindGroup(*s, ctx.args[3]);
  if (*g == nullptr && group_required) {
    ctx.reply.Error(NoGroup(ctx.args[2], ctx.args[3]));
    return false;
  }
  return true;
}

// XGROUP SETID key group id|$ [ENTRIESREAD n]
void XgroupSetidCommand(CommandContext& ctx) {
  bool mkstream = false;
  int64_t entries_read = kStreamEntriesReadInvalid;
  if (!ParseGroupOptions(ctx, false, &mkstream, &entries_read)) return;
  StreamObject* s;
  StreamGroup* g;
  if (!StreamAndGroup(ctx, true, &s, &g)) return;
  if (ctx.args.size() != 5 && ctx.args.size() != 7) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  StreamID id;
  if (IsStreamSpecial(ctx.args[4], '$')) {
    id = s->last_id();
  } else if (!ParseStreamIdOrReply(ctx, ctx.args[4], &id, 0, false, nullptr)) {
    return;
  }
  g->last_id = id;
  g->entries_read = entries_read;
  GroupChanged(ctx);
  ctx.reply.Ok();
  Notify(ctx, notify::kStream, "xgroup-setid", ctx.args[2]);
}

// XGROUP DESTROY key group
void XgroupDestroyCommand(CommandContext& ctx) {
  StreamObject* s;
  StreamGroup* g;
  if (!StreamAndGroup(ctx, false, &s, &g)) return;
  if (g == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  s->mutable_groups().Remove(ctx.args[3]);
  GroupChanged(ctx);
  Notify(ctx, notify::kStream, "xgroup-destroy", ctx.args[2]);
  // Readers blocked on the group run again, and get NOGROUP (as Redis).
  SignalKeyAsReady(ctx, ctx.ShardOf(ctx.args[2]), ctx.client.db, ctx.args[2]);
  ctx.reply.Integer(1);
}

// XGROUP CREATECONSUMER key group consumer
void XgroupCreateconsumerCommand(CommandContext& ctx) {
  StreamObject* s;
  StreamGroup* g;
  if (!StreamAndGroup(ctx, true, &s, &g)) return;
  const bool created = g->AddConsumer(ctx.args[4], ctx.now_ms) != nullptr;
  if (created) {
    GroupChanged(ctx);
    Notify(ctx, notify::kStream, "xgroup-createconsumer", ctx.args[2]);
  }
  ctx.reply.Integer(created ? 1 : 0);
}

// XGROUP DELCONSUMER key group consumer
void XgroupDelconsumerCommand(CommandContext& ctx) {
  StreamObject* s;
  StreamGroup* g;
  if (!StreamAndGroup(ctx, true, &s, &g)) return;
  int64_t pending = 0;
  if (g->FindConsumer(ctx.args[4]) != nullptr) {
    pending = static_cast<int64_t>(g->RemoveConsumer(ctx.args[4]));
    GroupChanged(ctx);
    Notify(ctx, notify::kStream, "xgroup-delconsumer", ctx.args[2]);
  }
  ctx.reply.Integer(pending);
}

void XgroupHelpCommand(CommandContext& ctx) {
  ReplyContainerHelp(ctx, "XGROUP", {
                     "CREATE <key> <groupname> <id|$> [option]",
                     "    Create a new consumer group. Options are:",
                     "    * MKSTREAM",
                     "      Create the empty stream if it does not exist.",
                     "    * ENTRIESREAD entries_read",
                     "      Set the group's entries_read counter (internal use).",
                     "CREATECONSUMER <key> <groupname> <consumer>",
                     "    Create a new consumer in the specified group.",
                     "DELCONSUMER <key> <groupname> <consumer>",
                     "    Remove the specified consumer.",
                     "DESTROY <key> <groupname>",
                     "    Remove the specified group.",
                     "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
                     "    Set the current group ID and entries_read counter.",
                 });
}

// The stream and group of XACK / XCLAIM / XPENDING (a read lookup, as
// Redis): null group when either is missing (WRONGTYPE replied: false).
bool ReadStreamGroup(CommandContext& ctx, StreamObject** s, StreamGroup** g) {
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kStream, &e)) return false;
  *s = e != nullptr ? &e->value.mutable_stream() : nullptr;
  *g = FindGroup(*s, ctx.args[2]);
  return true;
}

// XACK key group id [id ...]
void XackCommand(CommandContext& ctx) {
  StreamObject* s;
  StreamGroup* g;
  if (!ReadStreamGroup(ctx, &s, &g)) return;
  if (g == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  // All or nothing: every ID parsed before any is acknowledged.
  std::vector<StreamID> ids(ctx.args.size() - 3);
  for (size_t j = 3; j < ctx.args.size(); j++)
    if (!ParseStreamIdOrReply(ctx, ctx.args[j], &ids[j - 3], 0, true, nullptr)) return;
  int64_t acked = 0;
  for (const StreamID& id : ids) acked += g->Ack(id) ? 1 : 0;
  if (acked > 0) GroupChanged(ctx);
  ctx.reply.Integer(acked);
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void XpendingCommand(CommandContext& ctx) {
  const size_t argc = ctx.args.size();
  const bool summary = argc == 3;
  if (argc != 3 && (argc < 6 || argc > 9)) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  StreamID start, end;
  int64_t count = 0, min_idle = 0;
  std::string_view consumer_name;
  bool with_consumer = false;
  if (argc >= 6) {
    size_t at = 3;
    if (EqualsIgnoreCase(ctx.args[3], "idle")) {
      if (!ParseIntArg(ctx, ctx.args[4], &min_idle)) return;
      if (argc < 8) {
        ctx.reply.Error(kErrSyntax);
        return;
      }
      at += 2;
    }
    if (!ParseIntArg(ctx, ctx.args[at + 2], &count)) return;
    if (count < 0) count = 0;
    if (!ParseStreamBound(ctx, ctx.args[at], true, &start) || !ParseStreamBound(ctx, ctx.args[at + 1], false, &end))
      return;
    if (at + 3 < argc) {
      with_consumer = true;
      consumer_name = ctx.args[at + 3];
    }
  }
  StreamObject* s;
  StreamGroup* g;
  if (!ReadStreamGroup(ctx, &s, &g)) return;
  if (g == nullptr) {
    ctx.reply.Error(NoKeyOrGroup(ctx.args[1], ctx.args[2]));
    return;
  }
  if (summary) {
    ctx.reply.ArrayHeader(4);
    ctx.reply.Integer(static_cast<int64_t>(g->pel.size()));
    if (g->pel.empty()) {
      ctx.reply.Null();
      ctx.reply.Null();
      ctx.reply.NullArray();
      return;
    }
    ReplyStreamId(ctx, g->pel.begin()->first);
    ReplyStreamId(ctx, g->pel.rbegin()->first);
    size_t with_pending = 0;
    for (const auto& [name, c] : g->consumers) with_pending += c->pending.empty() ? 0 : 1;
    ctx.reply.ArrayHeader(with_pending);
    for (const auto& [name, c] : g->consumers) {
      if (c->pending.empty()) continue;
      ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(name);
      ctx.reply.Bulk(std::to_string(c->pending.size()));  // a bulk string, as Redis
    }
    return;
  }
  const StreamConsumer* consumer = nullptr;
  if (with_consumer) {
    consumer = g->FindConsumer(consumer_name);
    if (consumer == nullptr) {
      ctx.reply.ArrayHeader(0);
      return;
    }
  }
  // The entries of [start, end] (of the consumer's PEL, or the group's),
  // idle for at least min_idle, at most `count`.
  std::vector<std::pair<StreamID, const StreamNack*>> out;
  auto visit = [&](const StreamID& id, const StreamNack& nack) {
    if (min_idle != 0 && ctx.now_ms - nack.delivery_time < min_idle) return;
    out.emplace_back(id, &nack);
  };
  if (count > 0 && !(end < start)) {
    if (consumer != nullptr) {
      for (auto it = consumer->pending.lower_bound(start);
           it != consumer->pending.end() && *it <= end && static_cast<int64_t>(out.size()) < count; ++it)
        visit(*it, g->pel.at(*it));
    } else {
      for (auto it = g->pel.lower_bound(start);
           it != g->pel.end() && it->first <= end && static_cast<int64_t>(out.size()) < count; ++it)
        visit(it->first, it->second);
    }
  }
  ctx.reply.ArrayHeader(out.size());
  for (const auto& [id, nack] : out) {
    ctx.reply.ArrayHeader(4);
    ReplyStreamId(ctx, id);
    ctx.reply.Bulk(nack->consumer->name);
    ctx.reply.Integer(std::max<int64_t>(ctx.now_ms - nack->delivery_time, 0));
    ctx.reply.Integer(static_cast<int64_t>(nack->delivery_count));
  }
}

void LogGroupId(CommandContext& ctx, const StreamGroup& g) {
  if (!Logging(ctx)) return;
  const std::string last = g.last_id.ToString(), read = std::to_string(g.entries_read);
  ctx.worker.LogAs({"XGROUP", "SETID", ctx.args[1], ctx.args[2], last, "ENTRIESREAD", read});
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
//        [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
void XclaimCommand(CommandContext& ctx) {
  StreamObject* s;
  StreamGroup* g;
  if (!ReadStreamGroup(ctx, &s, &g)) return;
  if (g == nullptr) {
    ctx.reply.Error(NoKeyOrGroup(ctx.args[1], ctx.args[2]));
    return;
  }
  int64_t min_idle;
  if (!ParseIntArg(ctx, ctx.args[4], &min_idle, "ERR Invalid min-idle-time argument for XCLAIM")) return;
  if (min_idle < 0) min_idle = 0;
  // IDs up to the first argument that is not one; options after.
  std::vector<StreamID> ids;
  size_t j = 5;
  for (StreamID id; j < ctx.args.size() && ParseStreamId(ctx.args[j], &id, 0, true, nullptr); j++) ids.push_back(id);
  const int64_t now = ctx.now_ms;
  int64_t retrycount = -1, delivery_time = -1;
  bool force = false, justid = false;
  StreamID last_id;
  for (; j < ctx.args.size(); j++) {
    const std::string_view opt = ctx.args[j];
    const bool more = j + 1 < ctx.args.size();
    if (EqualsIgnoreCase(opt, "force")) {
      force = true;
    } else if (EqualsIgnoreCase(opt, "justid")) {
      justid = true;
    } else if (EqualsIgnoreCase(opt, "idle") && more) {
      if (!ParseIntArg(ctx, ctx.args[++j], &delivery_time, "ERR Invalid IDLE option argument for XCLAIM")) return;
      delivery_time = now - delivery_time;
    } else if (EqualsIgnoreCase(opt, "time") && more) {
      if (!ParseIntArg(ctx, ctx.args[++j], &delivery_time, "ERR Invalid TIME option argument for XCLAIM")) return;
    } else if (EqualsIgnoreCase(opt, "retrycount") && more) {
      if (!ParseIntArg(ctx, ctx.args[++j], &retrycount, "ERR Invalid RETRYCOUNT option argument for XCLAIM")) return;
    } else if (EqualsIgnoreCase(opt, "lastid") && more) {
      if (!ParseStreamIdOrReply(ctx, ctx.args[++j], &last_id, 0, true, nullptr)) return;
    } else {
      ctx.reply.Error("ERR Unrecognized XCLAIM option '" + AsCString(opt) + "'");
      return;
    }
  }
  bool log_group_id = false;
  if (g->last_id < last_id) {
    g->last_id = last_id;
    log_group_id = true;
  }
  // A delivery time in the future or before 1970 is taken as now.
  if (delivery_time < 0 || delivery_time > now) delivery_time = now;
  StreamConsumer* consumer = g->FindConsumer(ctx.args[3]);
  bool changed = log_group_id;
  if (consumer == nullptr) {
    consumer = g->AddConsumer(ctx.args[3], now);
    changed = true;
    Notify(ctx, notify::kStream, "xgroup-createconsumer", ctx.args[1]);
  }
  consumer->seen_time = now;
  // Replied after the loop: the count comes first.
  std::vector<StreamID> claimed;
  for (const StreamID& id : ids) {
    auto it = g->pel.find(id);
    if (!s->Contains(id)) {
      // The entry is gone: its pending entry goes too.
      if (it != g->pel.end()) {
        LogStreamClaim(ctx, ctx.args[1], ctx.args[2], *g, id, it->second);
        log_group_id = false;
        changed = true;
        g->Ack(id);
      }
      continue;
    }
    if (force && it == g->pel.end()) {
      // A new pending entry, delivered once now (Redis's streamCreateNACK).
      it = g->pel.emplace(id, StreamNack{now, 1, nullptr}).first;
    }
    if (it == g->pel.end()) continue;
    StreamNack& nack = it->second;
    if (nack.consumer != nullptr && min_idle != 0 && now - nack.delivery_time < min_idle) continue;
    nack.delivery_time = delivery_time;
    if (retrycount >= 0)
      nack.delivery_count = static_cast<uint64_t>(retrycount);
    else if (!justid)
      nack.delivery_count++;
    g->MoveNack(id, nack, consumer);
    consumer->active_time = now;
    claimed.push_back(id);
    LogStreamClaim(ctx, ctx.args[1], ctx.args[2], *g, id, nack);
    log_group_id = false;
    changed = true;
  }
  if (log_group_id) LogGroupId(ctx, *g);
  if (changed) {
    GroupChanged(ctx);
    if (claimed.empty() && !log_group_id && Logging(ctx)) {
      // Only the consumer was made: Redis propagates nothing then; logged
      // as its creation here, so that a replay has it too.
      ctx.worker.LogAs({"XGROUP", "CREATECONSUMER", ctx.args[1], ctx.args[2], ctx.args[3]});
    }
  }
  ctx.reply.ArrayHeader(claimed.size());
  for (const StreamID& id : claimed) {
    if (justid) {
      ReplyStreamId(ctx, id);
      continue;
    }
    s->Range(id, id, false, [&](const StreamObject::EntryView& e) {
      ReplyStreamEntry(ctx, e);
      return false;
    });
  }
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XautoclaimCommand(CommandContext& ctx) {
  int64_t min_idle;
  if (!ParseIntArg(ctx, ctx.args[4], &min_idle, "ERR Invalid min-idle-time argument for XAUTOCLAIM")) return;
  if (min_idle < 0) min_idle = 0;
  StreamID start;
  if (!ParseStreamBound(ctx, ctx.args[5], true, &start)) return;
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < ctx.args.size(); j++) {
    if (EqualsIgnoreCase(ctx.args[j], "count") && j + 1 < ctx.args.size()) {
      // (at most LONG_MAX / 16, as Redis: the attempts, ten times the count, fit)
      if (!ParseIntInRange(ctx, ctx.args[j + 1], 1, INT64_MAX / 16, &count, "ERR COUNT must be > 0")) return;
      j++;
    } else if (EqualsIgnoreCase(ctx.args[j], "justid")) {
      justid = true;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  StreamObject* s;
  StreamGroup* g;
  if (!ReadStreamGroup(ctx, &s, &g)) return;
  if (g == nullptr) {
    ctx.reply.Error(NoKeyOrGroup(ctx.args[1], ctx.args[2]));
    return;
  }
  if (Logging(ctx)) ctx.worker.LogOnlyForms();
  const int64_t now = ctx.now_ms;
  StreamConsumer* consumer = g->FindConsumer(ctx.args[3]);
  const bool created = consumer == nullptr;
  if (created) {
    consumer = g->AddConsumer(ctx.args[3], now);
    GroupChanged(ctx);
    Notify(ctx, notify::kStream, "xgroup-createconsumer", ctx.args[1]);
  }
  consumer->seen_time = now;
  int64_t attempts = count * 10;
  std::vector<StreamID> claimed, deleted;
  auto it = g->pel.lower_bound(start);
  while (attempts-- > 0 && count > 0 && it != g->pel.end()) {
    const StreamID id = it->first;
    StreamNack& nack = it->second;
    if (!s->Contains(id)) {
      // Gone from the stream: its pending entry goes, and is reported.
      LogStreamClaim(ctx, ctx.args[1], ctx.args[2], *g, id, nack);
      if (nack.consumer != nullptr) nack.consumer->pending.erase(id);
      it = g->pel.erase(it);
      deleted.push_back(id);
      count--;
      GroupChanged(ctx);
      continue;
    }
    if (min_idle != 0 && now - nack.delivery_time < min_idle) {
      ++it;
      continue;
    }
    nack.delivery_time = now;
    if (!justid) nack.delivery_count++;
    g->MoveNack(id, nack, consumer);
    consumer->active_time = now;
    claimed.push_back(id);
    LogStreamClaim(ctx, ctx.args[1], ctx.args[2], *g, id, nack);
    GroupChanged(ctx);
    count--;
    ++it;
  }
  if (created && claimed.empty() && deleted.empty() && Logging(ctx))
    ctx.worker.LogAs({"XGROUP", "CREATECONSUMER", ctx.args[1], ctx.args[2], ctx.args[3]});
  // The cursor: the next pending entry not looked at, or 0-0.
  ctx.reply.ArrayHeader(3);
  ReplyStreamId(ctx, it != g->pel.end() ? it->first : StreamID{});
  ctx.reply.ArrayHeader(claimed.size());
  for (const StreamID& id : claimed) {
    if (justid) {
      ReplyStreamId(ctx, id);
      continue;
    }
    s->Range(id, id, false, [&](const StreamObject::EntryView& e) {
      ReplyStreamEntry(ctx, e);
      return false;
    });
  }
  ctx.reply.ArrayHeader(deleted.size());
  for (const StreamID& id : deleted) ReplyStreamId(ctx, id);
}

}  // namespace

void RegisterStreamGroupCommands(CommandTable& t) {
  CommandFamily f(t, kAclStream, "stream");
  f.Add({.name = "xack", .arity = -4, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the number of messages that were successfully acknowledged by the consumer group member "
                    "of a stream.",
         .since = "5.0.0", .complexity = "O(1) for each message ID processed.", .handler = XackCommand});
  f.Add({.name = "xpending", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns the information and entries from a stream consumer group's pending entries list.",
         .since = "5.0.0",
         .complexity = "O(N) with N being the number of elements returned, so asking for a small fixed number of "
                       "entries per call is O(1). O(M), where M is the total number of entries scanned when used with "
                       "the IDLE filter. When the command returns just the summary and the list of consumers is small, "
                       "it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
         .handler = XpendingCommand});
  f.Add({.name = "xautoclaim", .arity = -6, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Changes, or acquires, ownership of messages in a consumer group, as if the messages were "
                    "delivered to as consumer group member.",
         .since = "6.2.0", .complexity = "O(1) if COUNT is small.", .handler = XautoclaimCommand});
  f.Add({.name = "xclaim", .arity = -6, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered "
                    "a consumer group member.",
         .since = "5.0.0",
         .complexity = "O(log N) with N being the number of messages in the PEL of the consumer group.",
         .handler = XclaimCommand});
  f.Add({.name = "xgroup", .arity = -2, .summary = "A container for consumer groups commands.", .since = "5.0.0",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "create", .arity = -5, .flags = kCmdWrite | kCmdDenyOom, .first_key = 2, .last_key = 2,
              .summary = "Creates a consumer group.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XgroupCreateCommand},
             {.name = "setid", .arity = -5, .flags = kCmdWrite, .first_key = 2, .last_key = 2,
              .summary = "Sets the last-delivered ID of a consumer group.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XgroupSetidCommand},
             {.name = "destroy", .arity = 4, .flags = kCmdWrite, .first_key = 2, .last_key = 2,
              .summary = "Destroys a consumer group.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XgroupDestroyCommand},
             {.name = "createconsumer", .arity = 5, .flags = kCmdWrite | kCmdDenyOom, .first_key = 2, .last_key = 2,
              .summary = "Creates a consumer in a consumer group.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XgroupCreateconsumerCommand},
             {.name = "delconsumer", .arity = 5, .flags = kCmdWrite, .first_key = 2, .last_key = 2,
              .summary = "Deletes a consumer from a consumer group.", .since = "5.0.0", .complexity = "O(1)",
              .handler = XgroupDelconsumerCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = XgroupHelpCommand},
         }});
}

}  // namespace peregrine
