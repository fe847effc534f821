// The ACL command (Redis 7.2): SETUSER, GETUSER, DELUSER, LIST, USERS,
// WHOAMI, CAT, GENPASS, DRYRUN, LOG, LOAD, SAVE, HELP. The users are the
// server's (server/acl.h); the subcommands that change them hold every
// shard, so no other worker reads a user while it changes.
#include <openssl/rand.h>

#include <string>
#include <vector>

#include "commands/common.h"
#include "core/numbers.h"
#include "server/acl.h"
#include "server/client.h"

namespace peregrine {
namespace {

// CR and LF in an error reply become spaces (Redis's addReplyErrorSdsSafe).
std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\r' || c == '\n') c = ' ';
  return s;
}

// The clients running as `u` (every shard held): closed, as Redis closes
// the clients of a deleted or replaced user (the one running this command
// once its reply is written).
void CloseClientsOf(CommandContext& ctx, const AclUser* u) {
  for (Client* c : ctx.server.AllClients()) {
    if (c->user != u || c->closed) continue;
    ctx.worker.SetDefaultAuth(*c);
    c->authenticated = false;
    ctx.server.CloseClient(ctx.worker, *c);
  }
}

// After ACL SETUSER: its Pub/Sub clients subscribed to a channel or pattern
// it may no longer use are closed (Redis's ACLKillPubsubClientsIfNeeded).
void ClosePubsubClientsDenied(CommandContext& ctx, const AclUser& u) {
  const Acl& acl = ctx.server.acl();
  for (const AclSelector& s : u.selectors)
    if (s.all_channels) return;
  for (Client* c : ctx.server.AllClients()) {
    if (c->user != &u || c->subs == nullptr || c->closed) continue;
    bool denied = false;
    for (const std::string& p : c->subs->patterns) denied = denied || !acl.ChannelAllowed(u, p, true);
    for (const std::string& ch : c->subs->channels) denied = denied || !acl.ChannelAllowed(u, ch, false);
    for (const auto& [ch, version] : c->subs->shard_channels) denied = denied || !acl.ChannelAllowed(u, ch, false);
    if (denied) ctx.server.CloseClient(ctx.worker, *c);
  }
}

void AclSetuserCommand(CommandContext& ctx) {
  const std::string_view name = ctx.args[2];
  if (AclHasSpaces(name)) {
    ctx.reply.Error("ERR Usernames can't contain spaces or null characters");
    return;
  }
  std::shared_ptr<AclUser> changed;
  const std::string err = ctx.server.acl().SetUser(name, ctx.args.subspan(3), &changed);
  if (!err.empty()) {
    ctx.reply.Error("ERR " + OneLine(err));
    return;
  }
  ClosePubsubClientsDenied(ctx, *changed);
  ctx.reply.Ok();
}

void AclDeluserCommand(CommandContext& ctx) {
  for (size_t j = 2; j < ctx.args.size(); j++) {
    if (ctx.args[j] == "default") {
      ctx.reply.Error("ERR The 'default' user cannot be removed");
      return;
    }
  }
  int64_t deleted = 0;
  for (size_t j = 2; j < ctx.args.size(); j++) {
    std::shared_ptr<AclUser> u = ctx.server.acl().Remove(ctx.args[j]);
    if (u == nullptr) continue;
    CloseClientsOf(ctx, u.get());
    deleted++;
  }
  ctx.reply.Integer(deleted);
}

void ReplySelector(CommandContext& ctx, const Acl& acl, const AclSelector& s) {
  ctx.reply.Bulk("commands");
  ctx.reply.Bulk(acl.DescribeCommands(s));
  ctx.reply.Bulk("keys");
  ctx.reply.Bulk(acl.DescribeKeys(s));
  ctx.reply.Bulk("channels");
  ctx.reply.Bulk(acl.DescribeChannels(s));
}

void AclGetuserCommand(CommandContext& ctx) {
  const Acl& acl = ctx.server.acl();
  std::shared_ptr<AclUser> u = acl.Find(ctx.args[2]);
  if (u == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.MapHeader(6);
  ctx.reply.Bulk("flags");
  std::vector<std::string_view> flags = {u->enabled ? "on" : "off"};
  if (u->nopass) flags.push_back("nopass");
  flags.push_back(u->skip_sanitize_payload ? "skip-sanitize-payload" : "sanitize-payload");
  ctx.reply.SetHeader(flags.size());
  for (std::string_view f : flags) ctx.reply.Bulk(f);
  ctx.reply.Bulk("passwords");
  ctx.reply.ArrayHeader(u->passwords.size());
  for (const std::string& p : u->passwords) ctx.reply.Bulk(p);
  ReplySelector(ctx, acl, u->selectors[0]);
  ctx.reply.Bulk("selectors");
  ctx.reply.ArrayHeader(u->selectors.size() - 1);
  for (size_t i = 1; i < u->selectors.size(); i++) {
    ctx.reply.MapHeader(3);
    ReplySelector(ctx, acl, u->selectors[i]);
  }
}

void AclListCommand(CommandContext& ctx) {
  const Acl& acl = ctx.server.acl();
  ctx.reply.ArrayHeader(acl.users().size());
  for (const auto& [name, u] : acl.users()) ctx.reply.Bulk("user " + name + " " + acl.Describe(*u));
}

void AclUsersCommand(CommandContext& ctx) {
  const Acl& acl = ctx.server.acl();
  ctx.reply.ArrayHeader(acl.users().size());
  for (const auto& [name, u] : acl.users()) ctx.reply.Bulk(name);
}

void AclWhoamiCommand(CommandContext& ctx) {
  if (ctx.client.user == nullptr)
    ctx.reply.Null();
  else
    ctx.reply.Bulk(ctx.client.user->name);
}

void AclCatCommand(CommandContext& ctx) {
  if (ctx.args.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.args.size() == 2) {
    ctx.reply.ArrayHeader(AclCategoryTable().size());
    for (auto [bit, name] : AclCategoryTable()) ctx.reply.Bulk(name);
    return;
  }
  uint32_t category = 0;
  for (auto [bit, name] : AclCategoryTable())
    if (EqualsIgnoreCase(name, ctx.args[2])) category = bit;
  if (category == 0) {
    ctx.reply.Error("ERR Unknown category '" + AsCString(ctx.args[2]).substr(0, 128) + "'");
    return;
  }
  std::vector<std::string_view> names;
  for (const auto& cmd : ctx.server.commands().all()) {
    if (cmd->AclCategories() & category) names.push_back(cmd->fullname);
    for (const CommandSpec& sub : cmd->subcommands)
      if (sub.AclCategories() & category) names.push_back(sub.fullname);
  }
  ctx.reply.ArrayHeader(names.size());
  for (std::string_view n : names) ctx.reply.Bulk(n);
}

void AclGenpassCommand(CommandContext& ctx) {
  constexpr int64_t kMaxBits = 4096;
  int64_t bits = 256;
  if (ctx.args.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.args.size() == 3 && !ParseInt64(ctx.args[2], &bits)) {
    ctx.reply.Error(kErrNotInteger);
    return;
  }
  if (bits <= 0 || bits > kMaxBits) {
    ctx.reply.Error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to "
        "4096");
    return;
  }
  const size_t chars = static_cast<size_t>((bits + 3) / 4);
  unsigned char random[kMaxBits / 8];
  if (RAND_bytes(random, static_cast<int>((chars + 1) / 2)) != 1) {
    ctx.reply.Error("ERR could not generate random bytes");
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string pass(chars, '0');
  for (size_t i = 0; i < chars; i++) pass[i] = kHex[(random[i / 2] >> ((i % 2) * 4)) & 15];
  ctx.reply.Bulk(pass);
}

void AclLogCommand(CommandContext& ctx) {
  Acl& acl = ctx.server.acl();
  if (ctx.args.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  int64_t count = 10;
  if (ctx.args.size() == 3) {
    if (EqualsIgnoreCase(ctx.args[2], "reset")) {
      acl.ResetLog();
      ctx.reply.Ok();
      return;
    }
    if (!ParseInt64(ctx.args[2], &count)) {
      ctx.reply.Error(kErrNotInteger);
      return;
    }
    if (count < 0) count = 0;
  }
  const std::vector<Acl::LogEntry> entries = acl.LogEntries(static_cast<size_t>(count));
  ctx.reply.ArrayHeader(entries.size());
  for (const Acl::LogEntry& e : entries) {
    ctx.reply.MapHeader(10);
    ctx.reply.Bulk("count");
    ctx.reply.Integer(static_cast<int64_t>(e.count));
    ctx.reply.Bulk("reason");
    ctx.reply.Bulk(e.reason == AclResult::kDeniedCmd       ? "command"
                   : e.reason == AclResult::kDeniedKey     ? "key"
                   : e.reason == AclResult::kDeniedChannel ? "channel"
                                                           : "auth");
    ctx.reply.Bulk("context");
    ctx.reply.Bulk(e.context == Acl::LogContext::kToplevel ? "toplevel"
                   : e.context == Acl::LogContext::kMulti  ? "multi"
                                                           : "lua");
    ctx.reply.Bulk("object");
    ctx.reply.Bulk(e.object);
    ctx.reply.Bulk("username");
    ctx.reply.Bulk(e.username);
    ctx.reply.Bulk("age-seconds");
    ctx.reply.Double(static_cast<double>(ctx.now_ms - e.ctime_ms) / 1000);
    ctx.reply.Bulk("client-info");
    ctx.reply.Bulk(e.client_info);
    ctx.reply.Bulk("entry-id");
    ctx.reply.Integer(e.entry_id);
    ctx.reply.Bulk("timestamp-created");
    ctx.reply.Integer(e.created_ms);
    ctx.reply.Bulk("timestamp-last-updated");
    ctx.reply.Integer(e.ctime_ms);
  }
}

void AclDryrunCommand(CommandContext& ctx) {
  const Acl& acl = ctx.server.acl();
  std::shared_ptr<AclUser> u = acl.Find(ctx.args[2]);
  if (u == nullptr) {
    ctx.reply.Error("ERR User '" + AsCString(ctx.args[2]) + "' not found");
    return;
  }
  const std::span<const std::string_view> args = ctx.args.subspan(3);
  const CommandSpec* cmd = ctx.server.commands().Find(args[0]);
  if (cmd != nullptr && !cmd->subcommands.empty() && args.size() >= 2)
    cmd = CommandTable::FindSubcommand(*cmd, args[1]);
  if (cmd == nullptr) {
    ctx.reply.Error("ERR Command '" + AsCString(args[0]) + "' not found");
    return;
  }
  const int argc = static_cast<int>(args.size());
  if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    ctx.reply.Error("ERR wrong number of arguments for '" + cmd->fullname + "' command");
    return;
  }
  size_t idx = 0;
  const AclResult r = acl.Check(*u, *cmd, args, &idx);
  if (r != AclResult::kOk) {
    ctx.reply.Bulk(Acl::DenialMessage(r, *u, *cmd, args[idx], true));
    return;
  }
  ctx.reply.Ok();
}

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
    "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order "
    "to store users in the Redis configuration.";

void AclLoadCommand(CommandContext& ctx) {
  const std::string& path = ctx.server.config().aclfile;
  if (path.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  std::vector<std::shared_ptr<AclUser>> gone;
  const std::string err = LoadAclFile(ctx.server.acl(), path, &gone);
  if (!err.empty()) {
    ctx.reply.Error("ERR " + OneLine(err));
    return;
  }
  for (const auto& u : gone) CloseClientsOf(ctx, u.get());
  ctx.reply.Ok();
}

void AclSaveCommand(CommandContext& ctx) {
  const std::string& path = ctx.server.config().aclfile;
  if (path.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  if (!SaveAclFile(ctx.server.acl(), path)) {
    ctx.reply.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information");
    return;
  }
  ctx.reply.Ok();
}

void AclHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                  "CAT [<category>]",
                  "    List all commands that belong to <category>, or all command categories",
                  "    when no category is specified.",
                  "DELUSER <username> [<username> ...]",
                  "    Delete a list of users.",
                  "DRYRUN <username> <command> [<arg> ...]",
                  "    Returns whether the user can execute the given command without executing the command.",
                  "GETUSER <username>",
                  "    Get the user's details.",
                  "GENPASS [<bits>]",
                  "    Generate a secure 256-bit user password. The optional `bits` argument can",
                  "    be used to specify a different size.",
                  "LIST",
                  "    Show users details in config file format.",
                  "LOAD",
                  "    Reload users from the ACL file.",
                  "LOG [<count> | RESET]",
                  "    Show the ACL log entries.",
                  "SAVE",
                  "    Save the current config to the ACL file.",
                  "SETUSER <username> <attribute> [<attribute> ...]",
                  "    Create or modify a user with the specified attributes.",
                  "USERS",
                  "    List all the registered usernames.",
                  "WHOAMI",
                  "    Return the current connection username.",
                  "HELP",
                  "    Print this help."});
}

}  // namespace

void RegisterAclCommands(CommandTable& t) {
  CommandFamily f(t, 0, "server");
  const uint32_t kBase = kCmdNoscript | kCmdLoading | kCmdStale;
  const uint32_t kAdmin = kBase | kCmdAdmin;
  // The changes hold every shard: no other worker reads a user meanwhile,
  // and the clients of a removed user are closed on their workers.
  const uint32_t kChange = kAdmin | kCmdAllShards;
  f.Add({.name = "acl", .arity = -2, .summary = "A container for Access List Control commands.", .since = "6.0.0",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "cat", .arity = -2, .flags = kBase,
              .summary = "Lists the ACL categories, or the commands inside a category.", .since = "6.0.0",
              .complexity = "O(1) since the categories and commands are a fixed set.", .handler = AclCatCommand},
             {.name = "deluser", .arity = -3, .flags = kChange,
              .summary = "Deletes ACL users, and terminates their connections.", .since = "6.0.0",
              .complexity = "O(1) amortized time considering the typical user.", .handler = AclDeluserCommand},
             {.name = "dryrun", .arity = -4, .flags = kAdmin,
              .summary = "Simulates the execution of a command by a user, without executing the command.",
              .since = "6.0.0", .complexity = "O(1).", .handler = AclDryrunCommand},
             {.name = "genpass", .arity = -2, .flags = kBase,
              .summary = "Generates a pseudorandom, secure password that can be used to identify ACL users.",
              .since = "6.0.0", .complexity = "O(1)", .handler = AclGenpassCommand},
             {.name = "getuser", .arity = 3, .flags = kAdmin, .summary = "Lists the ACL rules of a user.",
              .since = "6.0.0",
              .complexity = "O(N). Where N is the number of password, command and pattern rules that the user has.",
              .handler = AclGetuserCommand},
             {.name = "list", .arity = 2, .flags = kAdmin, .summary = "Dumps the effective rules in ACL file format.",
              .since = "6.0.0", .complexity = "O(N). Where N is the number of configured users.",
              .handler = AclListCommand},
             {.name = "load", .arity = 2, .flags = kChange,
              .summary = "Reloads the rules from the configured ACL file.", .since = "6.0.0",
              .complexity = "O(N). Where N is the number of configured users.", .handler = AclLoadCommand},
             {.name = "log", .arity = -2, .flags = kAdmin,
              .summary = "Lists recent security events generated due to ACL rules.", .since = "6.0.0",
              .complexity = "O(N) with N being the number of entries shown.", .handler = AclLogCommand},
             {.name = "save", .arity = 2, .flags = kAdmin,
              .summary = "Saves the effective ACL rules in the configured ACL file.", .since = "6.0.0",
              .complexity = "O(N). Where N is the number of configured users.", .handler = AclSaveCommand},
             {.name = "setuser", .arity = -3, .flags = kChange,
              .summary = "Creates and modifies an ACL user and its rules.", .since = "6.0.0",
              .complexity = "O(N). Where N is the number of rules provided.", .handler = AclSetuserCommand},
             {.name = "users", .arity = 2, .flags = kAdmin, .summary = "Lists all ACL users.", .since = "6.0.0",
              .complexity = "O(N). Where N is the number of configured users.", .handler = AclUsersCommand},
             {.name = "whoami", .arity = 2, .flags = kBase,
              .summary = "Returns the authenticated username of the current connection.", .since = "6.0.0",
              .complexity = "O(1)", .handler = AclWhoamiCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "6.0.0",
              .complexity = "O(1)", .handler = AclHelpCommand},
         }});
}

}  // namespace peregrine
