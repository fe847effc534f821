// ACL users and their rules (Redis 7.2's ACLSetUser / ACLSetSelector
// semantics and error texts), their description (ACL LIST, GETUSER, the ACL
// file) and the permission check. The ACL log is in acl_log.cc, the keys'
// access per command in acl_keys.cc.
#include "server/acl.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

#include "core/glob.h"
#include "core/numbers.h"
#include "net/socket.h"
#include "protocol/parser.h"
#include "server/command.h"

namespace peregrine {
namespace {

std::string LowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ValidHash(std::string_view h) {
  if (h.size() != 64) return false;
  for (char c : h)
    if (!((c >= 'a' && c <= 'f') || (c >= '0' && c <= '9'))) return false;
  return true;
}

constexpr std::string_view kErrSyntax = "Syntax error";
constexpr std::string_view kErrUnknown = "Unknown command or category name in ACL";
constexpr std::string_view kErrKeyAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. "
    "Try 'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kErrChannelAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
    "effect. Try 'resetchannels' to start with an empty list of channels";
constexpr std::string_view kErrNoSuchPass = "The password you are trying to remove from the user does not exist";
constexpr std::string_view kErrBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
constexpr std::string_view kErrSubFirstArg = "Allowing first-arg of a subcommand is not supported";

// A command by its ACL name: "get", "config|get" (Redis's
// lookupCommandBySdsLogic: at most one '|', the container must have
// subcommands), by the command's own name whatever rename-command did, as
// Redis's ACLLookupCommand looks in its original table.
const CommandSpec* LookupAclCommand(const CommandTable& t, std::string_view name) {
  const size_t bar = name.find('|');
  if (bar == std::string_view::npos) return t.FindOwn(name);
  const std::string_view sub = name.substr(bar + 1);
  if (sub.find('|') != std::string_view::npos) return nullptr;
  const CommandSpec* base = t.FindOwn(name.substr(0, bar));
  if (base == nullptr || base->subcommands.empty()) return nullptr;
  return CommandTable::FindSubcommand(*base, sub);
}

uint32_t CategoryByName(std::string_view name) {
  for (auto [bit, n] : AclCategoryTable())
    if (EqualsIgnoreCase(n, name)) return bit;
  return 0;
}

}  // namespace

const std::string_view kProtectedModeDenied =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for "
    "the default user. In this mode connections are only accepted from the loopback interface. If you want to "
    "connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable "
    "protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by "
    "connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly "
    "accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    "Alternatively you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication "
    "password for the default user. NOTE: You only need to do one of the above things in order for the server "
    "to start accepting connections from the outside.\r\n";

bool ProtectedModeRefuses(bool protected_mode, bool default_nopass, bool is_unix, std::string_view peer) {
  if (!protected_mode || !default_nopass || is_unix) return false;
  const std::string_view ip = AddressIp(peer);
  return !(ip.starts_with("127.") || ip == "::1");
}

bool AclHasSpaces(std::string_view s) {
  for (char c : s)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') return true;
  return false;
}

std::string AclHashPassword(std::string_view password) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(password.data(), password.size(), digest, &len, EVP_sha256(), nullptr);
  return HexOf(digest, len);
}

Acl::Acl(const CommandTable& commands) : commands_(commands) {
  words_ = (commands.num_ids() + 64) / 64;
  key_specs_.resize(commands.num_ids());
  for (const auto& cmd : commands.all()) {
    key_specs_[cmd->id] = AclKeySpecOf(*cmd);
    for (const CommandSpec& sub : cmd->subcommands) key_specs_[sub.id] = AclKeySpecOf(sub);
  }
  default_ = std::make_shared<AclUser>(RedisDefaultUser());
  users_.emplace("default", default_);
}

AclSelector Acl::NewSelector(bool root) const {
  AclSelector s;
  s.root = root;
  s.allowed.assign(words_, 0);
  s.all_channels = pubsub_default_all_;
  return s;
}

std::shared_ptr<AclUser> Acl::Find(std::string_view name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

void Acl::Refresh(AclUser& u) {
  const AclSelector& r = u.selectors[0];
  u.unrestricted = r.all_commands && r.all_keys && r.all_channels;
}

void Acl::ChangeCommand(AclSelector& s, const CommandSpec& cmd, bool allow) const {
  s.SetBit(cmd.id, allow);
  s.first_args.erase(cmd.id);
  for (const CommandSpec& sub : cmd.subcommands) s.SetBit(sub.id, allow);
}

void Acl::UpdateCommandRules(AclSelector& s, std::string_view rule, bool allow) const {
  // The new rule replaces an earlier one for the same command (and, for a
  // whole command, the rules of its subcommands), keeping the others' order.
  const std::string body = LowerCopy(rule);
  std::string kept;
  size_t pos = 0;
  const std::string& rules = s.command_rules;
  while (pos < rules.size()) {
    size_t end = rules.find(' ', pos);
    if (end == std::string::npos) end = rules.size();
    const std::string_view token(rules.data() + pos, end - pos);
    const std::string_view existing = token.substr(1);
    const bool same = existing == body || (existing.size() > body.size() && existing.starts_with(body) &&
                                           existing[body.size()] == '|');
    if (!same) {
      if (!kept.empty()) kept += ' ';
      kept += token;
    }
    pos = end + 1;
  }
  if (!kept.empty()) kept += ' ';
  kept += allow ? '+' : '-';
  kept += body;
  s.command_rules = std::move(kept);
}

std::string Acl::ApplySelectorRule(AclSelector& s, std::string_view op) const {
  if (op.empty()) return std::string(kErrSyntax);
  if (EqualsIgnoreCase(op, "allkeys") || EqualsIgnoreCase(op, "~*")) {
    s.all_keys = true;
    s.patterns.clear();
  } else if (EqualsIgnoreCase(op, "resetkeys")) {
    s.all_keys = false;
    s.patterns.clear();
  } else if (EqualsIgnoreCase(op, "allchannels") || EqualsIgnoreCase(op, "&*")) {
    s.all_channels = true;
    s.channels.clear();
  } else if (EqualsIgnoreCase(op, "resetchannels")) {
    s.all_channels = false;
    s.channels.clear();
  } else if (EqualsIgnoreCase(op, "allcommands") || EqualsIgnoreCase(op, "+@all")) {
    s.allowed.assign(words_, ~uint64_t{0});
    s.all_commands = s.future = true;
    s.command_rules.clear();
    s.first_args.clear();
  } else if (EqualsIgnoreCase(op, "nocommands") || EqualsIgnoreCase(op, "-@all")) {
    s.allowed.assign(words_, 0);
    s.all_commands = s.future = false;
    s.command_rules.clear();
    s.first_args.clear();
  } else if (op[0] == '~' || op[0] == '%') {
    if (s.all_keys) return std::string(kErrKeyAfterAll);
    uint8_t access = 0;
    size_t offset = 1;
    if (op[0] == '%') {
      for (; offset < op.size(); offset++) {
        const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
        if (c == 'R' && !(access & kKeyRead)) {
          access |= kKeyRead;
        } else if (c == 'W' && !(access & kKeyWrite)) {
          access |= kKeyWrite;
        } else if (op[offset] == '~') {
          offset++;
          break;
        } else {
          return std::string(kErrSyntax);
        }
      }
      // "%~pattern" grants nothing (Redis would abort describing it).
      if (access == 0) return std::string(kErrSyntax);
    } else {
      access = kKeyReadWrite;
    }
    const std::string_view pattern = op.substr(offset);
    if (AclHasSpaces(pattern)) return std::string(kErrSyntax);
    auto it = std::find_if(s.patterns.begin(), s.patterns.end(),
                           [&](const AclSelector::KeyPattern& p) { return p.pattern == pattern; });
    if (it == s.patterns.end()) {
      // A literal, or a literal prefix and one '*' at its end, needs no glob.
      AclSelector::KeyPattern::Kind kind = AclSelector::KeyPattern::kLiteral;
      for (size_t i = 0; i < pattern.size(); i++) {
        const char c = pattern[i];
        if (c == '*' && i + 1 == pattern.size() && kind == AclSelector::KeyPattern::kLiteral)
          kind = AclSelector::KeyPattern::kPrefix;
        else if (c == '*' || c == '?' || c == '[' || c == '\\')
          kind = AclSelector::KeyPattern::kGlob;
      }
      s.patterns.push_back({std::string(pattern), access, kind});
    } else {
      it->access |= access;
    }
    s.all_keys = false;
  } else if (op[0] == '&') {
    if (s.all_channels) return std::string(kErrChannelAfterAll);
    const std::string_view pattern = op.substr(1);
    if (AclHasSpaces(pattern)) return std::string(kErrSyntax);
    if (std::find(s.channels.begin(), s.channels.end(), pattern) == s.channels.end())
      s.channels.emplace_back(pattern);
    s.all_channels = false;
  } else if (op[0] == '+' && (op.size() < 2 || op[1] != '@')) {
    const std::string_view name = op.substr(1);
    const size_t bar = name.rfind('|');
    if (bar == std::string_view::npos) {
      const CommandSpec* cmd = LookupAclCommand(commands_, name);
      if (cmd == nullptr) return std::string(kErrUnknown);
      ChangeCommand(s, *cmd, true);
      UpdateCommandRules(s, cmd->fullname, true);
    } else {
      const CommandSpec* cmd = LookupAclCommand(commands_, name.substr(0, bar));
      if (cmd == nullptr) return std::string(kErrUnknown);
      if (cmd->parent != nullptr) return std::string(kErrSubFirstArg);
      const std::string_view sub = name.substr(bar + 1);
      if (sub.empty()) return std::string(kErrSyntax);
      if (!cmd->subcommands.empty()) {
        cmd = LookupAclCommand(commands_, name);
        if (cmd == nullptr) return std::string(kErrUnknown);
        ChangeCommand(s, *cmd, true);
      } else {
        // A first argument of a command otherwise denied ("+select|0").
        std::vector<std::string>& args = s.first_args[cmd->id];
        if (std::none_of(args.begin(), args.end(), [&](const std::string& a) { return EqualsIgnoreCase(a, sub); }))
          args.emplace_back(sub);
      }
      UpdateCommandRules(s, name, true);
    }
  } else if (op[0] == '-' && (op.size() < 2 || op[1] != '@')) {
    const CommandSpec* cmd = LookupAclCommand(commands_, op.substr(1));
    if (cmd == nullptr) return std::string(kErrUnknown);
    ChangeCommand(s, *cmd, false);
    UpdateCommandRules(s, cmd->fullname, false);
  } else if ((op[0] == '+' || op[0] == '-') && op[1] == '@') {
    const bool allow = op[0] == '+';
    const uint32_t category = CategoryByName(op.substr(2));
    if (category == 0) return std::string(kErrUnknown);
    UpdateCommandRules(s, op.substr(1), allow);
    for (const auto& cmd : commands_.all()) {
      if (cmd->AclCategories() & category) ChangeCommand(s, *cmd, allow);
      for (const CommandSpec& sub : cmd->subcommands)
        if (sub.AclCategories() & category) ChangeCommand(s, sub, allow);
    }
  } else {
    return std::string(kErrSyntax);
  }
  return "";
}

std::string Acl::ApplyRule(AclUser& u, std::string_view op) const {
  if (op.empty()) return "";
  if (EqualsIgnoreCase(op, "on")) {
    u.enabled = true;
  } else if (EqualsIgnoreCase(op, "off")) {
    u.enabled = false;
  } else if (EqualsIgnoreCase(op, "skip-sanitize-payload")) {
    u.skip_sanitize_payload = true;
  } else if (EqualsIgnoreCase(op, "sanitize-payload")) {
    u.skip_sanitize_payload = false;
  } else if (EqualsIgnoreCase(op, "nopass")) {
    u.nopass = true;
    u.passwords.clear();
  } else if (EqualsIgnoreCase(op, "resetpass")) {
    u.nopass = false;
    u.passwords.clear();
  } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
    // A password in clear (>, <) or as its hash (#, !), added or removed.
    const bool clear = op[0] == '>' || op[0] == '<';
    if (!clear && !ValidHash(op.substr(1))) return std::string(kErrBadHash);
    std::string hash = clear ? AclHashPassword(op.substr(1)) : std::string(op.substr(1));
    if (op[0] == '>' || op[0] == '#') {
      if (std::find(u.passwords.begin(), u.passwords.end(), hash) == u.passwords.end())
        u.passwords.push_back(std::move(hash));
      u.nopass = false;
      Refresh(u);
      return "";
    }
    auto it = std::find(u.passwords.begin(), u.passwords.end(), hash);
    if (it == u.passwords.end()) return std::string(kErrNoSuchPass);
    u.passwords.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    AclSelector s = NewSelector(false);
    std::vector<std::string> ops;
    if (!SplitArgs(op.substr(1, op.size() - 2), &ops)) return std::string(kErrSyntax);
    for (const std::string& o : ops) {
      std::string err = ApplySelectorRule(s, o);
      if (!err.empty()) return err;
    }
    u.selectors.push_back(std::move(s));
  } else if (EqualsIgnoreCase(op, "clearselectors")) {
    u.selectors.resize(1);
  } else if (EqualsIgnoreCase(op, "reset")) {
    for (std::string_view r : {"resetpass", "resetkeys", "resetchannels"}) ApplyRule(u, r);
    if (pubsub_default_all_) ApplyRule(u, "allchannels");
    for (std::string_view r : {"off", "sanitize-payload", "clearselectors", "-@all"}) ApplyRule(u, r);
  } else {
    std::string err = ApplySelectorRule(u.selectors[0], op);
    if (!err.empty()) return err;
  }
  Refresh(u);
  return "";
}

namespace {

// Redis's ACLMergeSelectorArguments: a selector may be spread over several
// arguments ("(~key" "+get)"); joined with spaces. False on an unmatched
// parenthesis, with *open the index of the argument that opened it.
bool MergeSelectorArguments(std::span<const std::string_view> in, std::vector<std::string>* out, size_t* open) {
  std::string selector;
  bool opened = false;
  for (size_t j = 0; j < in.size(); j++) {
    const std::string_view op = in[j];
    if (!opened && !op.empty() && op[0] == '(' && op.back() != ')') {
      selector = std::string(op);
      opened = true;
      *open = j;
      continue;
    }
    if (opened) {
      selector += ' ';
      selector += op;
      if (!op.empty() && op.back() == ')') {
        opened = false;
        out->push_back(std::move(selector));
      }
      continue;
    }
    out->emplace_back(op);
  }
  return !opened;
}

}  // namespace

AclUser Acl::NewUser(std::string_view name) const {
  AclUser u;
  u.name = std::string(name);
  u.selectors.push_back(NewSelector(true));
  return u;
}

AclUser Acl::RedisDefaultUser() const {
  AclUser u = NewUser("default");
  for (std::string_view r : {"+@all", "~*", "&*", "on", "nopass"}) ApplyRule(u, r);
  return u;
}

std::string Acl::ApplyRules(AclUser& u, std::span<const std::string_view> rules, const RuleFailure& each) const {
  std::vector<std::string> merged;
  size_t open = 0;
  if (!MergeSelectorArguments(rules, &merged, &open))
    return "Unmatched parenthesis in acl selector starting at '" + std::string(rules[open]) + "'.";
  std::string first;
  for (const std::string& r : merged) {
    const std::string err = ApplyRule(u, r);
    if (err.empty()) continue;
    if (first.empty()) first = "Error in ACL SETUSER modifier '" + r + "': " + err;
    if (!each) break;
    each(r, err, err == kErrUnknown);
  }
  return first;
}

std::string Acl::SetUser(std::string_view name, std::span<const std::string_view> rules,
                         std::shared_ptr<AclUser>* changed) {
  std::shared_ptr<AclUser> existing = Find(name);
  // Every rule is applied to a copy first: all of them take effect, or none.
  AclUser staged = existing != nullptr ? *existing : NewUser(name);
  std::string err = ApplyRules(staged, rules);
  if (!err.empty()) return err;
  if (existing == nullptr) {
    existing = std::make_shared<AclUser>(std::move(staged));
    users_.emplace(std::string(name), existing);
  } else {
    // In place: its clients (which hold it) see the new rules at once.
    *existing = std::move(staged);
  }
  if (changed != nullptr) *changed = existing;
  return "";
}

std::shared_ptr<AclUser> Acl::Remove(std::string_view name) {
  auto it = users_.find(name);
  if (it == users_.end() || it->second == default_) return nullptr;
  std::shared_ptr<AclUser> u = std::move(it->second);
  users_.erase(it);
  return u;
}

std::vector<std::shared_ptr<AclUser>> Acl::ReplaceAll(std::map<std::string, std::shared_ptr<AclUser>, std::less<>> users) {
  std::vector<std::shared_ptr<AclUser>> gone;
  for (auto& [name, u] : users_)
    if (u != default_) gone.push_back(u);
  // The default user stays the same object (every client holding it sees
  // the change); with none in the file, Redis's default one.
  auto d = users.find("default");
  *default_ = d != users.end() ? std::move(*d->second) : RedisDefaultUser();
  users["default"] = default_;
  users_ = std::move(users);
  return gone;
}

void Acl::SetRequirePass(std::string_view password) {
  ApplyRule(*default_, "resetpass");
  if (password.empty())
    ApplyRule(*default_, "nopass");
  else
    ApplyRule(*default_, ">" + std::string(password));
}

// --- Description ---

std::string Acl::DescribeCommands(const AclSelector& s) const {
  std::string out = s.future ? "+@all" : "-@all";
  if (!s.command_rules.empty()) out += " " + s.command_rules;
  return out;
}

namespace {
void AppendPattern(std::string* out, const AclSelector::KeyPattern& p) {
  *out += p.access == kKeyReadWrite ? "~" : p.access == kKeyRead ? "%R~" : "%W~";
  *out += p.pattern;
}
}  // namespace

std::string Acl::DescribeKeys(const AclSelector& s) const {
  if (s.all_keys) return "~*";
  std::string out;
  for (const auto& p : s.patterns) {
    if (!out.empty()) out += ' ';
    AppendPattern(&out, p);
  }
  return out;
}

std::string Acl::DescribeChannels(const AclSelector& s) const {
  if (s.all_channels) return "&*";
  std::string out;
  for (const auto& c : s.channels) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

std::string Acl::Describe(const AclUser& u) const {
  std::string out = u.enabled ? "on " : "off ";
  if (u.nopass) out += "nopass ";
  out += u.skip_sanitize_payload ? "skip-sanitize-payload " : "sanitize-payload ";
  for (const std::string& p : u.passwords) out += "#" + p + " ";
  for (const AclSelector& s : u.selectors) {
    std::string d;
    if (s.all_keys) {
      d += "~* ";
    } else {
      for (const auto& p : s.patterns) {
        AppendPattern(&d, p);
        d += ' ';
      }
    }
    if (s.all_channels) {
      d += "&* ";
    } else {
      d += "resetchannels ";
      for (const auto& c : s.channels) d += "&" + c + " ";
    }
    d += DescribeCommands(s);
    out += s.root ? d : " (" + d + ")";
  }
  return out;
}

// --- Checks ---

bool Acl::KeyMatches(const AclSelector::KeyPattern& p, std::string_view key) {
  switch (p.kind) {
    case AclSelector::KeyPattern::kLiteral:
      return key == p.pattern;
    case AclSelector::KeyPattern::kPrefix:
      return key.starts_with(std::string_view(p.pattern).substr(0, p.pattern.size() - 1));
    case AclSelector::KeyPattern::kGlob:
      break;
  }
  return GlobMatch(p.pattern, key);
}

const AclKeySpec& Acl::SpecOf(const CommandSpec& cmd) const {
  static const AclKeySpec kUnknown;  // (a command registered after the registry was made: none is)
  return cmd.id < key_specs_.size() ? key_specs_[cmd.id] : kUnknown;
}

bool Acl::CommandKeys(const CommandSpec& cmd, std::span<const std::string_view> args, std::vector<size_t>* keys,
                      std::vector<uint8_t>* access) const {
  return AclCommandKeys(cmd, SpecOf(cmd), args, keys, access);
}

AclResult Acl::CheckSelector(const AclSelector& s, const CommandSpec& cmd, std::span<const std::string_view> args,
                             const std::vector<size_t>& keys, const std::vector<uint8_t>& key_access,
                             size_t* arg_index) const {
  if (!s.all_commands && !(cmd.flags & kCmdNoAuth) && !s.Allows(cmd.id)) {
    // Allowed with a given first argument only?
    auto it = s.first_args.find(cmd.id);
    const size_t idx = cmd.parent != nullptr ? 2 : 1;
    if (it == s.first_args.end() || args.size() <= idx) return AclResult::kDeniedCmd;
    if (std::none_of(it->second.begin(), it->second.end(), [&](const std::string& a) { return EqualsIgnoreCase(a, args[idx]); }))
      return AclResult::kDeniedCmd;
  }
  if (!s.all_keys) {
    for (size_t j = 0; j < keys.size(); j++) {
      const std::string_view key = args[keys[j]];
      const uint8_t need = key_access[j];
      bool ok = false;
      for (const auto& p : s.patterns) {
        if ((p.access & need) != need) continue;
        if (KeyMatches(p, key)) {
          ok = true;
          break;
        }
      }
      if (!ok) {
        *arg_index = keys[j];
        return AclResult::kDeniedKey;
      }
    }
  }
  const AclKeySpec::Channels channels = SpecOf(cmd).channels;
  if (!s.all_channels && channels != AclKeySpec::kNoChannels) {
    const size_t end = channels == AclKeySpec::kPublish ? std::min<size_t>(2, args.size()) : args.size();
    for (size_t j = 1; j < end; j++) {
      if (!SelectorAllowsChannel(s, args[j], channels == AclKeySpec::kPSubscribe)) {
        *arg_index = j;
        return AclResult::kDeniedChannel;
      }
    }
  }
  return AclResult::kOk;
}

AclResult Acl::Check(const AclUser& u, const CommandSpec& cmd, std::span<const std::string_view> args,
                     size_t* arg_index) const {
  // (Per thread: no allocation per command once they have grown.)
  thread_local std::vector<size_t> keys;
  thread_local std::vector<uint8_t> access;
  keys.clear();
  access.clear();
  bool keys_known = false;
  AclResult relevant = AclResult::kDeniedCmd;
  size_t last_idx = 0;
  for (const AclSelector& s : u.selectors) {
    if (!s.all_keys && !keys_known && cmd.first_key > 0) {
      if (!CommandKeys(cmd, args, &keys, &access)) keys.clear(), access.clear();
      keys_known = true;
    }
    size_t idx = 0;
    const AclResult r = s.all_keys ? CheckSelector(s, cmd, args, {}, {}, &idx)
                                   : CheckSelector(s, cmd, args, keys, access, &idx);
    if (r == AclResult::kOk) return r;
    if (r > relevant || (r == relevant && idx > last_idx)) {
      relevant = r;
      last_idx = idx;
    }
  }
  *arg_index = last_idx;
  return relevant;
}

bool Acl::CheckWithAllKeys(const AclUser& u, const CommandSpec& cmd, std::span<const std::string_view> args,
                           uint8_t need) const {
  std::vector<size_t> keys;
  std::vector<uint8_t> access;
  if (cmd.first_key > 0 && !CommandKeys(cmd, args, &keys, &access)) keys.clear(), access.clear();
  for (const AclSelector& s : u.selectors) {
    size_t idx;
    if (CheckSelector(s, cmd, args, keys, access, &idx) != AclResult::kOk) continue;
    if (s.all_keys) return true;
    for (const auto& p : s.patterns)
      if ((p.access & need) == need && p.pattern == "*") return true;
  }
  return false;
}

bool Acl::SelectorAllowsChannel(const AclSelector& s, std::string_view channel, bool is_pattern) {
  if (s.all_channels) return true;
  for (const std::string& p : s.channels)
    if (is_pattern ? p == channel : GlobMatch(p, channel)) return true;
  return false;
}

bool Acl::ChannelAllowed(const AclUser& u, std::string_view channel, bool is_pattern) const {
  for (const AclSelector& s : u.selectors)
    if (SelectorAllowsChannel(s, channel, is_pattern)) return true;
  return false;
}

bool Acl::CheckPassword(const AclUser& u, std::string_view password) const {
  if (!u.enabled) return false;
  if (u.nopass) return true;
  const std::string hashed = AclHashPassword(password);
  bool match = false;
  for (const std::string& p : u.passwords) {
    // Constant time: a timing difference must not tell how much matched.
    int diff = 0;
    for (size_t i = 0; i < 64; i++) diff |= hashed[i] ^ p[i];
    match |= diff == 0;
  }
  return match;
}

std::string Acl::DenialMessage(AclResult r, const AclUser& u, const CommandSpec& cmd, std::string_view arg,
                               bool verbose) {
  switch (r) {
    case AclResult::kDeniedCmd:
      return "User " + u.name + " has no permissions to run the '" + cmd.fullname + "' command";
    case AclResult::kDeniedKey:
      if (verbose) return "User " + u.name + " has no permissions to access the '" + std::string(arg) + "' key";
      return "No permissions to access a key";
    case AclResult::kDeniedChannel:
      if (verbose) return "User " + u.name + " has no permissions to access the '" + std::string(arg) + "' channel";
      return "No permissions to access a channel";
    default:
      return "";
  }
}

}  // namespace peregrine
