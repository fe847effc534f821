// Access control (docs/security.md): ACL users with Redis 7.2's rules —
// passwords (SHA-256), on/off, selectors of commands (bits per command id,
// categories, first arguments), key patterns with read/write permissions and
// Pub/Sub channel patterns — the permission check the dispatcher makes for
// every command, and the ACL log.
//
// Threading: the users are one registry for the whole server. They change
// only in commands that hold every shard (ACL SETUSER, DELUSER, LOAD, CONFIG
// SET requirepass, AUTH never changes them), when no other worker runs, so
// every worker reads them without a lock. The ACL log and the denial
// counters are written by any worker on a denial (never on the request path
// of a permitted command): a mutex and atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/command.h"

namespace peregrine {

// Why a command or an authentication was refused (Redis's ACL_DENIED_*
// values: a higher one is the more relevant error among several selectors).
enum class AclResult : uint8_t { kOk = 0, kDeniedCmd = 1, kDeniedKey = 2, kDeniedAuth = 3, kDeniedChannel = 4 };

// Access a key pattern grants (%R~, %W~, ~ for both) and a key needs.
enum AclKeyAccess : uint8_t { kKeyNone = 0, kKeyRead = 1, kKeyWrite = 2, kKeyReadWrite = 3 };

// One set of permissions: the user's root one, or a selector "(...)"; a
// command is allowed if any of the user's selectors allows it whole.
struct AclSelector {
  struct KeyPattern {
    std::string pattern;
    uint8_t access;  // AclKeyAccess
    // "prefix*" and literal patterns (most of them) match without the glob
    // matcher: `kind` says which (Acl::KeyMatches).
    enum Kind : uint8_t { kGlob, kPrefix, kLiteral } kind = kGlob;
  };
  bool root = false;
  bool all_keys = false;
  bool all_channels = false;
  bool all_commands = false;  // +@all / allcommands and nothing taken away since
  bool future = false;        // started from +@all: describes as "+@all ..." (Redis's reserved bit)
  std::vector<uint64_t> allowed;  // one bit per CommandSpec::id
  // "+select|0": first arguments allowed of a command not allowed as a whole.
  std::map<uint32_t, std::vector<std::string>> first_args;
  std::vector<KeyPattern> patterns;
  std::vector<std::string> channels;
  // The command rules as given (+get -@write ...), in order, for ACL LIST.
  std::string command_rules;

  bool Allows(uint32_t id) const { return id / 64 < allowed.size() && (allowed[id / 64] >> (id % 64)) & 1; }
  void SetBit(uint32_t id, bool on) {
    if (id / 64 >= allowed.size()) return;
    if (on) {
      allowed[id / 64] |= uint64_t{1} << (id % 64);
    } else {
      allowed[id / 64] &= ~(uint64_t{1} << (id % 64));
      all_commands = false;
    }
  }
};

struct AclUser {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  bool skip_sanitize_payload = false;
  std::vector<std::string> passwords;  // SHA-256, 64 lowercase hex digits each
  std::vector<AclSelector> selectors;  // [0] is the root selector
  // The root selector allows every command, key and channel: the
  // dispatcher skips the check (recomputed by Acl after every change).
  bool unrestricted = false;
};

// The pieces of a command the permission check looks at.
struct AclCommandView {
  const CommandSpec* cmd;
  std::span<const std::string_view> args;
};

// Usernames, key and channel patterns may hold no spaces or NUL bytes
// (Redis's ACLStringHasSpaces).
bool AclHasSpaces(std::string_view s);

// SHA-256 of `password` as 64 lowercase hex digits (Redis's ACLHashPassword).
std::string AclHashPassword(std::string_view password);

// The access a command needs to its keys (Redis's key specs: read for
// ACCESS, write for INSERT/DELETE/UPDATE): its first key's, its other
// keys', and whether its arguments change it (SET ... GET, BITFIELD).
struct AclKeySpec {
  uint8_t first = kKeyReadWrite;
  uint8_t others = kKeyReadWrite;
  enum Variable : uint8_t { kFixed, kSet, kBitfield } variable = kFixed;
  bool known = false;  // in the table (every keyed command is: a unit test checks)
  // The channels it names: PUBLISH's (its first argument), SUBSCRIBE's
  // (every argument), PSUBSCRIBE's patterns (matched literally).
  enum Channels : uint8_t { kNoChannels, kPublish, kSubscribe, kPSubscribe } channels = kNoChannels;
};
AclKeySpec AclKeySpecOf(const CommandSpec& cmd);

// The registry of users (see the threading note above).
class Acl {
 public:
  explicit Acl(const CommandTable& commands);

  const CommandTable& commands() const { return commands_; }
  AclUser* default_user() const { return default_.get(); }
  const std::shared_ptr<AclUser>& default_ref() const { return default_; }
  // nullptr if there is no such user.
  std::shared_ptr<AclUser> Find(std::string_view name) const;
  const std::map<std::string, std::shared_ptr<AclUser>, std::less<>>& users() const { return users_; }

  // acl-pubsub-default: whether new users and "reset" start with every
  // channel (allchannels) or none (resetchannels, Redis 7's default).
  void set_pubsub_default_all(bool all) { pubsub_default_all_ = all; }
  bool pubsub_default_all() const { return pubsub_default_all_; }

  // ACL SETUSER name rules...: applies every rule to a copy of the user (a
  // new one if there is none) and, only if all are valid, makes it the
  // user's. Returns "" or the error text (without "ERR ").
  // `changed` (optional): the user that changed, to whom clients may have to
  // answer (pub/sub permissions revoked).
  std::string SetUser(std::string_view name, std::span<const std::string_view> rules,
                      std::shared_ptr<AclUser>* changed = nullptr);
  // Applies one rule to a user; "" or Redis's error text for it.
  std::string ApplyRule(AclUser& u, std::string_view rule) const;
  // Removes a user (not "default"); the removed one, or nullptr.
  std::shared_ptr<AclUser> Remove(std::string_view name);
  // Replaces every user but "default" (whose rules are copied into the
  // existing one, as Redis does): ACL LOAD. Returns the users removed or
  // replaced (their clients are disconnected).
  std::vector<std::shared_ptr<AclUser>> ReplaceAll(std::map<std::string, std::shared_ptr<AclUser>, std::less<>> users);
  // A user with no permission, not yet added (ACL LOAD builds them).
  AclUser NewUser(std::string_view name) const;
  // The rules of one SETUSER (a selector spread over several arguments
  // merged), applied in order to `u`. Returns "" or the first failure's
  // text ("Error in ACL SETUSER modifier '<rule>': <why>"); it stops there
  // unless `each` is given, which hears every failing rule (ACL LOAD
  // reports them all) with whether it names an unknown command.
  using RuleFailure = std::function<void(std::string_view rule, std::string_view why, bool unknown)>;
  std::string ApplyRules(AclUser& u, std::span<const std::string_view> rules, const RuleFailure& each = {}) const;
  // requirepass: the default user's only password (empty: nopass).
  void SetRequirePass(std::string_view password);

  // "user <name> <rules>" as ACL LIST and the ACL file show it.
  std::string Describe(const AclUser& u) const;
  // A selector's command rules ("+@all -flushall"), as ACL GETUSER shows.
  std::string DescribeCommands(const AclSelector& s) const;
  std::string DescribeKeys(const AclSelector& s) const;
  std::string DescribeChannels(const AclSelector& s) const;

  // Whether `u` may run `cmd` with `args` (args[0] the command name). On a
  // denial *arg_index is the argument that caused it (0 for the command).
  AclResult Check(const AclUser& u, const CommandSpec& cmd, std::span<const std::string_view> args,
                  size_t* arg_index) const;
  // Whether some selector of `u` allows `cmd` with `args` and has `access`
  // to every key (SORT's BY and GET: Redis's
  // ACLUserCheckCmdWithUnrestrictedKeyAccess).
  bool CheckWithAllKeys(const AclUser& u, const CommandSpec& cmd, std::span<const std::string_view> args,
                        uint8_t access) const;
  // Whether `u` may use `channel` (a pattern if `is_pattern`, PSUBSCRIBE's).
  bool ChannelAllowed(const AclUser& u, std::string_view channel, bool is_pattern) const;
  // Whether `u` is authenticated by `password` (enabled, and nopass or a
  // matching password, compared in constant time).
  bool CheckPassword(const AclUser& u, std::string_view password) const;

  // Redis's NOPERM text for a denial (without "-NOPERM ").
  static std::string DenialMessage(AclResult r, const AclUser& u, const CommandSpec& cmd, std::string_view arg,
                                   bool verbose);

  // --- ACL log (any worker; locked) ---
  enum class LogContext : uint8_t { kToplevel, kMulti, kLua };
  struct LogEntry {
    uint64_t count;
    AclResult reason;
    LogContext context;
    std::string object;
    std::string username;
    int64_t ctime_ms;
    std::string client_info;
    int64_t entry_id;
    int64_t created_ms;
  };
  void AddLogEntry(AclResult reason, LogContext context, std::string object, std::string username,
                   std::string client_info, int64_t now_ms, size_t max_len);
  std::vector<LogEntry> LogEntries(size_t count) const;
  void ResetLog();

  // INFO stats: acl_access_denied_{auth,cmd,key,channel}.
  uint64_t denied(AclResult r) const { return denied_[static_cast<int>(r)].load(std::memory_order_relaxed); }
  void ResetDenied() {
    for (auto& d : denied_) d.store(0, std::memory_order_relaxed);
  }

 private:
  std::string ApplySelectorRule(AclSelector& s, std::string_view op) const;
  AclSelector NewSelector(bool root) const;
  AclUser RedisDefaultUser() const;  // on nopass ~* &* +@all
  void ChangeCommand(AclSelector& s, const CommandSpec& cmd, bool allow) const;
  void UpdateCommandRules(AclSelector& s, std::string_view rule, bool allow) const;
  AclResult CheckSelector(const AclSelector& s, const CommandSpec& cmd, std::span<const std::string_view> args,
                          const std::vector<size_t>& keys, const std::vector<uint8_t>& key_access,
                          size_t* arg_index) const;
  static void Refresh(AclUser& u);
  static bool KeyMatches(const AclSelector::KeyPattern& p, std::string_view key);
  static bool SelectorAllowsChannel(const AclSelector& s, std::string_view channel, bool is_pattern);
  const AclKeySpec& SpecOf(const CommandSpec& cmd) const;
  bool CommandKeys(const CommandSpec& cmd, std::span<const std::string_view> args, std::vector<size_t>* keys,
                   std::vector<uint8_t>* access) const;

  const CommandTable& commands_;
  size_t words_;  // of a selector's command bits
  std::vector<AclKeySpec> key_specs_;  // by CommandSpec::id
  std::map<std::string, std::shared_ptr<AclUser>, std::less<>> users_;
  std::shared_ptr<AclUser> default_;
  bool pubsub_default_all_ = false;

  mutable std::mutex log_mu_;
  std::deque<LogEntry> log_;
  int64_t log_next_id_ = 0;
  std::atomic<uint64_t> denied_[5] = {};
};

// protected-mode (Redis's clientAcceptHandler): with it on and no password
// for the default user, a TCP connection from other than loopback (an
// address 127.* or ::1; `peer` is "ip:port") is refused.
bool ProtectedModeRefuses(bool protected_mode, bool default_nopass, bool is_unix, std::string_view peer);
// Redis's reply to such a connection, before closing it.
extern const std::string_view kProtectedModeDenied;

// ACL LOAD: the users of the ACL file replace all others (every line
// valid, or nothing changes). Returns "" (and in *gone the users replaced,
// whose clients are to be disconnected) or Redis's error text.
std::string LoadAclFile(Acl& acl, const std::string& path, std::vector<std::shared_ptr<AclUser>>* gone);
// ACL SAVE: every user, as ACL LIST shows them. False on an I/O error (logged).
bool SaveAclFile(const Acl& acl, const std::string& path);

// The keys `args` name and the access each needs. False if the arguments
// are too few for the key spec.
bool AclCommandKeys(const CommandSpec& cmd, const AclKeySpec& spec, std::span<const std::string_view> args,
                    std::vector<size_t>* keys, std::vector<uint8_t>* access);
// Every keyed command has an entry: false if `cmd` has keys but no access
// is known for them.
inline bool AclKeyAccessKnown(const CommandSpec& cmd) { return cmd.first_key <= 0 || AclKeySpecOf(cmd).known; }

}  // namespace peregrine
