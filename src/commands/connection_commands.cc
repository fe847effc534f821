// Connection commands: PING, ECHO, QUIT, SELECT, AUTH, HELLO, RESET and the
// CLIENT container (ID, SETNAME, GETNAME, LIST, INFO, KILL, SETINFO, HELP).
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/tracking_commands.h"
#include "core/numbers.h"
#include "server/client.h"
#include "server/replica_link.h"

namespace peregrine {
namespace {

constexpr std::string_view kErrWrongPass = "WRONGPASS invalid username-password pair or user is disabled.";

void PingCommand(CommandContext& ctx) {
  if (ctx.args.size() > 2) {
    ctx.reply.Error("ERR wrong number of arguments for 'ping' command");
    return;
  }
  // Subscribed over RESP2, a client can only read arrays: ["pong", message].
  if (ctx.client.subs != nullptr && ctx.client.resp == 2) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk("pong");
    ctx.reply.Bulk(ctx.args.size() == 2 ? ctx.args[1] : std::string_view());
    return;
  }
  if (ctx.args.size() == 1)
    ctx.reply.SimpleString("PONG");
  else
    ctx.reply.Bulk(ctx.args[1]);
}

void EchoCommand(CommandContext& ctx) { ctx.reply.Bulk(ctx.args[1]); }

void QuitCommand(CommandContext& ctx) {
  ctx.reply.Ok();
  ctx.worker.CloseAfterReply(ctx.client);
}

void SelectCommand(CommandContext& ctx) {
  int db;
  int64_t id;
  if (ctx.server.cluster() != nullptr && ParseInt64(ctx.args[1], &id) && id != 0 && id >= INT_MIN && id <= INT_MAX)
    return ctx.reply.Error("ERR SELECT is not allowed in cluster mode");
  if (!ParseDbIndex(ctx, ctx.args[1], &db)) return;
  ctx.client.db = db;
  ctx.reply.Ok();
}

// AUTH <password> (the default user) | AUTH <username> <password>.
void AuthCommand(CommandContext& ctx) {
  if (ctx.args.size() > 3) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  std::string_view user = "default", password;
  if (ctx.args.size() == 2) {
    if (ctx.server.acl().default_user()->nopass) {
      ctx.reply.Error(
          "ERR AUTH <password> called without any password configured for the default user. Are you sure "
          "your configuration is correct?");
      return;
    }
    password = ctx.args[1];
  } else {
    user = ctx.args[1];
    password = ctx.args[2];
  }
  if (!ctx.worker.Authenticate(ctx.client, user, password, ctx.args[0])) {
    ctx.reply.Error(kErrWrongPass);
    return;
  }
  ctx.reply.Ok();
}

// Client names and library attributes: printable ASCII without spaces.
bool ValidClientAttribute(std::string_view s) {
  for (char c : s)
    if (c < '!' || c > '~') return false;
  return true;
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
void HelloCommand(CommandContext& ctx) {
  auto& a = ctx.args;
  int64_t ver = ctx.client.resp;
  size_t i = 1;
  if (a.size() >= 2) {
    if (!ParseInt64(a[1], &ver)) {
      ctx.reply.Error("ERR Protocol version is not an integer or out of range");
      return;
    }
    if (ver < 2 || ver > 3) {
      ctx.reply.Error("NOPROTO unsupported protocol version");
      return;
    }
    i = 2;
  }
  std::string_view user, password, name;
  bool auth = false, setname = false;
  for (; i < a.size(); i++) {
    size_t more = a.size() - i - 1;
    if (EqualsIgnoreCase(a[i], "auth") && more >= 2) {
      auth = true;
      user = a[i + 1];
      password = a[i + 2];
      i += 2;
    } else if (EqualsIgnoreCase(a[i], "setname") && more >= 1) {
      setname = true;
      name = a[i + 1];
      if (!ValidClientAttribute(name)) {
        ctx.reply.Error("ERR Client names cannot contain spaces, newlines or special characters.");
        return;
      }
      i += 1;
    } else {
      ctx.reply.Error("ERR Syntax error in HELLO option '" + AsCString(a[i]) + "'");
      return;
    }
  }
  if (auth && !ctx.worker.Authenticate(ctx.client, user, password, ctx.args[0])) {
    ctx.reply.Error(kErrWrongPass);
    return;
  }
  if (!ctx.client.authenticated) {
    ctx.reply.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH "
        "<user> <pass> option can be used to authenticate the client and select the RESP protocol version at the "
        "same time");
    return;
  }
  if (setname) ctx.client.name = std::string(name);
  ctx.client.resp = static_cast<int>(ver);
  ctx.reply.set_resp(ctx.client.resp);
  // (A flush's null to the client it redirects to follows its protocol.)
  if (ctx.client.tracking_redirect != 0) PublishRedirect(ctx.server.tracking(), ctx.client);
  ctx.reply.MapHeader(7);
  ctx.reply.Bulk("server");
  ctx.reply.Bulk("redis");
  ctx.reply.Bulk("version");
  ctx.reply.Bulk(kRedisCompatVersion);
  ctx.reply.Bulk("proto");
  ctx.reply.Integer(ver);
  ctx.reply.Bulk("id");
  ctx.reply.Integer(static_cast<int64_t>(ctx.client.id));
  ctx.reply.Bulk("mode");
  ctx.reply.Bulk("standalone");
  ctx.reply.Bulk("role");
  ctx.reply.Bulk("master");
  ctx.reply.Bulk("modules");
  ctx.reply.ArrayHeader(0);
}

void ResetCommand(CommandContext& ctx) {
  ctx.worker.pubsub().RemoveClient(ctx.client);  // no confirmations, as Redis
  ctx.worker.monitor().Stop(ctx.client);
  DisableTracking(ctx.server.tracking(), ctx.client);
  ctx.worker.DiscardTransaction(ctx.client);
  ctx.client.db = 0;
  ctx.client.resp = 2;
  ctx.client.name.clear();
  // (As Redis's clearClientConnectionState: ASKING, READONLY, CLIENT REPLY
  // OFF go; a SKIP of this very reply stays, and drops +RESET.)
  ctx.client.asking = ctx.client.cluster_readonly = ctx.client.no_touch = ctx.client.no_evict = false;
  if (ctx.client.reply_mode != Client::kReplySkip) ctx.client.reply_mode = Client::kReplyOn;
  ctx.worker.SetDefaultAuth(ctx.client);
  ctx.reply.set_resp(2);
  ctx.reply.SimpleString("RESET");
}

// --- CLIENT ---

void ClientIdCommand(CommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.client.id)); }

void ClientSetnameCommand(CommandContext& ctx) {
  std::string_view name = ctx.args[2];
  if (!ValidClientAttribute(name)) {
    ctx.reply.Error("ERR Client names cannot contain spaces, newlines or special characters.");
    return;
  }
  ctx.client.name = std::string(name);
  ctx.reply.Ok();
}

// As Redis's: OFF and SKIP reply nothing, ON replies OK; a syntax error is
// answered unless replies are off. (Inside EXEC, whose reply has one entry
// per command, each answers OK, and the mode holds from the next command.)
void ClientReplyCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  const std::string_view a = ctx.args[2];
  const bool silent = c.reply_mode == Client::kReplyOff || c.reply_mode == Client::kReplySkip;
  if (EqualsIgnoreCase(a, "on")) {
    c.reply_mode = Client::kReplyOn;
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(a, "off")) {
    c.reply_mode = Client::kReplyOff;
    if (ctx.worker.in_exec()) ctx.reply.Ok();
  } else if (EqualsIgnoreCase(a, "skip")) {
    if (c.reply_mode != Client::kReplyOff) c.reply_mode = Client::kReplySkipNext;
    if (ctx.worker.in_exec()) ctx.reply.Ok();
  } else if (!silent || ctx.worker.in_exec()) {
    ctx.reply.Error(kErrSyntax);
  }
}

void ClientGetnameCommand(CommandContext& ctx) {
  if (ctx.client.name.empty())
    ctx.reply.Null();
  else
    ctx.reply.Bulk(ctx.client.name);
}

void ClientSetinfoCommand(CommandContext& ctx) {
  std::string_view attr = ctx.args[2], value = ctx.args[3];
  std::string* field;
  if (EqualsIgnoreCase(attr, "lib-name")) {
    field = &ctx.client.lib_name;
  } else if (EqualsIgnoreCase(attr, "lib-ver")) {
    field = &ctx.client.lib_ver;
  } else {
    ctx.reply.Error("ERR Unrecognized option '" + AsCString(attr) + "'");
    return;
  }
  if (!ValidClientAttribute(value)) {
    ctx.reply.Error("ERR " + std::string(attr) + " cannot contain spaces, newlines or special characters.");
    return;
  }
  *field = std::string(value);
  ctx.reply.Ok();
}

void ClientInfoCommand(CommandContext& ctx) {
  ctx.reply.Verbatim(ctx.server.ClientInfoLine(ctx.client, ctx.now_ms));
}

// CLIENT LIST / KILL TYPE, as Redis's getClientType: a replica's
// connection (SYNC or PSYNC) is of the replica type, a client with Pub/Sub
// subscriptions of the pubsub type, any other of the normal type; the link
// to this server's own primary is no client here but is listed and killed
// as one, of the master type (ServerState::MasterClientNow). False (error
// replied) for an unknown type.
enum class ClientType { kAny, kNormal, kPubsub, kReplica, kMaster };

bool ParseClientType(CommandContext& ctx, std::string_view t, ClientType* out) {
  if (EqualsIgnoreCase(t, "normal")) {
    *out = ClientType::kNormal;
  } else if (EqualsIgnoreCase(t, "pubsub")) {
    *out = ClientType::kPubsub;
  } else if (EqualsIgnoreCase(t, "replica") || EqualsIgnoreCase(t, "slave")) {
    *out = ClientType::kReplica;
  } else if (EqualsIgnoreCase(t, "master")) {
    *out = ClientType::kMaster;
  } else {
    ctx.reply.Error("ERR Unknown client type '" + AsCString(t) + "'");
    return false;
  }
  return true;
}

bool IsOfType(const Client& c, ClientType type) {
  switch (type) {
    case ClientType::kAny: return true;
    case ClientType::kNormal: return c.subs == nullptr && !c.replica;
    case ClientType::kPubsub: return c.subs != nullptr && !c.replica;
    case ClientType::kReplica: return c.replica;
    case ClientType::kMaster: return false;
  }
  return false;
}

// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id [id ...]]
void ClientListCommand(CommandContext& ctx) {
  auto& a = ctx.args;
  std::vector<uint64_t> ids;
  bool filter_ids = false;
  ClientType type = ClientType::kAny;
  for (size_t i = 2; i < a.size(); i++) {
    if (EqualsIgnoreCase(a[i], "type") && i + 1 < a.size()) {
      if (!ParseClientType(ctx, a[++i], &type)) return;
    } else if (EqualsIgnoreCase(a[i], "id") && i + 1 < a.size()) {
      filter_ids = true;
      for (i = i + 1; i < a.size(); i++) {
        int64_t id;
        if (!ParseInt64(a[i], &id) || id <= 0) {
          ctx.reply.Error("ERR Invalid client ID");
          return;
        }
        ids.push_back(static_cast<uint64_t>(id));
      }
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  // The primary's connection, in its place by id.
  ServerState::MasterClientInfo master = ctx.server.MasterClientNow(ctx.now_ms);
  if (master.id != 0 && ((type != ClientType::kAny && type != ClientType::kMaster) ||
                         (filter_ids && std::find(ids.begin(), ids.end(), master.id) == ids.end())))
    master.id = 0;
  std::string out;
  for (Client* c : ctx.server.AllClients()) {
    if (master.id != 0 && master.id < c->id) {
      out += master.line;
      master.id = 0;
    }
    if (c->closed || !IsOfType(*c, type)) continue;
    if (filter_ids && std::find(ids.begin(), ids.end(), c->id) == ids.end()) continue;
    out += ctx.server.ClientInfoLine(*c, ctx.now_ms);
  }
  if (master.id != 0) out += master.line;
  ctx.reply.Verbatim(out);
}

// CLIENT KILL addr:port | CLIENT KILL <filter> <value> [...]
void ClientKillCommand(CommandContext& ctx) {
  auto& a = ctx.args;
  auto kill = [&](Client& c) { ctx.server.CloseClient(ctx.worker, c); };
  const ServerState::MasterClientInfo master = ctx.server.MasterClientNow(ctx.now_ms);
  if (a.size() == 3) {  // old form
    for (Client* c : ctx.server.AllClients()) {
      if (!c->closed && !c->close_after_reply && c->addr == a[2]) {
        ctx.reply.Ok();
        kill(*c);
        return;
      }
    }
    if (master.id != 0 && master.addr == a[2]) {
      ctx.server.replica_link()->Drop();
      ctx.reply.Ok();
      return;
    }
    ctx.reply.Error("ERR No such client");
    return;
  }
  if (a.size() % 2 != 0) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  uint64_t id = 0;
  std::string_view addr, laddr;
  bool skipme = true, have_max_age = false;
  ClientType type = ClientType::kAny;
  int64_t max_age = 0;
  const AclUser* user = nullptr;  // USER: the clients running as that user
  for (size_t i = 2; i + 1 < a.size(); i += 2) {
    std::string_view opt = a[i], val = a[i + 1];
    if (EqualsIgnoreCase(opt, "id")) {
      int64_t v;
      if (!ParseInt64(val, &v) || v <= 0) {
        ctx.reply.Error("ERR client-id should be greater than 0");
        return;
      }
      id = static_cast<uint64_t>(v);
    } else if (EqualsIgnoreCase(opt, "type")) {
      if (!ParseClientType(ctx, val, &type)) return;
    } else if (EqualsIgnoreCase(opt, "addr")) {
      addr = val;
    } else if (EqualsIgnoreCase(opt, "laddr")) {
      laddr = val;
    } else if (EqualsIgnoreCase(opt, "user")) {
      user = ctx.server.acl().Find(val).get();
      if (user == nullptr) {
        ctx.reply.Error("ERR No such user '" + AsCString(val) + "'");
        return;
      }
    } else if (EqualsIgnoreCase(opt, "skipme")) {
      if (EqualsIgnoreCase(val, "yes")) skipme = true;
      else if (EqualsIgnoreCase(val, "no")) skipme = false;
      else {
        ctx.reply.Error(kErrSyntax);
        return;
      }
    } else if (EqualsIgnoreCase(opt, "maxage")) {
      if (!ParseInt64(val, &max_age)) {
        ctx.reply.Error(kErrNotInteger);
        return;
      }
      have_max_age = true;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  int64_t killed = 0;
  std::vector<Client*> victims;  // collected first: killing edits the client map
  for (Client* c : ctx.server.AllClients()) {
    if (c->closed || c->close_after_reply || !IsOfType(*c, type)) continue;
    if (id != 0 && c->id != id) continue;
    if (!addr.empty() && c->addr != addr) continue;
    if (!laddr.empty() && c->laddr != laddr) continue;
    if (user != nullptr && c->user != user) continue;
    if (skipme && c == &ctx.client) continue;
    if (have_max_age && (ctx.now_ms - c->ctime_ms) / 1000 < max_age) continue;
    victims.push_back(c);
  }
  for (Client* c : victims) {
    kill(*c);
    killed++;
  }
  // A replica's link to its primary, a thread here rather than a client,
  // is dropped when the filters match it as Redis's master client (no
  // user: the superuser); it connects again and continues (PSYNC).
  if (master.id != 0 && (type == ClientType::kAny || type == ClientType::kMaster) && (id == 0 || id == master.id) &&
      (addr.empty() || addr == master.addr) && (laddr.empty() || laddr == master.laddr) && user == nullptr &&
      (!have_max_age || master.age_s >= max_age)) {
    ctx.server.replica_link()->Drop();
    killed++;
  }
  ctx.reply.Integer(killed);
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked by BLPOP & co. gets
// its command's timeout reply, or an UNBLOCKED error. Every shard is held:
// the wait is claimed like a key serving it (docs/blocking.md).
// CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as Redis 7: for
// `timeout` ms, clients' commands (ALL) or those that write or may
// replicate (WRITE) wait; replicas never do (client_pause.h).
void ClientPauseCommand(CommandContext& ctx) {
  if (ctx.args.size() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  uint8_t actions = ClientPause::kAll;
  if (ctx.args.size() == 4) {
    if (EqualsIgnoreCase(ctx.args[3], "write")) {
      actions = ClientPause::kWrites;
    } else if (!EqualsIgnoreCase(ctx.args[3], "all")) {
      ctx.reply.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
      return;
    }
  }
  int64_t ms;
  if (!ParseTimeoutMs(ctx, ctx.args[2], &ms)) return;
  ctx.server.client_pause().Pause(ClientPause::kByCommand, UnixTimeMs() + ms, actions);
  ctx.server.WakeWorkers();
  ctx.reply.Ok();
}

void ClientUnpauseCommand(CommandContext& ctx) {
  ctx.server.client_pause().Unpause(ClientPause::kByCommand);
  ctx.server.WakeWorkers();
  ctx.reply.Ok();
}

void ClientUnblockCommand(CommandContext& ctx) {
  if (ctx.args.size() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  bool error = false;
  if (ctx.args.size() == 4) {
    if (EqualsIgnoreCase(ctx.args[3], "error")) {
      error = true;
    } else if (!EqualsIgnoreCase(ctx.args[3], "timeout")) {
      ctx.reply.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      return;
    }
  }
  int64_t id;
  if (!ParseIntArg(ctx, ctx.args[2], &id)) return;
  std::shared_ptr<BlockedClient> w;
  for (Client* c : ctx.server.AllClients()) {
    if (c->id == static_cast<uint64_t>(id)) {
      if (!c->closed && c->wait_acks) {
        // In WAIT: answered now, with the count so far or the error.
        ctx.reply.Integer(ctx.server.replication().UnblockWaiter(c->id, error) ? 1 : 0);
        return;
      }
      if (!c->closed) w = c->blocked;
      break;
    }
  }
  ctx.reply.Integer(w != nullptr && ctx.worker.Unblock(std::move(w), error) ? 1 : 0);
}

// CLIENT NO-TOUCH / NO-EVICT ON|OFF: sets `mode`.
void SetClientMode(CommandContext& ctx, bool Client::*mode) {
  if (EqualsIgnoreCase(ctx.args[2], "on")) {
    ctx.client.*mode = true;
  } else if (EqualsIgnoreCase(ctx.args[2], "off")) {
    ctx.client.*mode = false;
  } else {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  ctx.reply.Ok();
}
void ClientNoTouchCommand(CommandContext& ctx) { SetClientMode(ctx, &Client::no_touch); }
void ClientNoEvictCommand(CommandContext& ctx) { SetClientMode(ctx, &Client::no_evict); }  // (client_eviction.h)

// Redis 7.2's text.
void ClientHelpCommand(CommandContext& ctx) {
  ReplyContainerHelp(
      ctx, "CLIENT",
      {"CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
       "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.", "GETNAME",
       "    Return the name of the current connection.", "ID", "    Return the ID of the current connection.", "INFO",
       "    Return information about the current client connection.", "KILL <ip:port>",
       "    Kill connection made from <ip:port>.", "KILL <option> <value> [<option> <value> [...]]",
       "    Kill connections. Options are:", "    * ADDR (<ip:port>|<unixsocket>:0)",
       "      Kill connections made from the specified address", "    * LADDR (<ip:port>|<unixsocket>:0)",
       "      Kill connections made to specified local address", "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
       "      Kill connections by type.", "    * USER <username>", "      Kill connections authenticated by <username>.",
       "    * SKIPME (YES|NO)", "      Skip killing current connection (default: yes).", "LIST [options ...]",
       "    Return information about client connections. Options:", "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
       "      Return clients of specified type.", "UNPAUSE", "    Stop the current client pause, resuming traffic.",
       "PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
       "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.", "SETNAME <name>",
       "    Assign the name <name> to the current connection.", "SETINFO <option> <value>",
       "    Set client meta attr. Options are:", "    * LIB-NAME: the client lib name.",
       "    * LIB-VER: the client lib version.", "UNBLOCK <clientid> [TIMEOUT|ERROR]",
       "    Unblock the specified blocked client.", "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
       "         [OPTIN] [OPTOUT] [NOLOOP]", "    Control server assisted client side caching.", "TRACKINGINFO",
       "    Report tracking status for the current connection.", "NO-EVICT (ON|OFF)",
       "    Protect current client connection from eviction.", "NO-TOUCH (ON|OFF)",
       "    Will not touch LRU/LFU stats when this mode is on."});
}

}  // namespace

void RegisterConnectionCommands(CommandTable& t) {
  CommandFamily f(t, kAclConnection, "connection");
  const uint32_t kConn = kCmdNoscript | kCmdLoading | kCmdStale;
  f.Add({.name = "ping", .arity = -1, .flags = kCmdFast | kCmdPubsubContext,
         .summary = "Returns the server's liveliness response.", .since = "1.0.0", .complexity = "O(1)",
         .handler = PingCommand});
  f.Add({.name = "echo", .arity = 2, .flags = kCmdFast, .summary = "Returns the given string.", .since = "1.0.0",
         .complexity = "O(1)", .handler = EchoCommand});
  f.Add({.name = "quit", .arity = -1,
         .flags = kCmdAllowBusy | kCmdNoAuth | kConn | kCmdFast | kCmdPubsubContext | kCmdNotQueued,
         .summary = "Closes the connection.", .since = "1.0.0", .complexity = "O(1)", .handler = QuitCommand});
  // (Allowed in scripts, as in Redis 7: it selects the script's database,
  // never its caller's.)
  f.Add({.name = "select", .arity = 2, .flags = kCmdLoading | kCmdStale | kCmdFast,
         .summary = "Changes the selected database.", .since = "1.0.0", .complexity = "O(1)",
         .handler = SelectCommand});
  f.Add({.name = "auth", .arity = -2, .flags = kConn | kCmdFast | kCmdNoAuth | kCmdAllowBusy,
         .summary = "Authenticates the connection.", .since = "1.0.0",
         .complexity = "O(N) where N is the number of passwords defined for the user", .handler = AuthCommand});
  f.Add({.name = "hello", .arity = -1, .flags = kConn | kCmdFast | kCmdNoAuth | kCmdAllowBusy,
         .summary = "Handshakes with the Redis server.", .since = "6.0.0", .complexity = "O(1)",
         .handler = HelloCommand});
  f.Add({.name = "reset", .arity = 1,
         .flags = kConn | kCmdFast | kCmdNoAuth | kCmdAllowBusy | kCmdPubsubContext | kCmdNotQueued,
         .summary = "Resets the connection.", .since = "6.2.0", .complexity = "O(1)", .handler = ResetCommand});

  const uint32_t kClientFlags = kCmdNoscript | kCmdLoading | kCmdStale | kCmdSentinel;
  f.Add({.name = "client", .arity = -2, .acl = kAclSlow, .summary = "A container for client connection commands.",
         .since = "2.4.0", .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "id", .arity = 2, .flags = kClientFlags,
              .summary = "Returns the unique client ID of the connection.", .since = "5.0.0", .complexity = "O(1)",
              .handler = ClientIdCommand},
             {.name = "setname", .arity = 3, .flags = kClientFlags, .summary = "Sets the connection name.",
              .since = "2.6.9", .complexity = "O(1)", .handler = ClientSetnameCommand},
             {.name = "reply", .arity = 3, .flags = kClientFlags,
              .summary = "Instructs the server whether to reply to commands.", .since = "3.2.0", .complexity = "O(1)",
              .handler = ClientReplyCommand},
             {.name = "getname", .arity = 2, .flags = kClientFlags, .summary = "Returns the name of the connection.",
              .since = "2.6.9", .complexity = "O(1)", .handler = ClientGetnameCommand},
             {.name = "list", .arity = -2, .flags = kClientFlags | kCmdAdmin | kCmdAllShards,
              .summary = "Lists open connections.", .since = "2.4.0",
              .complexity = "O(N) where N is the number of client connections", .handler = ClientListCommand},
             {.name = "info", .arity = 2, .flags = kClientFlags, .summary = "Returns information about the connection.",
              .since = "6.2.0", .complexity = "O(1)", .handler = ClientInfoCommand},
             {.name = "kill", .arity = -3, .flags = kClientFlags | kCmdAdmin | kCmdAllShards,
              .summary = "Terminates open connections.", .since = "2.4.0",
              .complexity = "O(N) where N is the number of client connections", .handler = ClientKillCommand},
             {.name = "unblock", .arity = -3, .flags = kClientFlags | kCmdAdmin | kCmdAllShards,
              .summary = "Unblocks a client blocked by a blocking command from a different connection.",
              .since = "5.0.0", .complexity = "O(log N) where N is the number of client connections",
              .handler = ClientUnblockCommand},
             {.name = "pause", .arity = -3, .flags = kClientFlags | kCmdAdmin,
              .summary = "Suspends commands processing.", .since = "3.0.0", .complexity = "O(1)",
              .handler = ClientPauseCommand},
             {.name = "unpause", .arity = 2, .flags = kClientFlags | kCmdAdmin,
              .summary = "Resumes processing commands from paused clients.", .since = "6.2.0", .complexity = "O(N) Where N is the number of paused clients",
              .handler = ClientUnpauseCommand},
             {.name = "setinfo", .arity = 4, .flags = kClientFlags,
              .summary = "Sets information specific to the client or connection.", .since = "7.2.0",
              .complexity = "O(1)", .handler = ClientSetinfoCommand},
             {.name = "tracking", .arity = -3, .flags = kClientFlags | kCmdAllShards,
              .summary = "Controls server-assisted client-side caching for the connection.", .since = "6.0.0",
              .complexity = "O(1). Some options may introduce additional complexity.",
              .handler = ClientTrackingCommand},
             {.name = "caching", .arity = 3, .flags = kClientFlags,
              .summary = "Instructs the server whether to track the keys in the next request.", .since = "6.0.0",
              .complexity = "O(1)", .handler = ClientCachingCommand},
             {.name = "getredir", .arity = 2, .flags = kClientFlags,
              .summary = "Returns the client ID to which the connection's tracking notifications are redirected.",
              .since = "6.0.0", .complexity = "O(1)", .handler = ClientGetredirCommand},
             {.name = "trackinginfo", .arity = 2, .flags = kClientFlags,
              .summary = "Returns information about server-assisted client-side caching for the connection.",
              .since = "6.2.0", .complexity = "O(1)", .handler = ClientTrackinginfoCommand},
             {.name = "no-evict", .arity = 3, .flags = kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale | kCmdSentinel,
              .summary = "Sets the client eviction mode of the connection.", .since = "7.0.0", .complexity = "O(1)",
              .handler = ClientNoEvictCommand},
             {.name = "no-touch", .arity = 3, .flags = kCmdNoscript | kCmdLoading | kCmdStale,
              .summary = "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
              .since = "7.2.0", .complexity = "O(1)", .handler = ClientNoTouchCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale | kCmdSentinel,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = ClientHelpCommand},
         }});
}

}  // namespace peregrine
