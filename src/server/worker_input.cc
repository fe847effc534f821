// A worker's dispatcher: what ClientIo read, parsed in batches, each command run here, on a
// borrowed shard or on another worker (worker.h, docs/transactions.md).
#include "server/worker.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/lent_blocks.h"
#include "core/memory.h"
#include "core/slot.h"
#include "server/log.h"

#include "server/worker_internal.h"

namespace peregrine {

namespace {

// CLIENT REPLY: whether this command's reply is dropped (CLIENT REPLY
// itself answers as it must), and the mode after a command ran (SKIP's
// next command is the one after it).
// (By the command's own name: rename-command may have given it another.)
bool DropsReply(const Client& c, const CommandSpec* cmd, std::span<const std::string_view> args) {
  if (c.reply_mode != Client::kReplyOff && c.reply_mode != Client::kReplySkip) return false;
  if (cmd == nullptr) return true;
  // (RESET turns OFF off before it answers.)
  if (c.reply_mode == Client::kReplyOff && args.size() == 1 && cmd->name == "reset") return false;
  return !(args.size() >= 2 && cmd->name == "client" && EqualsIgnoreCase(args[1], "reply"));
}
void AdvanceReplyMode(Client& c) {
  if (c.reply_mode == Client::kReplySkip)
    c.reply_mode = Client::kReplyOn;
  else if (c.reply_mode == Client::kReplySkipNext)
    c.reply_mode = Client::kReplySkip;
}
// Where the replies CLIENT REPLY drops are written (emptied before each).
OutputBuffer& DroppedReplies() {
  thread_local OutputBuffer sink;
  return sink;
}

}  // namespace

using namespace worker_internal;






void Worker::ProcessInput(Client& c, Buffer& in) {
  busy_client_ = &c;
  c.reading = &in;
  bool paused = false;
  // A blocked client's input waits (in order) until its wait is over.
  while (!paused && !c.closed && !c.close_after_reply && !c.waiting() && !in.empty() &&
         (c.open_batch == nullptr || c.open_batch->commands.size() < kMaxRelayCommands)) {
    // 1. Parse ahead every complete command (up to kMaxBatch) without running
    //    any: their arguments are views into `in` (or blocks of their own,
    //    StartBigArg), which nothing changes until the batch has run.
    batch_.clear();
    batch_args_.clear();
    size_t offset = 0;
    RequestParser::Result r = RequestParser::Result::kCommand;
    // A pipeline mostly repeats one command: the bytes of the last name
    // looked up are compared first (an exact match gives the same command).
    std::string_view last_name;
    const CommandSpec* last_cmd = nullptr;
    while (batch_.size() < kMaxBatch && offset < in.size()) {
      r = c.parser.Parse(in.data() + offset, in.size() - offset);
      if (r != RequestParser::Result::kCommand) break;
      auto args = c.parser.args();
      if (c.parser.inline_command() && !args.empty()) {
        // Inline arguments live in the parser: run it alone, first in a batch.
        if (!batch_.empty()) break;
        const CommandSpec* cmd = server_.commands().Find(args[0]);
        uint32_t shard = index_;
        if (nworkers_ > 1 && cmd != nullptr && cmd->first_key > 0 && static_cast<size_t>(cmd->first_key) < args.size())
          shard = static_cast<uint32_t>(server_.ShardIndexOf(args[static_cast<size_t>(cmd->first_key)]));
        if (server_.client_pause().active() && HeldByPause(c, cmd, args)) [[unlikely]] {
          paused = true;
          break;
        }
        uint64_t t = CycleClock::Now();
        const bool quiet = c.reply_mode != Client::kReplyOn && DropsReply(c, cmd, args);
        c.quiet = quiet;
        if (nworkers_ == 1) {
          ExecuteCommand(c, args, cmd, nullptr, t);
        } else if (Dispatch(c, args, cmd, nullptr, shard, &t) == Route::kPause) {
          c.quiet = false;
          paused = true;
          break;
        }
        c.quiet = false;
        if (c.reply_mode != Client::kReplyOn) [[unlikely]] {
          if (quiet && c.blocked != nullptr) c.blocked->quiet = true;
          AdvanceReplyMode(c);
        }
        if (c.closed) {
          busy_client_ = nullptr;
          return;
        }
        in.Consume(c.parser.consumed());
        offset = 0;
        if (c.close_after_reply) break;
        if (c.blocked != nullptr || c.wait_acks) {
          paused = true;
          break;
        }
        continue;
      }
      BatchedCommand b{nullptr, static_cast<uint32_t>(batch_args_.size()), static_cast<uint32_t>(args.size()),
                       c.parser.consumed(), {}, index_};
      batch_args_.insert(batch_args_.end(), args.begin(), args.end());
      if (!args.empty()) {
        if (args[0].size() == last_name.size() && last_cmd != nullptr &&
            std::memcmp(args[0].data(), last_name.data(), last_name.size()) == 0) {
          b.cmd = last_cmd;
        } else {
          b.cmd = server_.commands().Find(args[0]);
          last_name = args[0];
          last_cmd = b.cmd;
        }
        if (b.cmd != nullptr && b.cmd->first_key > 0 && static_cast<size_t>(b.cmd->first_key) < args.size()) {
          b.key = CompactKey::MakeProbe(args[static_cast<size_t>(b.cmd->first_key)]);
          if (nworkers_ > 1) b.shard = static_cast<uint32_t>(server_.ShardIndexOf(b.key.bytes));
        }
      }
      batch_.push_back(b);
      offset += b.consumed;
    }
    if (paused) {
      c.parser.Reset();  // the paused command is parsed again when the client resumes
      if (!c.big_args.empty()) ClientIo::SpliceBigArgs(c, in);
      break;
    }
    if (batch_.empty() && r == RequestParser::Result::kCommand) continue;  // only inline commands ran

    // 2. Prefetch: every home group, then the arena line its tag points to,
    //    then the entry, so that the misses of the batch overlap. Only worth
    //    it when there is more than one command, and only for this worker's
    //    own shard (another worker's table may be changing under it).
    if (batch_.size() > 1) {
      Db& db = shard_.db(c.db);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty() && b.shard == index_) db.PrefetchGroup(b.key.hash);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty() && b.shard == index_) db.PrefetchArena(b.key.hash);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty() && b.shard == index_) db.PrefetchEntry(b.key.hash);
    }

    // 3. Run the batch in order.
    uint64_t now_tsc = CycleClock::Now();
    size_t ran = 0;
    for (const BatchedCommand& b : batch_) {
      if (c.close_after_reply) break;
      if (b.nargs > 0) {
        std::span<const std::string_view> args(batch_args_.data() + b.first_arg, b.nargs);
        const CompactKey::Probe* hint = b.key.bytes.empty() ? nullptr : &b.key;
        if (server_.client_pause().active() && HeldByPause(c, b.cmd, args)) [[unlikely]] {
          paused = true;
          break;
        }
        const bool quiet = c.reply_mode != Client::kReplyOn && DropsReply(c, b.cmd, args);
        c.quiet = quiet;
        if (nworkers_ == 1) {
          now_tsc = ExecuteCommand(c, args, b.cmd, hint, now_tsc);
        } else if (Dispatch(c, args, b.cmd, hint, b.shard, &now_tsc) == Route::kPause) {
          c.quiet = false;
          paused = true;
          break;
        }
        c.quiet = false;
        if (c.reply_mode != Client::kReplyOn) [[unlikely]] {
          if (quiet && c.blocked != nullptr) c.blocked->quiet = true;
          AdvanceReplyMode(c);
        }
        if (c.closed) {
          busy_client_ = nullptr;
          return;
        }
      }
      in.Consume(b.consumed);
      ran++;
      if (c.blocked != nullptr || c.wait_acks) [[unlikely]] {
        paused = true;  // the commands after it are parsed again once it is over
        break;
      }
    }
    // The first command of a call may have had large arguments read into
    // blocks of their own (StartBigArg). Once it has run, the blocks no
    // handler took go; paused before it ran, it is parsed again on resuming,
    // with their bytes back in place. (Not yet complete, it keeps them.)
    if (!c.big_args.empty()) [[unlikely]] {
      if (ran > 0)
        c.DropBigArgs();
      else if (paused)
        ClientIo::SpliceBigArgs(c, in);
    }
    if (paused) {
      c.parser.Reset();
      break;
    }
    if (c.close_after_reply) break;

    if (r == RequestParser::Result::kNeedMore) break;
    if (r == RequestParser::Result::kError) {
      if (c.open_batch != nullptr || c.batch_in_flight) {
        // The error reply must follow the replies still to come.
        c.parser.Reset();
        break;
      }
      ReplyWriter reply(&c.out, c.resp, this);
      reply.Error(c.parser.error());
      LOG_VERBOSE("Protocol error (%s) from client: id=%llu addr=%s", c.parser.error().c_str(),
                  static_cast<unsigned long long>(c.id), c.addr.c_str());
      in.Clear();
      c.close_after_reply = true;
      break;
    }
  }
  busy_client_ = nullptr;
  c.reading = nullptr;
  // (A command of 100,000 arguments leaves megabytes of tables: given back.)
  c.parser.ShrinkIfLarge();
  if (batch_args_.capacity() > 4096) std::vector<std::string_view>().swap(batch_args_);
  relay_.SendOpen(c);
  // Half-closed, nothing running elsewhere: its input can complete no command.
  if (c.read_closed && !c.batch_in_flight && !c.claim_wait) c.close_after_reply = true;
  // Replies of commands run before a batch went out leave with the batch's
  // (BatchRelay::Finish writes): one write per pipeline, as with one shard.
  if (!c.batch_in_flight && (!c.out.empty() || c.close_after_reply)) io_.QueueWrite(c);
  io_.HoldReading(c);
}

const CommandSpec* Worker::Resolve(std::span<const std::string_view> args, const CommandSpec* cmd,
                                   std::string* error) const {
  // Redis prints arguments with C's %s: each ends at its first NUL byte.
  if (cmd == nullptr) {
    std::string list;
    for (size_t i = 1; i < args.size() && list.size() < 128; i++) {
      size_t room = 128 - list.size();
      list += "'";
      list += UpToNul(args[i]).substr(0, room);
      list += "' ";
    }
    *error = "ERR unknown command '" + std::string(UpToNul(args[0]).substr(0, 128)) +
             "', with args beginning with: " + list;
    return nullptr;
  }
  if (!cmd->subcommands.empty() && args.size() >= 2) {
    const CommandSpec* sub = CommandTable::FindSubcommand(*cmd, args[1]);
    if (sub == nullptr) {
      *error = "ERR unknown subcommand '" + std::string(UpToNul(args[1]).substr(0, 128)) + "'. Try " +
               Upper(args[0]) + " HELP.";
      return nullptr;
    }
    return sub;
  }
  return cmd;
}

bool Worker::HeldByPause(Client& c, const CommandSpec* cmd, std::span<const std::string_view> args) {
  // (Replicas never wait, as in Redis; nor does a slot migration's import,
  // whose source waits for it with its own writes paused.)
  if (c.replica || c.obeyed || c.import_slots != nullptr) return false;
  // (Read before the pause: a change after it is a newer generation.)
  const uint64_t generation = server_.client_pause().generation();
  const int64_t now = UnixTimeMs();
  int64_t until;
  bool scoped = false;
  const uint8_t actions = server_.client_pause().Paused(now, &until, &scoped);
  if (actions == ClientPause::kNone) return false;
  // What Redis refuses before its pause check is answered now: an unknown
  // command, a wrong arity, no authentication, no permission.
  const CommandSpec* spec = cmd;
  if (spec != nullptr && !spec->subcommands.empty() && args.size() > 1)
    spec = CommandTable::FindSubcommand(*spec, args[1]);
  if (spec == nullptr || !ArityOk(*spec, args.size()) || !c.authenticated) return false;
  if (!c.user->unrestricted && !access_.Permitted(c, *spec, args)) return false;
  if (actions == ClientPause::kWrites) {
    // Writes and what may replicate (EVAL, FCALL, PUBLISH ...); EXEC when
    // its queue has one.
    bool writes = (spec->flags & (kCmdWrite | kCmdMayReplicate)) != 0;
    if ((spec->flags & kCmdExec) && c.multi != nullptr) writes = c.multi->writes;
    if (!writes) return false;
    // A slot migration's handover holds the writes of its slots only: a
    // write command whose keys all lie elsewhere goes on. One without keys,
    // a script (whose keys may be more than it names) or EXEC waits, as
    // for any pause.
    if (scoped && (spec->flags & kCmdWrite) && !(spec->flags & kCmdExec) && spec->first_key > 0 &&
        spec->KeyPositions(args, &key_positions_) && !key_positions_.empty() &&
        std::none_of(key_positions_.begin(), key_positions_.end(),
                     [&](size_t pos) { return server_.client_pause().SlotPaused(SlotOf(args[pos])); }))
      return false;
  }
  c.pause_held = true;
  pause_held_.push_back(c.id);
  pause_gen_ = generation;
  pause_kind_ = std::max(pause_kind_, actions);
  loop_.WakeWithin(std::clamp<int64_t>(until - now, 0, 1000));
  return true;
}

Worker::Route Worker::DispatchWhileLoading(Client& c, std::span<const std::string_view> args,
                                           const CommandSpec* cmd, const CompactKey::Probe* hint, uint64_t* now_tsc) {
  // Here, without asking for other shards (no other worker runs yet, or
  // the command is refused); ExecuteCommand answers -LOADING to what may
  // not run while loading.
  *now_tsc = ExecuteCommand(c, args, cmd, hint, *now_tsc, &shard_);
  return Route::kDone;
}

Worker::Route Worker::Dispatch(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                               const CompactKey::Probe* hint, uint32_t first_key_shard, uint64_t* now_tsc) {
  const bool loading = server_.loading();
  if (loading && server_.startup_loading()) [[unlikely]]
    return DispatchWhileLoading(c, args, cmd, hint, now_tsc);
  const bool waiting = c.open_batch != nullptr || c.batch_in_flight;
  const CommandSpec* spec = cmd;
  if (cmd == nullptr || !cmd->subcommands.empty()) {
    std::string error;
    spec = Resolve(args, cmd, &error);
  }
  // A replica's full sync loading (every worker runs; the load's start and
  // end happen while worker 0 holds every shard, so not between here and
  // ExecuteCommand): what may not run then is answered here, -LOADING,
  // after what the client sent before it.
  if (loading && (spec == nullptr || !(spec->flags & kCmdLoading))) [[unlikely]] {
    if (waiting) return Route::kPause;
    return DispatchWhileLoading(c, args, cmd, hint, now_tsc);
  }
  // Redis Cluster: a command this node does not serve is answered here, in
  // order (ExecuteCommand refuses it); one whose slot is being moved runs
  // holding its shard, where its keys can be looked for.
  bool cluster_open = false;
  if (spec != nullptr && cluster_.enabled() && !c.obeyed && ClusterRoute::Checked(*spec) &&
      ArityOk(*spec, args.size())) [[unlikely]] {
    std::string error;
    const auto v = cluster_.Check(c, *spec, args, nullptr, loop_.iteration_ms(), &error);
    if (v == ClusterRoute::Verdict::kRefuse) {
      if (waiting) return Route::kPause;
      *now_tsc = ExecuteCommand(c, args, cmd, hint, *now_tsc, &shard_);
      return Route::kDone;
    }
    cluster_open = v == ClusterRoute::Verdict::kOpen;
  }
  // A command whose reply CLIENT REPLY drops runs here, at once, holding
  // every shard: its reply is then the one written now (into the sink).
  if (c.quiet) [[unlikely]] {
    if (waiting || (c.stream_hold != 0 && relay_.HoldOutput(c))) return Route::kPause;
    shard_set_.clear();
    for (uint32_t s = 0; s < nworkers_; s++) shard_set_.push_back(s);
    *now_tsc = ExecuteHolding(c, args, cmd, hint, *now_tsc);
    if (TakeScriptRerun()) [[unlikely]]
      *now_tsc = RerunHoldingAll(c, args, cmd, *now_tsc);
    return Route::kDone;
  }
  // Where it runs: errors and keyless commands here; a command whose keys
  // all live on one shard on that shard's worker; otherwise here, holding
  // every shard it touches.
  uint32_t target = index_;
  bool span = false, remote_publish = false;
  // A command of one shard that may run on a relay (ExecBatch): with keys,
  // no script, nothing of the connection's own.
  bool relayable = false;
  if (spec != nullptr && (c.multi != nullptr || (spec->flags & kCmdExec))) [[unlikely]] {
    // Queued here (or MULTI, DISCARD, WATCH's refusal); EXEC holds the
    // shards of the queued commands' keys (after what the client's earlier
    // commands here wait for in the stream: stream_hold).
    if (waiting) return Route::kPause;
    if ((spec->flags & kCmdExec) && c.stream_hold != 0 && relay_.HoldOutput(c)) return Route::kPause;
    bool keyed = false;
    if ((spec->flags & kCmdExec) && txn_.Shards(c, &shard_set_, &keyed)) {
      // All of it on one other worker's shard: run there, as one batch.
      // (A user with restricted permissions runs it here, where EXEC and
      // each queued command are checked.)
      if (keyed && shard_set_.size() == 1 && shard_set_[0] != index_ && ArityOk(*spec, args.size()) && !cluster_open &&
          c.authenticated && c.user->unrestricted && txn_.SendWhole(c, spec, args[0], shard_set_[0]))
        return Route::kDone;
      shard_set_.push_back(index_);
      std::sort(shard_set_.begin(), shard_set_.end());
      shard_set_.erase(std::unique(shard_set_.begin(), shard_set_.end()), shard_set_.end());
      if (shard_set_.size() > 1) {
        *now_tsc = ExecuteHolding(c, args, cmd, hint, *now_tsc);
        return Route::kDone;
      }
      if (relay_.HoldClient(c)) return Route::kPause;  // (as a command of this shard, below)
    }
    *now_tsc = ExecuteCommand(c, args, cmd, hint, *now_tsc, &shard_);
    return Route::kDone;
  }
  // A command refused to a subscribed client is answered here (the ones it
  // may run have no keys), in order.
  if (spec != nullptr && !RefusedWhileSubscribed(c, *spec) && ArityOk(*spec, args.size())) {
    if (spec->flags & kCmdScript) [[unlikely]] {
      // A script: on its declared keys' shards (here without any), or
      // holding every shard once it is known to touch others.
      shard_set_.clear();
      if (ScriptNeedsAllShards(args, spec)) {
        for (uint32_t s = 0; s < nworkers_; s++) shard_set_.push_back(s);
        span = true;
      } else if (spec->KeyPositions(args, &key_positions_) && !key_positions_.empty()) {
        for (size_t pos : key_positions_) shard_set_.push_back(static_cast<uint32_t>(server_.ShardIndexOf(args[pos])));
        target = shard_set_[0];
        span = std::any_of(shard_set_.begin(), shard_set_.end(), [&](uint32_t s) { return s != target; });
      }
    } else if (spec->first_key > 0) {
      if (spec != cmd || hint == nullptr)
        first_key_shard = static_cast<uint32_t>(server_.ShardIndexOf(args[static_cast<size_t>(spec->first_key)]));
      target = first_key_shard;
      if ((spec->last_key != spec->first_key || spec->numkeys_index > 0 || spec->find_keys != nullptr) &&
          spec->KeyPositions(args, &key_positions_)) {
        shard_set_.clear();
        for (size_t pos : key_positions_) shard_set_.push_back(static_cast<uint32_t>(server_.ShardIndexOf(args[pos])));
        span = std::any_of(shard_set_.begin(), shard_set_.end(), [&](uint32_t s) { return s != target; });
      }
      if (spec->all_shards_when != nullptr && nworkers_ > 1 && spec->all_shards_when(args)) [[unlikely]] {
        shard_set_.clear();
        for (uint32_t s = 0; s < nworkers_; s++) shard_set_.push_back(s);
        span = true;
      }
      if ((spec->flags & kCmdLocal) && (span || target != index_)) [[unlikely]] {
        // Here, holding the keys' shards (the key positions were read:
        // kCmdLocal commands have several keys).
        span = true;
        target = index_;
      }
      relayable = !span && !(spec->flags & kCmdLocal);
    } else if (spec->flags & kCmdAllShards) {
      span = true;
      shard_set_.clear();
      for (uint32_t s = 0; s < nworkers_; s++) shard_set_.push_back(s);
    } else if (spec->flags & kCmdPublishes) {
      // PUBLISH: the other workers with subscribers (a subscription made
      // after this read is one made after the message was published). None:
      // here. One: delivered here now, there in a batch like any remote
      // command, whose reply adds both counts. Several: run here holding
      // them all (docs/pubsub.md).
      shard_set_.clear();
      for (uint32_t s = 0; s < nworkers_; s++)
        if (s != index_ && server_.worker(s).pubsub().subscriptions() > 0) shard_set_.push_back(s);
      if (shard_set_.size() == 1) {
        remote_publish = true;
        target = shard_set_[0];
      } else {
        span = !shard_set_.empty();
      }
    }
  }
  if (cluster_open && !span) [[unlikely]] {
    span = true;
    shard_set_.assign(1, target);
    target = index_;
  }
  if (span) {
    if (waiting || (c.stream_hold != 0 && relay_.HoldOutput(c))) return Route::kPause;
    shard_set_.push_back(index_);
    std::sort(shard_set_.begin(), shard_set_.end());
    shard_set_.erase(std::unique(shard_set_.begin(), shard_set_.end()), shard_set_.end());
    *now_tsc = ExecuteHolding(c, args, cmd, hint, *now_tsc);
    if (TakeScriptRerun()) [[unlikely]]
      *now_tsc = RerunHoldingAll(c, args, cmd, *now_tsc);
    return Route::kDone;
  }
  // A command for this shard after others that run elsewhere joins their
  // relay, and runs here when it comes back (a restricted user's is
  // checked here first, below, in order).
  const bool open_relay = c.open_batch != nullptr && !c.open_batch->sealed;  // (a whole MULTI/EXEC is sealed)
  if (target == index_ && open_relay && relayable && !(spec->flags & kCmdBlocking) && c.authenticated &&
      c.user->unrestricted) {
    c.asking = false;  // (ExecuteCommand's reset, for a command run elsewhere)
    relay_.Add(c, args, spec, spec == cmd ? hint : nullptr, target, false, 0);
    if (c.tracking != 0 || c.no_touch) [[unlikely]]
      relay_.NoteModes(c);
    return Route::kDone;
  }
  if (target == index_) {
    // (Write groups registered on this shard before now run first; a
    // command without keys touches none of it.)
    if (waiting) return Route::kPause;
    if (spec != nullptr && (spec->first_key > 0 || (spec->flags & kCmdScript)) && relay_.HoldClient(c))
      return Route::kPause;
    *now_tsc = ExecuteCommand(c, args, cmd, hint, *now_tsc, (spec != nullptr && (spec->flags & kCmdScript)) ? nullptr : &shard_);
    if (TakeScriptRerun()) [[unlikely]]
      *now_tsc = RerunHoldingAll(c, args, cmd, *now_tsc);
    return Route::kDone;
  }
  // Not authenticated, or a permission denied: answered here (in order),
  // where ExecuteCommand refuses it before it runs.
  if (!(c.authenticated && c.user->unrestricted) && !access_.Permitted(c, *spec, args)) [[unlikely]] {
    if (waiting) return Route::kPause;
    *now_tsc = ExecuteCommand(c, args, cmd, hint, *now_tsc, &shard_);
    return Route::kDone;
  }
  // Another worker's shard: join the client's open relay, or open one.
  if (c.open_batch != nullptr ? !open_relay : c.batch_in_flight) return Route::kPause;
  if (remote_publish && c.open_batch != nullptr && !c.open_batch->only_publishes) {
    // Its local delivery must not come before the client's earlier commands
    // in that batch have run: a subscriber told of a change must be able to
    // read it (not only through the FIFO ring: one may tell a client elsewhere).
    return Route::kPause;
  }
  size_t published_here = 0;
  if (remote_publish) {
    // This worker's subscribers now, before the batch is touched: a delivery
    // may close `c` itself (over its output limit), recycling its open batch;
    // the other worker's subscribers still get it, in a batch nobody awaits.
    published_here = Publish(args[1], args[2], true, spec->flags & kCmdShardChannels);
  }
  c.asking = false;
  relay_.Add(c, args, spec, spec == cmd ? hint : nullptr, target, remote_publish, published_here);
  if (c.tracking != 0 || c.no_touch) [[unlikely]]
    relay_.NoteModes(c);
  return Route::kDone;
}

uint64_t Worker::ExecuteHolding(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                                const CompactKey::Probe* hint, uint64_t start) {
  AcquireShards(shard_set_);
  holding_ = true;
  const uint64_t end = ExecuteCommand(c, args, cmd, hint, start);
  holding_ = false;
  router_.GiveBack(shard_set_);
  return end;
}

uint64_t Worker::ExecuteCommand(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                                const CompactKey::Probe* hint, uint64_t start, Shard* shard) {
  OutputBuffer* out = &c.out;
  // (CLIENT REPLY OFF or SKIP; (un)subscribing's confirmations are pushes, sent as Redis's.)
  if (c.quiet && !(cmd != nullptr && (cmd->flags & kCmdPubsub) && cmd->name.ends_with("subscribe"))) [[unlikely]] {
    out = &DroppedReplies();
    out->Clear();
  }
  ReplyWriter reply(out, c.resp, this);
  // Unknown commands and containers (CONFIG GET ...) off the hot path.
  if (__builtin_expect(cmd == nullptr || !cmd->subcommands.empty(), 0)) {
    std::string error;
    cmd = Resolve(args, cmd, &error);
    if (cmd == nullptr) {
      c.last_cmd = nullptr;  // CLIENT LIST: cmd=NULL, as Redis
      reply.Error(error);
      if (c.multi != nullptr) c.multi->aborted = true;
      return start;
    }
  }
  // Set before the checks: Redis's CLIENT LIST names a command refused for
  // its arity, in a subscribed context or over maxmemory too.
  c.last_cmd = cmd;
  // ASKING holds for the next command (a transaction's, until its EXEC),
  // refused or run, scripts' calls included: cleared once it is over.
  struct AskingEnd {
    Client& c;
    const CommandSpec* cmd;
    bool in_exec;
    ~AskingEnd() {
      if (c.asking && !in_exec && c.multi == nullptr && cmd->name != "asking") c.asking = false;
      // CLIENT CACHING holds the same way (a CLIENT command keeps it).
      if ((c.tracking & tracking::kCaching) && !in_exec && c.multi == nullptr &&
          (cmd->parent == nullptr || cmd->parent->name != "client"))
        c.tracking &= static_cast<uint8_t>(~tracking::kCaching);
    }
  } asking_end{c, cmd, in_exec_};
  // A refusal inside MULTI also dooms the transaction (Redis's
  // flagTransaction); a refused EXEC ends it (execCommandAbort).
  auto reject = [&](std::string_view error) {
    command_stats_[cmd->id].rejected_calls++;
    if (cmd->flags & kCmdExec) {
      DiscardTransaction(c);
      if (error.starts_with("ERR ")) error.remove_prefix(4);
      reply.Error("EXECABORT Transaction discarded because of: " + std::string(error));
    } else {
      reply.Error(error);
      if (c.multi != nullptr) c.multi->aborted = true;
    }
    return start;
  };
  if (!ArityOk(*cmd, args.size())) return reject("ERR wrong number of arguments for '" + cmd->fullname + "' command");
  if (cmd->flags & kCmdProtected) [[unlikely]]
    if (std::string refusal = access_.ProtectedRefusal(c, *cmd); !refusal.empty()) return reject(refusal);
  // Authentication and the ACL user's permissions (one branch for a user
  // with every permission).
  if (!c.authenticated || !c.user->unrestricted) [[unlikely]] {
    const std::string error = access_.AccessError(c, *cmd, args);
    if (!error.empty()) return reject(error);
  }
  // Redis Cluster's redirections (cluster_route.h); a refused EXEC
  // discards its transaction and answers the redirection itself. (Not for
  // the commands EXEC runs: EXEC was checked with its whole queue.)
  if (cluster_.enabled() && !c.obeyed && !in_exec_ && ClusterRoute::Checked(*cmd)) [[unlikely]] {
    std::string error;
    auto db_of = [&](std::string_view key) -> Db* {
      const uint32_t s = static_cast<uint32_t>(server_.ShardIndexOf(key));
      if (nworkers_ == 1 || s == index_ || (holding_ && std::binary_search(shard_set_.begin(), shard_set_.end(), s)))
        return &server_.shard(s).db(0);
      return nullptr;
    };
    auto verdict = cluster_.Check(c, *cmd, args, db_of, loop_.MsAt(start), &error);
    // Dispatch sent it here on an older slot table, which has changed
    // since: its keys may be another shard's, not held here. (A command
    // being queued touches none.)
    const bool queuing = c.multi != nullptr && !(cmd->flags & kCmdNotQueued);
    const bool runs_nothing = (cmd->flags & kCmdExec) && (c.multi == nullptr || c.multi->aborted);
    if (verdict != ClusterRoute::Verdict::kRefuse && !queuing && !runs_nothing && nworkers_ > 1 && !holding_ &&
        server_.load_state() == 0 &&
        cluster_.last_slot() >= 0 &&
        static_cast<uint32_t>(static_cast<size_t>(cluster_.last_slot()) * nworkers_ / kNumSlots) != index_) {
      error = "TRYAGAIN Multiple keys request during rehashing of slot";
      verdict = ClusterRoute::Verdict::kRefuse;
    }
    // A write that passed the pause of a slot's handover just before it
    // began, and came here after the shard sent its last changes: refused
    // (the client retries, and is sent to the target), or it would be lost.
    if (verdict != ClusterRoute::Verdict::kRefuse && !queuing && !runs_nothing && cluster_.last_slot() >= 0 &&
        server_.cluster()->migrating() && server_.cluster()->SlotFrozen(cluster_.last_slot()) &&
        ((cmd->flags & kCmdExec) ? c.multi != nullptr && c.multi->writes
                                 : (cmd->flags & (kCmdWrite | kCmdMayReplicate)) != 0)) [[unlikely]] {
      error = "TRYAGAIN Slot is being handed over to another node";
      verdict = ClusterRoute::Verdict::kRefuse;
    }
    if (verdict == ClusterRoute::Verdict::kRefuse) {
      if (!(cmd->flags & kCmdExec)) return reject(error);
      command_stats_[cmd->id].rejected_calls++;
      DiscardTransaction(c);
      reply.Error(error);
      return start;
    }
  }
  if (RefusedWhileSubscribed(c, *cmd)) {
    return reject("ERR Can't execute '" + cmd->fullname +
                  "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
  }
  // EXEC of a transaction that may add memory: the maxmemory check of its
  // commands (Redis 7 makes it at EXEC too, with the queue's flags).
  if ((cmd->flags & kCmdExec) && c.multi != nullptr && c.multi->denyoom && !c.multi->aborted &&
      server_.config().maxmemory > 0 && !EnforceMaxmemory(shard_))
    return reject("OOM command not allowed when used memory > 'maxmemory'.");
  // The start-up load is still going (worker 0 alone serves): only what
  // Redis allows while loading runs (INFO, CONFIG, SHUTDOWN ...).
  if (server_.is_replica() && !(cmd->flags & kCmdStale) && !server_.ServesStaleData()) [[unlikely]]
    return reject(ServerState::kMasterDownError);
  if (const uint8_t load = server_.load_state(); load != 0) [[unlikely]] {
    if (((load & ServerState::kLoading) && !(cmd->flags & kCmdLoading)) ||
        ((load & ServerState::kAsyncLoad) && (cmd->flags & kCmdNoAsyncLoading)))
      return reject("LOADING Redis is loading the dataset in memory");
  }
  // CLIENT TRACKING's tables over tracking-table-max-keys are trimmed before
  // any command runs or is queued, the invalidations before its reply (Redis).
  if (server_.tracking().clients().load(std::memory_order_relaxed) > 0) [[unlikely]]
    LimitTrackingTables(c);
  if (c.multi != nullptr && !(cmd->flags & kCmdNotQueued)) [[unlikely]] {
    if (cmd->flags & kCmdNoMulti) return reject("ERR Command not allowed inside a transaction");
    // (Run refuses what runs; a write is refused here as it is queued.)
    if (RefusedAfterSaveError(*cmd)) return reject(MisconfError(server_));
    if ((cmd->flags & kCmdWrite) && server_.NotEnoughGoodReplicas()) return reject(Config::kNoReplicasError);
    if ((cmd->flags & kCmdWrite) && server_.read_only_replica()) return reject(ServerState::kReadOnlyError);
    // Over maxmemory nothing is queued, reads included: the queue itself
    // takes memory (Redis's bound on it).
    if (server_.config().maxmemory > 0 && !EnforceMaxmemory(shard_))
      return reject("OOM command not allowed when used memory > 'maxmemory'.");
    TransactionRunner::Queue(c, args, cmd);
    reply.SimpleString("QUEUED");
    return start;
  }
  // The shard owning the first key (this worker's, or one the command holds).
  if (shard == nullptr) {
    shard = &shard_;
    // (XREAD's first key follows STREAMS: FirstKeyIndex parses.)
    if (nworkers_ > 1 && cmd->first_key > 0)
      if (const size_t first = cmd->FirstKeyIndex(args, &key_positions_); first > 0)
        shard = &server_.shard(server_.ShardIndexOf(args[first]));
  }
  if (c.tracking != 0) [[unlikely]]
    c.track_reads = tracking::TracksReads(c.tracking);
  const uint64_t end = Run(c, cmd, args, reply, *shard, hint, loop_.MsAt(start), start);
  // What it replies may show a write group's part that the replication
  // stream does not have yet: it waits for it (BatchRelay::HoldOutput).
  // (Not a replica's: its stream and snapshot never wait for the stream.)
  if (const uint64_t hold = relay_.StreamHoldNow(); hold != 0 && !c.replica) [[unlikely]]
    c.HoldForStream(hold);
  if (waits_.blocked_now() != nullptr) [[unlikely]]
    waits_.BlockClient(c, waits_.TakeBlockedNow());
  if (__builtin_expect(cmd->flags & kCmdAllShards, 0)) ApplyConfigIfChanged();  // CONFIG SET: this worker's part at once
  // May close c (the caller checks c.closed).
  if (__builtin_expect(reply.cut(), 0)) {
    io_.CloseOverLimit(c);
  } else {
    io_.OverOutputLimit(c);
  }
  return end;
}

}  // namespace peregrine
