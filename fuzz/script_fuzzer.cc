// libFuzzer target over scripting (issue #35): every input becomes a Lua
// script that an in-process server runs through EVAL & co. — the compiler,
// the sandbox and its read-only tables, every library function (base,
// coroutine, string, table, math, os, cjson, cmsgpack, struct, bit, redis.*)
// with hostile arguments, redis.call into every command family, the
// conversions of replies to Lua values and of Lua values to replies, the
// memory and instruction limits, and the shard rules of first and known
// runs. A crash, a sanitizer report, a leak, a reply that is not valid RESP
// (the harness checks every byte it reads), or a server that does not answer
// is a finding (a hang: 10 s without progress between polls, or libFuzzer's
// -timeout for a script stuck inside one), and so is a server that does not
// answer the final PING (on a new connection if the script's reply had the
// first closed). One server per configuration serves input after input,
// reset in between (struct Instance says what is reset and why that is
// enough); building a server costs more than most inputs.
//
// Input: three header bytes, then the body.
//   byte 0  bit 0: the body is a Lua script sent as it is (0), or a stream
//                  of choices for a generator of Lua programs (1, below)
//           bit 1: two workers (the second on its own thread; keys live on
//                  either shard, scripts borrow shards, stop and run again)
//           bit 2: HELLO 3 first (replies in RESP3)
//           bits 3-5: how the script is sent: EVAL, EVAL_RO, SCRIPT LOAD +
//                  EVALSHA, SCRIPT LOAD + EVALSHA_RO, FUNCTION LOAD + FCALL,
//                  FUNCTION LOAD (no-writes) + FCALL_RO, EVAL with a
//                  `#!lua flags=...` shebang, MULTI + EVAL + EXEC
//           bit 6: sent twice (the second run is a known script: other
//                  shard rules)
//           bit 7: keys of every type made first
//   byte 1  bits 0-1: numkeys (0-3); bits 2-3: the number of ARGV (0-3);
//           bit 4: lua-enable-deprecated-api (newproxy, setfenv, getfenv);
//           bit 5: SCRIPT FLUSH + FUNCTION FLUSH between the two sends;
//           bits 6-7: 3: a hostile numkeys; 2: maxmemory of 1 byte
//                  (noeviction: scripts meet the OOM rules)
//   byte 2  bits 0-2: which key names; bits 3-5: which ARGV values;
//           bit 6: SELECT 9 first; bit 7: the shebang's script via EVAL_RO,
//           and for functions: the library's body runs at load time
//
// The generator (class LuaGen, script/lua_gen.h) reads its choices with
// FuzzedDataProvider: statements (locals, assignments to locals, globals,
// library fields and protected tables, if, bounded loops, generic for,
// pcall / xpcall, functions and recursion, coroutines, early returns),
// expressions (hostile numbers and strings, tables deep, sparse,
// self-referencing, with metatables, reply-shaped tables, functions,
// coroutines) and calls of every library function with arguments of the
// kinds it expects (Lua patterns, string.format and struct formats, JSON
// and MessagePack texts, redis.call commands from templates) or of any
// kind. Its programs stay within a few KB, and its loops are bounded;
// endless ones still stop at script_instruction_limit, and lua-maxmemory
// bounds what a script holds.
//
// PEREGRINE_FUZZ_PRINT=1 in the environment prints every command sent
// (to read what a grammar-mode input runs); PEREGRINE_FUZZ_TIMING=1 how
// long each input's commands took.
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/event_loop.h"
#include "script/lua_gen.h"
#include "script/resp_checker.h"
#include "scripting/script_cache.h"
#include "server/config.h"
#include "commands/all_commands.h"
#include "server/server.h"
#include "server/worker.h"

namespace {

using peregrine::Config;
using peregrine::Server;
using peregrine::Worker;
using peregrine_fuzz::Fail;
using peregrine_fuzz::LuaGen;
using peregrine_fuzz::RespChecker;

constexpr int64_t kAnswerWithinMs = 10000;

// --- Commands ---

using Command = std::vector<std::string>;

void AppendResp(std::string* out, const Command& c) {
  *out += "*" + std::to_string(c.size()) + "\r\n";
  for (const std::string& a : c) {
    *out += "$" + std::to_string(a.size()) + "\r\n";
    *out += a;
    *out += "\r\n";
  }
}

void Print(const std::vector<Command>& cmds) {
  for (const Command& c : cmds) {
    std::string line;
    for (const std::string& a : c) {
      if (!line.empty()) line += ' ';
      if (a.find_first_of(" \n") != std::string::npos) {
        line += "<<\n" + a + "\n>>";
      } else {
        line += a;
      }
    }
    std::fprintf(stderr, "> %s\n", line.c_str());
  }
}

constexpr const char* kEvalKeys[] = {"k", "{a}1", "l", "h", "s", "z", "x", "{b}2", "b", "p", "g", "{a}2"};
constexpr const char* kEvalArgs[] = {"1", "0", "-1", "abc", "", "2147483648", "1e308", "v", "nan", "-inf",
                                     "9223372036854775807", "k", "\xff\x00\x01"};

// What the header bytes choose.
struct Plan {
  bool grammar, two_workers, resp3, twice, populate;
  int delivery;
  int numkeys, nargs;
  bool deprecated_api, flush_between, hostile_numkeys, tiny_maxmemory;
  int key_rotation, arg_rotation;
  bool select9, variant;
};

Plan ReadPlan(const uint8_t* h) {
  Plan p;
  p.grammar = h[0] & 1;
  p.two_workers = h[0] & 2;
  p.resp3 = h[0] & 4;
  p.delivery = (h[0] >> 3) & 7;
  p.twice = h[0] & 0x40;
  p.populate = h[0] & 0x80;
  p.numkeys = h[1] & 3;
  p.nargs = (h[1] >> 2) & 3;
  p.deprecated_api = h[1] & 0x10;
  p.flush_between = h[1] & 0x20;
  p.hostile_numkeys = ((h[1] >> 6) & 3) == 3;
  p.tiny_maxmemory = ((h[1] >> 6) & 3) == 2;
  p.key_rotation = h[2] & 7;
  p.arg_rotation = (h[2] >> 3) & 7;
  p.select9 = h[2] & 0x40;
  p.variant = h[2] & 0x80;
  return p;
}

std::vector<Command> Commands(const Plan& p, const std::string& script, const uint8_t* h) {
  std::vector<Command> cmds;
  if (p.resp3) cmds.push_back({"HELLO", "3"});
  if (p.select9) cmds.push_back({"SELECT", "9"});
  if (p.populate) {
    cmds.push_back({"SET", "k", "1"});
    cmds.push_back({"RPUSH", "l", "a", "b", "c", "1", "2", "3"});
    cmds.push_back({"HSET", "h", "f", "v", "n", "1"});
    cmds.push_back({"SADD", "s", "a", "b", "1"});
    cmds.push_back({"ZADD", "z", "1", "a", "2", "b", "-inf", "c"});
    cmds.push_back({"XADD", "x", "1-1", "f", "v"});
    cmds.push_back({"SET", "{a}1", "hello"});
    cmds.push_back({"SETBIT", "b", "7", "1"});
    cmds.push_back({"PFADD", "p", "a", "b"});
    cmds.push_back({"GEOADD", "g", "13.361389", "38.115556", "m"});
    cmds.push_back({"EXPIRE", "k", "1000"});
    cmds.push_back({"SET", "{b}2", ""});
  }

  std::vector<std::string> keys, args;
  for (int i = 0; i < p.numkeys; i++) keys.push_back(kEvalKeys[(i + p.key_rotation) % std::size(kEvalKeys)]);
  for (int i = 0; i < p.nargs; i++) args.push_back(kEvalArgs[(i + p.arg_rotation) % std::size(kEvalArgs)]);
  std::string numkeys = std::to_string(keys.size());
  if (p.hostile_numkeys) {
    static constexpr const char* kHostile[] = {"-1", "4", "abc", "9223372036854775808", "1.5", "", "2147483648",
                                               "-9223372036854775808"};
    numkeys = kHostile[(h[2] >> 3) & 7];
  }
  auto with_keys = [&](Command c) {
    c.push_back(numkeys);
    c.insert(c.end(), keys.begin(), keys.end());
    c.insert(c.end(), args.begin(), args.end());
    return c;
  };

  std::string body = script, library;
  if (p.delivery == 6) {
    static constexpr const char* kFlags[] = {"no-writes", "allow-oom", "allow-stale", "no-cluster",
                                             "allow-cross-slot-keys", "nosuch"};
    std::string flags;
    for (size_t i = 0; i < std::size(kFlags); i++)
      if ((h[2] >> i) & 1) flags += (flags.empty() ? "" : ",") + std::string(kFlags[i]);
    body = (h[1] & 1 ? std::string("#!lua\n") : "#!lua flags=" + flags + "\n") + script;
  }
  if (p.delivery == 4 || p.delivery == 5) {
    const std::string flags = p.delivery == 5 ? "{'no-writes'}" : "{}";
    if (p.variant)  // the body at load time, in the load-time environment
      library = "#!lua name=fz\nredis.register_function{function_name='f', callback=function(KEYS, ARGV) return 1 "
                "end, flags=" + flags + "}\n" + script + "\n";
    else
      library = "#!lua name=fz\nredis.register_function{function_name='f', callback=function(KEYS, ARGV, ...)\n" +
                script + "\nend, flags=" + flags + "}\n";
  }
  const std::string sha = peregrine::Sha1Hex(body);
  auto setup = [&] {
    if (p.delivery == 2 || p.delivery == 3) cmds.push_back({"SCRIPT", "LOAD", body});
    if (p.delivery == 4 || p.delivery == 5) cmds.push_back({"FUNCTION", "LOAD", "REPLACE", library});
  };
  auto run = [&] {
    switch (p.delivery) {
      case 0: cmds.push_back(with_keys({"EVAL", body})); break;
      case 1: cmds.push_back(with_keys({"EVAL_RO", body})); break;
      case 2: cmds.push_back(with_keys({"EVALSHA", sha})); break;
      case 3: cmds.push_back(with_keys({"EVALSHA_RO", sha})); break;
      case 4: cmds.push_back(with_keys({"FCALL", "f"})); break;
      case 5: cmds.push_back(with_keys({"FCALL_RO", "f"})); break;
      case 6: cmds.push_back(with_keys({p.variant ? "EVAL_RO" : "EVAL", body})); break;
      default:
        cmds.push_back({"MULTI"});
        cmds.push_back(with_keys({"EVAL", body}));
        cmds.push_back({"EXEC"});
        break;
    }
  };
  setup();
  run();
  if (p.twice) {
    if (p.flush_between) {
      cmds.push_back({"SCRIPT", "FLUSH", p.variant ? "ASYNC" : "SYNC"});
      cmds.push_back({"FUNCTION", "FLUSH"});
      setup();
    }
    run();
  }
  cmds.push_back({"PING"});
  return cmds;
}

// The server's configuration. What differs between inputs and is fixed at
// start-up (workers, lua-enable-deprecated-api) picks one of four servers;
// the 1-byte maxmemory is a CONFIG SET of the input.
Config FuzzConfig(bool two_workers, bool deprecated_api) {
  Config c;
  c.port = 0;
  c.bind.clear();
  c.threads = two_workers ? 2 : 1;
  c.loglevel = "nothing";
  c.proto_max_bulk_len = 1024 * 1024;  // (SETRANGE and SETBIT stop at 1 MB)
  c.client_query_buffer_limit = 1024 * 1024;
  // Scripts never go busy (nobody would send SCRIPT KILL); one that loops
  // for ever stops after a million instructions (a quarter of a second
  // under the sanitizers), and one cannot hold
  // more than 8 MB of Lua memory (more would only make runs slow under the
  // sanitizers: a string of 8 MB takes a second to build there).
  c.busy_reply_threshold = 0;
  c.script_instruction_limit = 1'000'000;
  c.lua_maxmemory = 8 << 20;
  c.lua_enable_deprecated_api = deprecated_api;
  c.save_params.clear();
  c.dbfilename = "peregrine-script-fuzz.rdb";
  return c;
}

struct Outcome {
  size_t replies = 0;
  size_t errors = 0;
  bool closed = false;
  std::string last;
};

// Sends `bytes` (`count` commands) on a new connection of worker 0 and reads
// the replies until all have come or the server closed the connection.
Outcome Exchange(Server& server, Worker& worker, uint64_t id, const std::string& bytes, size_t count, bool resp3) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    std::perror("socketpair");
    std::abort();
  }
  worker.connections().fetch_add(1, std::memory_order_relaxed);  // as the acceptor counts it
  worker.Adopt(sv[0], /*is_unix=*/true, id);
  RespChecker checker(resp3);
  Outcome out;
  size_t off = 0;
  int64_t last_progress = peregrine::MonotonicMs();
  static char sink[256 * 1024];
  for (;;) {
    if (off < bytes.size()) {
      const ssize_t n = write(sv[1], bytes.data() + off, bytes.size() - off);
      if (n > 0) off += static_cast<size_t>(n);
    }
    worker.loop().Poll(off < bytes.size() ? 0 : 1);
    bool progress = false;
    for (;;) {
      const ssize_t n = read(sv[1], sink, sizeof(sink));
      if (n > 0) {
        checker.Feed(sink, static_cast<size_t>(n));
        progress = true;
        continue;
      }
      if (n == 0) out.closed = true;
      break;
    }
    if (checker.replies() >= count || out.closed || server.stopping()) break;
    // A script runs inside Poll, however long it takes (libFuzzer's
    // -timeout bounds that); between polls, the server must make progress.
    const int64_t now = peregrine::MonotonicMs();
    if (progress) last_progress = now;
    if (now - last_progress > kAnswerWithinMs) {
      std::fprintf(stderr, "script_fuzzer: %zu of %zu replies, nothing for %lld ms\n", checker.replies(), count,
                   static_cast<long long>(kAnswerWithinMs));
      Fail("the server stopped answering (a hang)");
    }
  }
  if (checker.replies() > count) Fail("more replies than commands");
  out.replies = checker.replies();
  out.errors = checker.errors();
  out.last = checker.last();
  close(sv[1]);
  return out;
}

// A server kept from one input to the next: building one costs more than
// running most inputs (the command table, the workers), so each of the
// four configurations has one, reset after every input. What an input can
// leave behind and how it goes:
//   - keys in every database, expiries: FLUSHALL;
//   - the script cache and each worker's scripts' interpreter (its globals,
//     cjson settings, a stopped collector, pending finalizers): SCRIPT FLUSH
//     replaces the interpreters;
//   - the function registry: FUNCTION FLUSH; the functions' interpreter is
//     not replaced by it, so a server that ran FUNCTION LOAD / FCALL is
//     not kept (built again for the next input);
//   - maxmemory: CONFIG SET maxmemory 0;
//   - the connection and its state (SELECT, HELLO, MULTI): each input has
//     its own, closed before the next input starts;
//   - scripts cannot reach CONFIG, CLIENT, ACL, DEBUG or anything else that
//     changes the server (all noscript), nor block, nor subscribe.
// What stays: statistics, the slow log, math.random's generator state
// (per thread, as with a fresh server). A server whose reset fails, or
// that stops, is not kept either.
struct Instance {
  std::unique_ptr<Server> server;
  std::thread other;
  uint64_t next_client = 1;

  Instance(bool two_workers, bool deprecated_api) {
    server = std::make_unique<Server>(FuzzConfig(two_workers, deprecated_api), peregrine::AllCommands(), "", "peregrine-fuzz");
    std::string err;
    if (!server->InitWorkers(&err)) {
      std::fprintf(stderr, "InitWorkers: %s\n", err.c_str());
      std::abort();
    }
    server->ApplyRuntimeConfig();  // the log level ("nothing")
    if (two_workers) other = std::thread([s = server.get()] { s->worker(1).Run(); });
  }
  ~Instance() {
    if (other.joinable()) {
      // Stops both workers as the server does: worker 0's Run() sees the
      // flag at once, closes its clients and answers worker 1 until both
      // have stopped.
      server->RequestShutdown();
      server->worker(0).Run();
      other.join();
    }
  }

  // Resets what the input left (above); false if this server cannot be
  // kept.
  bool Reset(bool maxmemory_set) {
    Worker& worker = server->worker(0);
    std::string bytes;
    size_t count = 0;
    auto add = [&](const Command& c) {
      AppendResp(&bytes, c);
      count++;
    };
    if (maxmemory_set) add({"CONFIG", "SET", "maxmemory", "0"});
    add({"FUNCTION", "FLUSH", "SYNC"});
    add({"SCRIPT", "FLUSH", "SYNC"});
    add({"FLUSHALL", "SYNC"});
    add({"PING"});
    const Outcome out = Exchange(*server, worker, next_client++, bytes, count, false);
    if (server->stopping()) return false;
    if (out.replies != count || out.errors != 0 || out.last != "+PONG\r\n")
      Fail("the reset after the input failed", out.last);
    // Every connection of the input closed before the next input starts.
    const int64_t start = peregrine::MonotonicMs();
    while (!worker.clients().empty()) {
      worker.loop().Poll(1);
      if (peregrine::MonotonicMs() - start > kAnswerWithinMs) Fail("the server did not close a closed connection");
    }
    return true;
  }
};

Instance* Pooled(std::unique_ptr<Instance>* slot, bool two_workers, bool deprecated_api) {
  if (*slot == nullptr) *slot = std::make_unique<Instance>(two_workers, deprecated_api);
  return slot->get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const Plan plan = ReadPlan(data);
  const uint8_t* header = data;
  data += 3;
  size -= 3;

  std::string script;
  if (plan.grammar) {
    FuzzedDataProvider in(data, size);
    script = LuaGen(in).Program();
  } else {
    script.assign(reinterpret_cast<const char*>(data), size);
  }
  std::vector<Command> cmds = Commands(plan, script, header);
  if (plan.tiny_maxmemory) cmds.insert(cmds.begin(), Command{"CONFIG", "SET", "maxmemory", "1"});
  static const bool print = std::getenv("PEREGRINE_FUZZ_PRINT") != nullptr;
  if (print) Print(cmds);
  std::string bytes;
  for (const Command& c : cmds) AppendResp(&bytes, c);

  // (Never destroyed: the two-worker ones have a thread running.)
  static auto* pool = new std::unique_ptr<Instance>[4];
  std::unique_ptr<Instance>& slot = pool[(plan.two_workers ? 2 : 0) + (plan.deprecated_api ? 1 : 0)];
  Instance& instance = *Pooled(&slot, plan.two_workers, plan.deprecated_api);
  Server& server = *instance.server;
  Worker& worker = server.worker(0);

  const int64_t start = peregrine::MonotonicMs();
  const Outcome out = Exchange(server, worker, instance.next_client++, bytes, cmds.size(), plan.resp3);
  static const bool timing = std::getenv("PEREGRINE_FUZZ_TIMING") != nullptr;
  if (timing)
    std::fprintf(stderr, "timing: %lld ms, %s, delivery %d, %zu bytes\n",
                 static_cast<long long>(peregrine::MonotonicMs() - start), plan.grammar ? "grammar" : "text",
                 plan.delivery, bytes.size());
  if (print)
    std::fprintf(stderr, "< %zu replies of %zu%s; last: %s", out.replies, cmds.size(), out.closed ? " (closed)" : "",
                 out.last.c_str());
  if (!server.stopping()) {
    if (out.replies == cmds.size()) {
      if (out.last != "+PONG\r\n") Fail("the last reply is not PING's", out.last);
    } else {
      // The server closed the connection (a reply past its limit ...): it
      // must still answer another one.
      std::string ping;
      AppendResp(&ping, {"PING"});
      const Outcome again = Exchange(server, worker, instance.next_client++, ping, 1, false);
      if (again.replies != 1 || again.last != "+PONG\r\n") Fail("no PONG on a new connection", again.last);
    }
  }
  const bool functions = plan.delivery == 4 || plan.delivery == 5;
  if (functions || !instance.Reset(plan.tiny_maxmemory)) {
    // A new server at once: what the old one frees and the new one takes
    // fall in the same input (libFuzzer runs an input again, looking for a
    // leak, when it allocated more than it freed).
    slot.reset();
    Pooled(&slot, plan.two_workers, plan.deprecated_api);
  }
  return 0;
}
