// The dispatcher's authentication and permission checks (docs/security.md):
// -NOAUTH before AUTH where the default user has a password, -NOPERM for
// what the client's ACL user may not run (with an ACL LOG entry), the same
// at EXEC for each queued command and in scripts for each redis.call(), and
// DEBUG's enable-debug-command. The default user with every permission
// costs one branch per command. One per worker, on its thread; it reads the
// ACL users (written only by a command holding every shard) and writes the
// ACL log.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "server/acl.h"
#include "server/client.h"
#include "server/command.h"
#include "server/command_context.h"
#include "server/server_state.h"
#include "server/transaction_runner.h"

namespace peregrine {

class AccessCheck {
 public:
  // `txn`: its worker's transactions (a queued command is checked as EXEC
  // runs it).
  AccessCheck(ServerState& server, const TransactionRunner& txn) : server_(server), txn_(txn) {}
  AccessCheck(const AccessCheck&) = delete;
  AccessCheck& operator=(const AccessCheck&) = delete;

  // A new connection (or RESET): the default user, authenticated if it
  // needs no password (CommandHost::SetDefaultAuth).
  void SetDefaultAuth(Client& c) const;
  // AUTH / HELLO ... AUTH: the client runs as `u` from now on.
  static void SetUser(Client& c, const std::shared_ptr<AclUser>& u, bool default_user);
  // CommandHost::Authenticate: on failure the attempt is logged.
  bool Authenticate(Client& c, std::string_view username, std::string_view password, std::string_view command);
  // Whether `c` may run `cmd` with `args` without any side effect (the
  // dispatcher's routing: a refused command is answered here).
  bool Permitted(const Client& c, const CommandSpec& cmd, std::span<const std::string_view> args) const;
  // The refusal of a command `c` may not run (-NOAUTH, or -NOPERM logged
  // in the ACL log), or "" if it may. Inside EXEC, Redis's text for a
  // permission lost since the command was queued.
  std::string AccessError(Client& c, const CommandSpec& cmd, std::span<const std::string_view> args);
  // A script's redis.call() of `cmd` as `caller`: "" or its error ("ACL
  // failure in script: ...", logged with the lua context).
  std::string ScriptAccessError(Client& caller, const CommandSpec& cmd, std::span<const std::string_view> args);
  // Whether enable-debug-command lets `c` run a kCmdProtected command.
  bool ProtectedAllowed(const Client& c) const {
    return CommandHost::Allows(server_.config().enable_debug_command, c);
  }
  // A kCmdProtected command's refusal (DEBUG: enable-debug-command; MODULE
  // LOAD, LOADEX, UNLOAD: enable-module-command), Redis's text, or "".
  std::string ProtectedRefusal(const Client& c, const CommandSpec& cmd) const {
    const bool module = cmd.parent != nullptr && cmd.parent->name == "module";
    const Config& config = server_.config();
    if (CommandHost::Allows(module ? config.enable_module_command : config.enable_debug_command, c)) return {};
    return std::string("ERR ") + (module ? "MODULE" : "DEBUG") + " command not allowed. If the " +
           (module ? "enable-module-command" : "enable-debug-command") +
           " option is set to \"local\", you can run it from a local connection, otherwise you need to set this "
           "option in the configuration file, and then restart the server.";
  }

 private:
  // Adds a denial to the ACL log with this client's CLIENT INFO.
  void LogDenial(const Client& c, AclResult reason, Acl::LogContext context, std::string object,
                 std::string username);

  ServerState& server_;
  const TransactionRunner& txn_;
};

}  // namespace peregrine
