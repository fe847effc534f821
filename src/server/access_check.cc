// AccessCheck: the dispatcher's authentication and permission checks (see
// access_check.h, docs/security.md).
#include "server/access_check.h"

#include "net/event_loop.h"

namespace peregrine {

void AccessCheck::SetDefaultAuth(Client& c) const {
  const AclUser* d = server_.acl().default_user();
  c.user = server_.acl().default_user();
  c.user_ref.reset();
  c.authenticated = d->nopass && d->enabled;
}

void AccessCheck::SetUser(Client& c, const std::shared_ptr<AclUser>& u, bool default_user) {
  c.user = u.get();
  if (default_user)
    c.user_ref.reset();  // never removed: not held (no reference counting per batch)
  else
    c.user_ref = u;
  c.authenticated = true;
}

bool AccessCheck::Authenticate(Client& c, std::string_view username, std::string_view password,
                          std::string_view command) {
  Acl& acl = server_.acl();
  std::shared_ptr<AclUser> u = acl.Find(username);
  if (u != nullptr && acl.CheckPassword(*u, password)) {
    SetUser(c, u, u.get() == acl.default_user());
    return true;
  }
  LogDenial(c, AclResult::kDeniedAuth, c.multi != nullptr ? Acl::LogContext::kMulti : Acl::LogContext::kToplevel,
               std::string(command), std::string(username));
  return false;
}

namespace {
// Redis's authRequired: the default user has a password (or is off) and
// the client has not authenticated.
bool AuthRequired(const Acl& acl, const Client& c) {
  const AclUser* d = acl.default_user();
  return (!d->nopass || !d->enabled) && !c.authenticated;
}
}  // namespace

bool AccessCheck::Permitted(const Client& c, const CommandSpec& cmd, std::span<const std::string_view> args) const {
  const Acl& acl = server_.acl();
  if (AuthRequired(acl, c) && !(cmd.flags & kCmdNoAuth)) return false;
  if (c.user->unrestricted) return true;
  size_t idx;
  return acl.Check(*c.user, cmd, args, &idx) == AclResult::kOk;
}

void AccessCheck::LogDenial(const Client& c, AclResult reason, Acl::LogContext context, std::string object,
                          std::string username) {
  const int64_t now = UnixTimeMs();
  std::string info = server_.ClientInfoLine(c, now);
  if (!info.empty() && info.back() == '\n') info.pop_back();
  server_.acl().AddLogEntry(reason, context, std::move(object), std::move(username), std::move(info), now,
                            static_cast<size_t>(server_.config().acllog_max_len));
}

std::string AccessCheck::AccessError(Client& c, const CommandSpec& cmd, std::span<const std::string_view> args) {
  Acl& acl = server_.acl();
  const bool at_exec = &c == txn_.exec_client();  // a queued command, as EXEC runs it
  if (!at_exec && AuthRequired(acl, c) && !(cmd.flags & kCmdNoAuth)) return "NOAUTH Authentication required.";
  if (c.user->unrestricted) return "";
  // A command refused inside MULTI anyway is refused for that (Redis
  // checks no-multi before the permissions).
  if (c.multi != nullptr && (cmd.flags & kCmdNoMulti) && !(cmd.flags & kCmdNotQueued)) return "";
  size_t idx = 0;
  const AclResult r = acl.Check(*c.user, cmd, args, &idx);
  if (r == AclResult::kOk) return "";
  const std::string object = r == AclResult::kDeniedCmd ? cmd.fullname : std::string(args[idx]);
  if (at_exec) {
    // A queued command whose permission went away before EXEC.
    LogDenial(c, r, Acl::LogContext::kMulti, object, c.user->name);
    const char* reason = r == AclResult::kDeniedCmd ? "no permission to execute the command or subcommand"
                         : r == AclResult::kDeniedKey
                             ? "no permission to touch the specified keys"
                             : "no permission to access one of the channels used as arguments";
    return std::string("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
                       "call. This command is no longer allowed for the following reason: ") +
           reason;
  }
  LogDenial(c, r, c.multi != nullptr ? Acl::LogContext::kMulti : Acl::LogContext::kToplevel, object,
               c.user->name);
  return "NOPERM " + Acl::DenialMessage(r, *c.user, cmd, args[idx], false);
}

std::string AccessCheck::ScriptAccessError(Client& caller, const CommandSpec& cmd, std::span<const std::string_view> args) {
  if (caller.user == nullptr || caller.user->unrestricted) return "";
  Acl& acl = server_.acl();
  size_t idx = 0;
  const AclResult r = acl.Check(*caller.user, cmd, args, &idx);
  if (r == AclResult::kOk) return "";
  LogDenial(caller, r, Acl::LogContext::kLua, r == AclResult::kDeniedCmd ? cmd.fullname : std::string(args[idx]),
               caller.user->name);
  return "ACL failure in script: " + Acl::DenialMessage(r, *caller.user, cmd, args[idx], false);
}

}  // namespace peregrine
