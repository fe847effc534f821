// Streams (core/stream_object.h): XADD, XLEN, XRANGE, XREVRANGE, XDEL,
// XTRIM and XSETID with Redis 7.2's parsing, replies and error texts
// (t_stream.c). Commands that add or trim log the form Redis propagates:
// the ID XADD generated, an approximate trim as the exact one it did.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/stream_commands.h"
#include "core/stream_groups.h"
#include "core/numbers.h"
#include "server/client.h"
#include "server/config.h"

namespace peregrine {

constexpr std::string_view kErrInvalidId = "ERR Invalid stream ID specified as stream command argument";

namespace {

// Redis's string2ull: string2ll for a non-negative value, else strtoull
// (which takes leading blanks and a sign).
bool String2Ull(const std::string& s, uint64_t* out) {
  int64_t v;
  if (ParseInt64(s, &v)) {
    if (v < 0) return false;
    *out = static_cast<uint64_t>(v);
    return true;
  }
  errno = 0;
  char* end = nullptr;
  const unsigned long long r = std::strtoull(s.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || s.empty() || *end != '\0') return false;
  *out = r;
  return true;
}

}  // namespace

bool ParseStreamId(std::string_view arg, StreamID* id, uint64_t missing_seq, bool strict, bool* seq_given) {
  if (arg.size() > 127) return false;
  const std::string buf(UpToNul(arg));  // Redis reads it as a C string
  if (strict && (buf == "-" || buf == "+")) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (buf == "-") {
    *id = {};
    return true;
  }
  if (buf == "+") {
    *id = StreamID::Max();
    return true;
  }
  const size_t dash = buf.find('-');
  uint64_t ms, seq;
  if (!String2Ull(buf.substr(0, dash), &ms)) return false;
  if (dash != std::string::npos) {
    const std::string rest = buf.substr(dash + 1);
    if (seq_given != nullptr && rest == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!String2Ull(rest, &seq)) {
      return false;
    }
  } else {
    seq = missing_seq;
  }
  *id = {ms, seq};
  return true;
}

bool ParseStreamIdOrReply(CommandContext& ctx, std::string_view arg, StreamID* id, uint64_t missing_seq, bool strict,
                          bool* seq_given) {
  if (ParseStreamId(arg, id, missing_seq, strict, seq_given)) return true;
  ctx.reply.Error(kErrInvalidId);
  return false;
}

bool ParseStreamBound(CommandContext& ctx, std::string_view arg, bool start, StreamID* id) {
  const bool ex = arg.size() > 1 && arg[0] == '(';
  if (!ParseStreamIdOrReply(ctx, ex ? arg.substr(1) : arg, id, start ? 0 : UINT64_MAX, ex, nullptr)) return false;
  if (ex && !(start ? IncrStreamID(id) : DecrStreamID(id))) {
    ctx.reply.Error(start ? "ERR invalid start ID for the interval" : "ERR invalid end ID for the interval");
    return false;
  }
  return true;
}

void LogStreamClaim(CommandContext& ctx, std::string_view key, std::string_view group_name, const StreamGroup& g,
                    StreamID id, const StreamNack& nack) {
  if (!Logging(ctx)) return;
  const std::string sid = id.ToString(), time = std::to_string(nack.delivery_time),
                    count = std::to_string(nack.delivery_count), last = g.last_id.ToString();
  ctx.worker.LogAs({"XCLAIM", key, group_name, nack.consumer->name, "0", sid, "TIME", time, "RETRYCOUNT", count,
                    "FORCE", "JUSTID", "LASTID", last});
}

void ReplyStreamId(CommandContext& ctx, StreamID id) { ctx.reply.Bulk(id.ToString()); }

void ReplyStreamEntry(CommandContext& ctx, const StreamObject::EntryView& e) {
  ctx.reply.ArrayHeader(2);
  ReplyStreamId(ctx, e.id());
  ctx.reply.ArrayHeader(e.pairs() * 2);
  e.ForEach([&](std::string_view f, std::string_view v) {
    ctx.reply.Bulk(f);
    ctx.reply.Bulk(v);
  });
}

StreamLimits StreamLimitsOf(const CommandContext& ctx) {
  const Config& c = ctx.server.config();
  return StreamLimits{c.stream_node_max_bytes, c.stream_node_max_entries};
}

namespace {

// XADD's and XTRIM's options (Redis's streamAddTrimArgs).
struct AddTrimArgs {
  StreamObject::Trim trim;
  size_t trim_arg = 0;   // the index of MAXLEN's count / MINID's ID
  bool approx_given = false;
  bool id_given = false;
  bool seq_given = false;
  bool no_mkstream = false;
  StreamID id;
  size_t id_pos = 0;
};

// Redis's streamParseAddOrTrimArgsOrReply; false after replying.
bool ParseAddTrim(CommandContext& ctx, bool xadd, AddTrimArgs* a) {
  const auto& args = ctx.args;
  const size_t argc = args.size();
  bool limit_given = false;
  size_t i = 2;
  for (; i < argc; i++) {
    const size_t more = argc - 1 - i;
    const std::string_view opt = args[i];
    if (xadd && UpToNul(opt) == "*") {
      break;
    } else if ((EqualsIgnoreCase(opt, "maxlen") || EqualsIgnoreCase(opt, "minid")) && more > 0) {
      const bool maxlen = EqualsIgnoreCase(opt, "maxlen");
      if (a->trim.strategy != StreamObject::Trim::kNone) {
        ctx.reply.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return false;
      }
      a->trim.approx = false;
      const std::string_view next = UpToNul(args[i + 1]);
      if (more >= 2 && next == "~") {
        a->trim.approx = true;
        i++;
      } else if (more >= 2 && next == "=") {
        i++;
      }
      if (maxlen) {
        int64_t n;
        if (!ParseIntArg(ctx, args[i + 1], &n)) return false;
        if (n < 0) {
          ctx.reply.Error("ERR The MAXLEN argument must be >= 0.");
          return false;
        }
        a->trim.maxlen = static_cast<uint64_t>(n);
        a->trim.strategy = StreamObject::Trim::kMaxLen;
      } else {
        if (!ParseStreamIdOrReply(ctx, args[i + 1], &a->trim.minid, 0, true, nullptr)) return false;
        a->trim.strategy = StreamObject::Trim::kMinId;
      }
      i++;
      a->trim_arg = i;
    } else if (EqualsIgnoreCase(opt, "limit") && more > 0) {
      int64_t n;
      if (!ParseIntArg(ctx, args[i + 1], &n)) return false;
      if (n < 0) {
        ctx.reply.Error("ERR The LIMIT argument must be >= 0.");
        return false;
      }
      a->trim.limit = n;
      limit_given = true;
      i++;
    } else if (xadd && EqualsIgnoreCase(opt, "nomkstream")) {
      a->no_mkstream = true;
    } else if (xadd) {
      if (!ParseStreamIdOrReply(ctx, args[i], &a->id, 0, true, &a->seq_given)) return false;
      a->id_given = true;
      break;
    } else {
      ctx.reply.Error(kErrSyntax);
      return false;
    }
  }
  a->id_pos = i;
  if (a->trim.limit != 0 && a->trim.strategy == StreamObject::Trim::kNone) {
    ctx.reply.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return false;
  }
  if (!xadd && a->trim.strategy == StreamObject::Trim::kNone) {
    ctx.reply.Error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return false;
  }
  if (ctx.client.obeyed) {
    // From the append-only file: the trim was logged exact.
    a->trim.limit = 0;
  } else if (limit_given) {
    if (!a->trim.approx) {
      ctx.reply.Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return false;
    }
  } else if (a->trim.approx) {
    // At most 100 nodes' worth of work, bounded both ways (Redis).
    int64_t limit = 100 * ctx.server.config().stream_node_max_entries;
    if (limit <= 0) limit = 10000;
    if (limit > 1000000) limit = 1000000;
    a->trim.limit = limit;
  } else {
    a->trim.limit = 0;
  }
  return true;
}

// The arguments as logged after an approximate trim: "=" and what the trim
// left (the length, or the first ID tombstones included), so that a replay
// does the same (Redis's streamRewriteApproxSpecifier / TrimArgument).
void RewriteTrim(const AddTrimArgs& a, const StreamObject& s, std::vector<std::string>* args) {
  if (!a.trim.approx) return;
  (*args)[a.trim_arg - 1] = "=";
  (*args)[a.trim_arg] = a.trim.strategy == StreamObject::Trim::kMaxLen ? std::to_string(s.size())
                                                                      : s.EdgeID(true, false).ToString();
}

// The stream at `key` for a read: false after replying (WRONGTYPE);
// *s null for a missing key.
bool LookupStream(CommandContext& ctx, std::string_view key, const StreamObject** s) {
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kStream, &e)) return false;
  *s = e != nullptr ? &e->value.stream() : nullptr;
  return true;
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
void XaddCommand(CommandContext& ctx) {
  AddTrimArgs a;
  if (!ParseAddTrim(ctx, true, &a)) return;
  const size_t field_pos = a.id_pos + 1;
  const size_t nargs = ctx.args.size() - std::min(field_pos, ctx.args.size());
  if (field_pos > ctx.args.size() || nargs < 2 || nargs % 2 == 1) {
    ReplyWrongArity(ctx);
    return;
  }
  if (a.id_given && a.seq_given && a.id == StreamID{}) {
    ctx.reply.Error("ERR The ID specified in XADD must be greater than 0-0");
    return;
  }
  size_t total = 0;
  for (size_t j = field_pos; j < ctx.args.size(); j++) total += ctx.args[j].size();
  if (total > (uint64_t{1} << 30)) {
    // (Checked before the key is made: Redis would leave an empty stream.)
    ctx.reply.Error("ERR Elements are too large to be stored");
    return;
  }
  const std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kStream, &e, /*write=*/true)) return;
  if (e == nullptr) {
    if (a.no_mkstream) {
      ctx.reply.Null();
      return;
    }
    e = InsertKey(ctx, ctx.DbOf(key), key, Value(StreamValue(StreamObject())));
  }
  StreamObject& s = e->value.mutable_stream();
  const StreamID last = s.last_id();
  if (last == StreamID::Max()) {
    ctx.reply.Error("ERR The stream has exhausted the last possible ID, unable to add more items");
    return;
  }
  // The new ID (Redis's streamAppendItem).
  StreamID id;
  bool ok = true;
  if (a.id_given) {
    if (a.seq_given) {
      id = a.id;
    } else if (last.ms == a.id.ms) {
      ok = last.seq != UINT64_MAX;
      id = {last.ms, last.seq + 1};
    } else {
      id = a.id;
    }
  } else {
    const uint64_t now = static_cast<uint64_t>(ctx.now_ms);
    if (now > last.ms) {
      id = {now, 0};
    } else {
      id = last;
      ok = IncrStreamID(&id);
    }
  }
  if (!ok || id <= last) {
    ctx.reply.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item");
    return;
  }
  s.Append(id, ctx.args.subspan(field_pos), StreamLimitsOf(ctx));
  ReplyStreamId(ctx, id);
  SignalModifiedKey(ctx, key);
  Notify(ctx, notify::kStream, "xadd", key);
  if (a.trim.strategy != StreamObject::Trim::kNone && s.TrimEntries(a.trim) > 0)
    Notify(ctx, notify::kStream, "xtrim", key);
  if (Logging(ctx) && (a.trim.approx || !a.id_given || !a.seq_given)) {
    std::vector<std::string> logged(ctx.args.begin(), ctx.args.end());
    RewriteTrim(a, s, &logged);
    logged[a.id_pos] = id.ToString();
    std::vector<std::string_view> views(logged.begin(), logged.end());
    ctx.worker.LogAs(views);
  }
  SignalKeyAsReady(ctx, ctx.ShardOf(key), ctx.client.db, key);
}

// XLEN key
void XlenCommand(CommandContext& ctx) {
  const StreamObject* s;
  if (!LookupStream(ctx, ctx.args[1], &s)) return;
  ctx.reply.Integer(s == nullptr ? 0 : static_cast<int64_t>(s->size()));
}

void XrangeGeneric(CommandContext& ctx, bool rev) {
  const std::string_view start_arg = rev ? ctx.args[3] : ctx.args[2];
  const std::string_view end_arg = rev ? ctx.args[2] : ctx.args[3];
  StreamID start, end;
  if (!ParseStreamBound(ctx, start_arg, true, &start) || !ParseStreamBound(ctx, end_arg, false, &end)) return;
  int64_t count = -1;
  for (size_t j = 4; j < ctx.args.size(); j++) {
    if (EqualsIgnoreCase(ctx.args[j], "count") && j + 1 < ctx.args.size()) {
      if (!ParseIntArg(ctx, ctx.args[j + 1], &count)) return;
      if (count < 0) count = 0;
      j++;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  const StreamObject* s;
  if (!LookupStream(ctx, ctx.args[1], &s)) return;
  if (s == nullptr) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  if (count == 0) {
    ctx.reply.NullArray();
    return;
  }
  ReplyStreamRange(ctx, *s, start, end, count < 0 ? 0 : static_cast<size_t>(count), rev);
}

void XrangeCommand(CommandContext& ctx) { XrangeGeneric(ctx, false); }
void XrevrangeCommand(CommandContext& ctx) { XrangeGeneric(ctx, true); }

// XDEL key id [id ...]
void XdelCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kStream, &e, /*write=*/true)) return;
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  // Every ID is checked before any goes.
  std::vector<StreamID> ids(ctx.args.size() - 2);
  for (size_t j = 2; j < ctx.args.size(); j++)
    if (!ParseStreamIdOrReply(ctx, ctx.args[j], &ids[j - 2], 0, true, nullptr)) return;
  StreamObject& s = e->value.mutable_stream();
  int64_t deleted = 0;
  for (const StreamID& id : ids) deleted += s.Delete(id) ? 1 : 0;
  if (deleted > 0) {
    SignalModifiedKey(ctx, ctx.args[1]);
    Notify(ctx, notify::kStream, "xdel", ctx.args[1]);
  }
  ctx.reply.Integer(deleted);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void XtrimCommand(CommandContext& ctx) {
  AddTrimArgs a;
  if (!ParseAddTrim(ctx, false, &a)) return;
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kStream, &e, /*write=*/true)) return;
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  StreamObject& s = e->value.mutable_stream();
  const int64_t deleted = s.TrimEntries(a.trim);
  if (deleted > 0) {
    Notify(ctx, notify::kStream, "xtrim", ctx.args[1]);
    if (Logging(ctx) && a.trim.approx) {
      std::vector<std::string> logged(ctx.args.begin(), ctx.args.end());
      RewriteTrim(a, s, &logged);
      std::vector<std::string_view> views(logged.begin(), logged.end());
      ctx.worker.LogAs(views);
    }
    SignalModifiedKey(ctx, ctx.args[1]);
  }
  ctx.reply.Integer(deleted);
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void XsetidCommand(CommandContext& ctx) {
  StreamID id, max_deleted;
  int64_t entries_added = -1;
  if (!ParseStreamIdOrReply(ctx, ctx.args[2], &id, 0, true, nullptr)) return;
  for (size_t i = 3; i < ctx.args.size();) {
    const bool more = i + 1 < ctx.args.size();
    if (EqualsIgnoreCase(ctx.args[i], "entriesadded") && more) {
      if (!ParseIntArg(ctx, ctx.args[i + 1], &entries_added)) return;
      if (entries_added < 0) {
        ctx.reply.Error("ERR entries_added must be positive");
        return;
      }
      i += 2;
    } else if (EqualsIgnoreCase(ctx.args[i], "maxdeletedid") && more) {
      if (!ParseStreamIdOrReply(ctx, ctx.args[i + 1], &max_deleted, 0, true, nullptr)) return;
      if (id < max_deleted) {
        ctx.reply.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
        return;
      }
      i += 2;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kStream, &e, /*write=*/true)) return;
  if (e == nullptr) {
    ctx.reply.Error(kErrNoSuchKey);
    return;
  }
  StreamObject& s = e->value.mutable_stream();
  if (id < s.max_deleted_id()) {
    ctx.reply.Error("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id");
    return;
  }
  if (s.size() > 0) {
    if (id < s.EdgeID(false, true)) {
      ctx.reply.Error("ERR The ID specified in XSETID is smaller than the target stream top item");
      return;
    }
    if (entries_added != -1 && s.size() > static_cast<uint64_t>(entries_added)) {
      ctx.reply.Error("ERR The entries_added specified in XSETID is smaller than the target stream length");
      return;
    }
  }
  s.set_last_id(id);
  if (entries_added != -1) s.set_entries_added(static_cast<uint64_t>(entries_added));
  if (!(max_deleted == StreamID{})) s.set_max_deleted_id(max_deleted);
  SignalModifiedKey(ctx, ctx.args[1]);
  ctx.reply.Ok();
  Notify(ctx, notify::kStream, "xsetid", ctx.args[1]);
}

}  // namespace

void ReplyStreamRange(CommandContext& ctx, const StreamObject& s, StreamID start, StreamID end, size_t count,
                      bool rev) {
  // Counted first: the reply's length comes before the entries.
  size_t n = 0;
  s.Range(start, end, rev, [&](const StreamObject::EntryView&) { return ++n != count; });
  ctx.reply.ArrayHeader(n);
  if (n == 0) return;
  size_t sent = 0;
  s.Range(start, end, rev, [&](const StreamObject::EntryView& e) {
    ReplyStreamEntry(ctx, e);
    return ++sent < n;
  });
}

void RegisterStreamCommands(CommandTable& t) {
  CommandFamily f(t, kAclStream, "stream");
  f.Add({.name = "xadd", .arity = -5, .flags = kCmdWrite | kCmdDenyOom | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Appends a new message to a stream. Creates the key if it doesn't exist.", .since = "5.0.0",
         .complexity = "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
         .handler = XaddCommand});
  f.Add({.name = "xlen", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Return the number of messages in a stream.", .since = "5.0.0", .complexity = "O(1)",
         .handler = XlenCommand});
  f.Add({.name = "xrange", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns the messages from a stream within a range of IDs.", .since = "5.0.0",
         .complexity = "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking "
                       "for the first 10 elements with COUNT), you can consider it O(1).",
         .handler = XrangeCommand});
  f.Add({.name = "xrevrange", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns the messages from a stream within a range of IDs in reverse order.", .since = "5.0.0",
         .complexity = "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for "
                       "the first 10 elements with COUNT), you can consider it O(1).",
         .handler = XrevrangeCommand});
  f.Add({.name = "xdel", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the number of messages after removing them from a stream.", .since = "5.0.0",
         .complexity = "O(1) for each single item to delete in the stream, regardless of the stream size.",
         .handler = XdelCommand});
  f.Add({.name = "xtrim", .arity = -4, .flags = kCmdWrite, .first_key = 1, .last_key = 1,
         .summary = "Deletes messages from the beginning of a stream.", .since = "5.0.0",
         .complexity = "O(N), with N being the number of evicted entries. Constant times are very small however, since "
                       "entries are organized in macro nodes containing multiple entries that can be released with a "
                       "single deallocation.",
         .handler = XtrimCommand});
  f.Add({.name = "xsetid", .arity = -3, .flags = kCmdWrite | kCmdDenyOom | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "An internal command for replicating stream values.", .since = "5.0.0", .complexity = "O(1)",
         .handler = XsetidCommand});
  RegisterStreamGroupCommands(t);
  RegisterStreamReadCommands(t);
  RegisterStreamInfoCommands(t);
}

}  // namespace peregrine
