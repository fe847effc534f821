// XREAD and XREADGROUP (Redis 7.2's xreadCommand): COUNT, BLOCK (on the
// blocking registry: the command runs again when a stream it waits on gets
// an entry, with "$" turned into the ID it stood for, as Redis does),
// STREAMS, and for XREADGROUP GROUP, NOACK, ">" for new entries and an ID
// for the consumer's history. What a group read changes is logged as Redis
// propagates it: an XCLAIM for each entry delivered, XGROUP SETID for NOACK
// reads, XGROUP CREATECONSUMER for a consumer a NOACK read made.
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/stream_commands.h"
#include "core/stream_groups.h"
#include "server/client.h"

namespace peregrine {
namespace {

struct XreadArgs {
  int64_t deadline = -1;  // -1: no BLOCK; 0: for ever
  int64_t count = 0;
  size_t streams = 0;  // the index of the first key
  size_t nkeys = 0;
  std::string_view group, consumer;
  bool has_group = false;
  bool noack = false;
};

// BLOCK's milliseconds (Redis's getTimeoutFromObjectOrReply in ms).
bool ParseMsTimeout(CommandContext& ctx, std::string_view arg, int64_t* deadline) {
  int64_t ms;
  if (!ParseIntArg(ctx, arg, &ms, "ERR timeout is not an integer or out of range")) return false;
  if (ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return false;
  }
  if (ms > 0) {
    if (ms > INT64_MAX - ctx.now_ms) {
      ctx.reply.Error("ERR timeout is out of range");
      return false;
    }
    ms += ctx.now_ms;
  }
  *deadline = ms;
  return true;
}

bool ParseXread(CommandContext& ctx, bool group_read, XreadArgs* a) {
  const size_t argc = ctx.args.size();
  for (size_t i = 1; i < argc; i++) {
    const size_t more = argc - i - 1;
    const std::string_view o = ctx.args[i];
    if (EqualsIgnoreCase(o, "block") && more > 0) {
      if (ctx.client.is_script) {
        ctx.reply.Error("ERR " + AsCString(ctx.args[0]) + " command is not allowed with BLOCK option from scripts");
        return false;
      }
      if (!ParseMsTimeout(ctx, ctx.args[++i], &a->deadline)) return false;
    } else if (EqualsIgnoreCase(o, "count") && more > 0) {
      if (!ParseIntArg(ctx, ctx.args[++i], &a->count)) return false;
      if (a->count < 0) a->count = 0;
    } else if (EqualsIgnoreCase(o, "streams") && more > 0) {
      a->streams = i + 1;
      const size_t n = argc - a->streams;
      if (n % 2 != 0) {
        ctx.reply.Error(std::string("ERR Unbalanced '") + (group_read ? "xreadgroup" : "xread") +
                        "' list of streams: for each stream key an ID or '" + (group_read ? ">" : "$") +
                        "' must be specified.");
        return false;
      }
      a->nkeys = n / 2;
      break;
    } else if (EqualsIgnoreCase(o, "group") && more >= 2) {
      if (!group_read) {
        ctx.reply.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->group = ctx.args[i + 1];
      a->consumer = ctx.args[i + 2];
      a->has_group = true;
      i += 2;
    } else if (EqualsIgnoreCase(o, "noack")) {
      if (!group_read) {
        ctx.reply.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->noack = true;
    } else {
      ctx.reply.Error(kErrSyntax);
      return false;
    }
  }
  if (a->streams == 0) {
    ctx.reply.Error(kErrSyntax);
    return false;
  }
  if (group_read && !a->has_group) {
    ctx.reply.Error("ERR Missing GROUP option for XREADGROUP");
    return false;
  }
  return true;
}

// New entries for a group (Redis's streamReplyWithRange with a group): each
// moves the group's last ID and read count, and (without NOACK) becomes
// pending for the consumer.
void ServeGroupNew(CommandContext& ctx, std::string_view key, const XreadArgs& a, StreamObject& s, StreamGroup& g,
                   StreamConsumer* consumer, StreamID start) {
  // Counted first (the reply's length comes before the entries), then
  // delivered in one more pass.
  size_t n = 0;
  s.Range(start, StreamID::Max(), false, [&](const StreamObject::EntryView&) {
    ++n;
    return a.count == 0 || static_cast<int64_t>(n) < a.count;
  });
  bool moved = false;
  size_t sent = 0;
  ctx.reply.ArrayHeader(n);
  if (n > 0) s.Range(start, StreamID::Max(), false, [&](const StreamObject::EntryView& e) {
    const StreamID id = e.id();
    if (id > g.last_id) {
      if (g.entries_read != kStreamEntriesReadInvalid && !s.RangeHasTombstones(id, StreamID::Max()))
        g.entries_read++;
      else if (s.entries_added() != 0)
        g.entries_read = s.EntriesReadAt(id);
      g.last_id = id;
      moved = true;
    }
    ReplyStreamEntry(ctx, e);
    if (!a.noack) {
      auto [it, added] = g.pel.try_emplace(id, StreamNack{ctx.now_ms, 1, nullptr});
      if (!added) {
        it->second.delivery_time = ctx.now_ms;
        it->second.delivery_count = 1;
      }
      g.MoveNack(id, it->second, consumer);
      consumer->active_time = ctx.now_ms;
      LogStreamClaim(ctx, key, a.group, g, id, it->second);
    }
    return ++sent < n;
  });
  if (a.noack && moved && Logging(ctx)) {
    const std::string last = g.last_id.ToString(), read = std::to_string(g.entries_read);
    ctx.worker.LogAs({"XGROUP", "SETID", key, a.group, last, "ENTRIESREAD", read});
  }
}

// The consumer's own pending entries from `start` (Redis's
// streamReplyWithRangeFromConsumerPEL): an entry deleted since is [id, nil].
void ServeHistory(CommandContext& ctx, const XreadArgs& a, StreamObject& s, StreamGroup& g,
                  StreamConsumer* consumer, StreamID start) {
  std::vector<StreamID> ids;
  for (auto it = consumer->pending.lower_bound(start);
       it != consumer->pending.end() && (a.count == 0 || static_cast<int64_t>(ids.size()) < a.count); ++it)
    ids.push_back(*it);
  ctx.reply.ArrayHeader(ids.size());
  for (const StreamID& id : ids) {
    bool found = false;
    s.Range(id, id, false, [&](const StreamObject::EntryView& e) {
      ReplyStreamEntry(ctx, e);
      found = true;
      return false;
    });
    if (!found) {
      ctx.reply.ArrayHeader(2);
      ReplyStreamId(ctx, id);
      ctx.reply.NullArray();
      continue;
    }
    StreamNack& nack = g.pel.at(id);
    nack.delivery_time = ctx.now_ms;
    nack.delivery_count++;
  }
}

void XreadGeneric(CommandContext& ctx, bool group_read) {
  XreadArgs a;
  if (!ParseXread(ctx, group_read, &a)) return;
  if (Logging(ctx)) ctx.worker.LogOnlyForms();  // (Redis propagates only the forms below)
  const auto keys = ctx.args.subspan(a.streams, a.nkeys);
  std::vector<StreamID> ids(a.nkeys);
  std::vector<StreamGroup*> groups(a.nkeys, nullptr);
  std::vector<StreamObject*> streams(a.nkeys, nullptr);
  for (size_t i = 0; i < a.nkeys; i++) {
    const std::string_view key = keys[i], idarg = ctx.args[a.streams + a.nkeys + i];
    Db::Entry* e;
    if (!LookupTyped(ctx, key, ValueType::kStream, &e)) return;
    streams[i] = e != nullptr ? &e->value.mutable_stream() : nullptr;
    if (group_read) {
      StreamGroups* gs = streams[i] != nullptr ? streams[i]->groups() : nullptr;
      groups[i] = gs != nullptr ? gs->Find(a.group) : nullptr;
      if (groups[i] == nullptr) {
        ctx.reply.Error("NOGROUP No such key '" + AsCString(key) + "' or consumer group '" + AsCString(a.group) +
                        "' in XREADGROUP with GROUP option");
        return;
      }
    }
    if (IsStreamSpecial(idarg, '$')) {
      if (group_read) {
        ctx.reply.Error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer "
            "by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty "
            "result set.");
        return;
      }
      ids[i] = streams[i] != nullptr ? streams[i]->last_id() : StreamID{};
    } else if (IsStreamSpecial(idarg, '>')) {
      if (!group_read) {
        ctx.reply.Error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
        return;
      }
      ids[i] = StreamID::Max();
    } else if (!ParseStreamIdOrReply(ctx, idarg, &ids[i], 0, true, nullptr)) {
      return;
    }
  }
  // Which streams have something: counted first, the reply's length
  // comes before them.
  struct Serve {
    size_t i;
    bool history;
  };
  std::vector<Serve> serve;
  std::vector<StreamConsumer*> consumers(a.nkeys, nullptr);
  for (size_t i = 0; i < a.nkeys; i++) {
    StreamObject* s = streams[i];
    if (s == nullptr) {
      // Redis looks every key up twice (lookupKeyRead in both loops): a
      // missing one is a keymiss twice.
      Notify(ctx, notify::kKeyMiss, "keymiss", keys[i]);
      continue;
    }
    StreamID& gt = ids[i];
    bool now = false, history = false;
    if (group_read) {
      if (!(gt == StreamID::Max())) {
        now = history = true;
      } else if (s->size() > 0 && s->EdgeID(false, true) > groups[i]->last_id) {
        now = true;
        gt = groups[i]->last_id;
      }
      StreamConsumer* c = groups[i]->FindConsumer(a.consumer);
      if (c == nullptr) {
        c = groups[i]->AddConsumer(a.consumer, ctx.now_ms);
        ctx.shard.AddDirty();
        Notify(ctx, notify::kStream, "xgroup-createconsumer", keys[i]);
        if (a.noack && Logging(ctx)) ctx.worker.LogAs({"XGROUP", "CREATECONSUMER", keys[i], a.group, a.consumer});
      }
      c->seen_time = ctx.now_ms;
      consumers[i] = c;
    } else if (s->size() > 0 && s->EdgeID(false, true) > gt) {
      now = true;
    }
    if (now) serve.push_back({i, history});
  }
  if (!serve.empty()) {
    if (ctx.reply.resp() >= 3)
      ctx.reply.MapHeader(serve.size());
    else
      ctx.reply.ArrayHeader(serve.size());
    for (const Serve& sv : serve) {
      const size_t i = sv.i;
      StreamID start = ids[i];
      if (!IncrStreamID(&start)) start = {};
      if (ctx.reply.resp() < 3) ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(keys[i]);
      if (!group_read) {
        ReplyStreamRange(ctx, *streams[i], start, StreamID::Max(), static_cast<size_t>(a.count), false);
        continue;
      }
      if (sv.history)
        ServeHistory(ctx, a, *streams[i], *groups[i], consumers[i], start);
      else
        ServeGroupNew(ctx, keys[i], a, *streams[i], *groups[i], consumers[i], start);
      ctx.shard.AddDirty();
    }
    return;
  }
  if (a.deadline < 0) {
    ctx.reply.NullArray();
    return;
  }
  // Blocks; XREAD's IDs become ms-seq ("$" the ID it stood for), so that
  // the command run again on a new entry reads from there, and the wait is
  // served only by an entry past it (BlockingWaits::StreamWaiterReady).
  std::vector<std::string> owned(ctx.args.begin(), ctx.args.end());
  for (size_t i = 0; i < a.nkeys && !group_read; i++) owned[a.streams + a.nkeys + i] = ids[i].ToString();
  std::vector<std::string_view> views(owned.begin(), owned.end());
  CommandContext blocked = ctx;
  blocked.args = views;
  ctx.worker.Block(blocked, std::span<const std::string_view>(views).subspan(a.streams, a.nkeys), ValueType::kStream,
                   a.deadline);
}

void XreadCommand(CommandContext& ctx) { XreadGeneric(ctx, false); }
void XreadgroupCommand(CommandContext& ctx) { XreadGeneric(ctx, true); }

// XREAD's keys: after STREAMS, the first half of what follows (Redis's
// xreadGetKeys).
bool XreadKeys(std::span<const std::string_view> args, std::vector<size_t>* out) {
  out->clear();
  for (size_t i = 1; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "streams")) {
      const size_t n = args.size() - i - 1;
      if (n % 2 != 0) return false;
      for (size_t k = 0; k < n / 2; k++) out->push_back(i + 1 + k);
      return true;
    }
  }
  return false;
}

}  // namespace

void RegisterStreamReadCommands(CommandTable& t) {
  CommandFamily f(t, kAclStream, "stream");
  const std::string_view cost =
      "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always "
      "asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP "
      "blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.";
  f.Add({.name = "xread", .arity = -4, .flags = kCmdReadonly | kCmdBlocking, .first_key = 1, .last_key = 1,
         .find_keys = XreadKeys,
         .summary = "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a "
                    "message is available otherwise.",
         .since = "5.0.0", .complexity = cost, .handler = XreadCommand});
  f.Add({.name = "xreadgroup", .arity = -7, .flags = kCmdWrite | kCmdBlocking, .first_key = 1, .last_key = 1,
         .find_keys = XreadKeys,
         .summary = "Returns new or historical messages from a stream for a consumer in a group. Blocks until a "
                    "message is available otherwise.",
         .since = "5.0.0", .complexity = cost, .handler = XreadgroupCommand});
}

}  // namespace peregrine
