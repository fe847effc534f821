// CommandReplayer (see command_replayer.h).
#include "server/command_replayer.h"

#include "server/server.h"
#include "server/worker.h"
#include "server/worker_internal.h"

namespace peregrine {

CommandReplayer::CommandReplayer(Server& server, Worker& worker, Options options)
    : server_(server), worker_(worker), client_(&worker, UINT64_MAX, -1), options_(options) {
  client_.obeyed = true;
}

int CommandReplayer::db() const { return client_.db; }
void CommandReplayer::set_db(int db) { client_.db = db; }

bool CommandReplayer::Run(std::span<const std::string_view> args) {
  const CommandSpec* cmd = server_.commands().Find(args[0]);
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
  return true;
}

}  // namespace peregrine
