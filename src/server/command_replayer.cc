// CommandReplayer (see command_replayer.h).
#include "server/command_replayer.h"

#include <cctype>
#include <cstring>

#include "core/numbers.h"
#include "net/event_loop.h"

#include "server/server.h"
#include "server/worker.h"
#include "server/worker_internal.h"

namespace peregrine {

CommandReplayer::CommandReplayer(Server& server, Worker& worker, Options options)
    : server_(server), worker_(worker), client_(&worker, UINT64_MAX, -1), options_(options) {
  client_.obeyed = true;
}

int CommandReplayer::db() const { return client_.db; }

void CommandReplayer::BeginTransaction() {
  // (A MULTI inside one, an EXEC outside one: the source's error, ignored.)
  if (!options_.logged || in_transaction_) return;
  in_transaction_ = true;
  worker_.aof_log_.BeginGather();
}

void CommandReplayer::EndTransaction() {
  if (!in_transaction_) return;
  in_transaction_ = false;
  worker_.aof_log_.EndGather();
}
void CommandReplayer::set_db(int db) { client_.db = db; }

namespace {

bool Is(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

// now + v units (1000: seconds) as text; false when v is not an integer
// or the sum would not fit (the command then runs as given, and errs).
bool Deadline(std::string_view v, int64_t unit, int64_t now_ms, std::string* out) {
  int64_t n;
  constexpr int64_t kMax = int64_t{1} << 52;  // (past any real deadline, far from overflow)
  if (!ParseInt64(v, &n) || n > kMax / unit || n < -kMax / unit) return false;
  *out = std::to_string(now_ms + n * unit);
  return true;
}

}  // namespace

bool CommandReplayer::AbsoluteDeadline(std::span<const std::string_view> args, int64_t now_ms, std::string* when,
                                       std::vector<std::string_view>* out) {
  const std::string_view name = args[0];
  // Which argument is the deadline, in what unit, and what it becomes
  // (the rest stays a view of the command's own arguments).
  size_t at = 0;
  int64_t unit = 1;
  if ((Is(name, "setex") || Is(name, "psetex")) && args.size() == 4) {
    // SETEX key seconds value -> SET key value PXAT when
    if (!Deadline(args[2], Is(name, "setex") ? 1000 : 1, now_ms, when)) return false;
    *out = {"SET", args[1], args[3], "PXAT", *when};
    return true;
  }
  if ((Is(name, "expire") || Is(name, "pexpire")) && args.size() >= 3) {
    at = 2;
    unit = Is(name, "expire") ? 1000 : 1;
  } else if (Is(name, "set") || Is(name, "getex")) {
    for (size_t i = Is(name, "set") ? 3 : 2; i + 1 < args.size() && at == 0; i++) {
      if (Is(args[i], "ex")) at = i + 1, unit = 1000;
      else if (Is(args[i], "px")) at = i + 1;
    }
  } else if (Is(name, "restore") && args.size() >= 4 && args[2] != "0") {
    // RESTORE key ttl payload [REPLACE] [ABSTTL] ...: a ttl of 0 is none.
    for (size_t i = 4; i < args.size(); i++)
      if (Is(args[i], "absttl")) return false;
    at = 2;
  }
  if (at == 0 || !Deadline(args[at], unit, now_ms, when)) return false;
  out->assign(args.begin(), args.end());
  (*out)[at] = *when;
  if (Is(name, "expire") || Is(name, "pexpire")) (*out)[0] = "PEXPIREAT";
  else if (Is(name, "restore")) out->push_back("ABSTTL");
  else (*out)[at - 1] = "PXAT";
  return true;
}

bool CommandReplayer::Run(std::span<const std::string_view> args, const CommandSpec* found) {
  // (The names that may carry one first: the clock only for those.)
  if (options_.absolute_deadlines && args[0].size() >= 3 && args[0].size() <= 7 &&
      std::strchr("sSeEpPgGrR", args[0][0]) != nullptr && AbsoluteDeadline(args, UnixTimeMs(), &when_, &rewritten_))
      [[unlikely]]
    args = rewritten_;
  // (A rewritten command is another one: looked up again.)
  const CommandSpec* cmd = found != nullptr && args.data() != rewritten_.data() ? found : server_.commands().FindAny(args[0]);
  if (cmd != nullptr && !cmd->subcommands.empty() && args.size() > 1)
    cmd = CommandTable::FindSubcommand(*cmd, args[1]);
  if (cmd == nullptr) return false;
  const int n = static_cast<int>(args.size());
  if ((cmd->arity > 0 && cmd->arity != n) || n < -cmd->arity) return true;  // (Redis runs it; it errs)
  if (cmd->handler == nullptr) return true;
  // Only what can change the data runs: writes, SELECT, and the scripts
  // of old sources (Redis before 5 logged EVAL itself, and SCRIPT LOAD).
  // Anything else (PING, CONFIG, DEBUG, SHUTDOWN, SAVE ...) would change
  // nothing of the data, or the server around it: skipped.
  const bool scripts = options_.scripts;
  const bool runs = (cmd->flags & kCmdWrite) || (scripts && (cmd->flags & kCmdScript)) ||
                    cmd->fullname == "select" || (scripts && cmd->fullname == "script|load") ||
                    cmd->fullname == "pfcount" ||  // (its cached cardinality is part of the value)
                    (options_.publishes && (cmd->flags & kCmdPublishes));
  if (!runs) return true;
  Shard* shard = &server_.shard(0);
  if (cmd->first_key > 0 && cmd->KeyPositions(args, &keys_) && !keys_.empty())
    shard = &server_.shard(server_.ShardIndexOf(args[keys_[0]]));
  out_.Clear();
  ReplyWriter reply(&out_, 2, nullptr);
  // now_ms 0: no key counts as expired (the source's DELs remove them).
  CommandContext ctx{server_, worker_, client_, *shard, args, reply, 0, nullptr};
  client_.last_cmd = cmd;
  worker_.RunScriptNoBlocking([&] {
    if (options_.logged)
      worker_.CallHandler(ctx, cmd);
    else
      cmd->handler(ctx);
    return 0;
  });
  // (INFO unexpected_error_replies: what the primary or the file said failed.)
  if (!out_.empty() && out_.view()[0] == '-') server_.repl_stats().unexpected_errors.fetch_add(1);
  return true;
}

}  // namespace peregrine
