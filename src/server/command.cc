// The command table (see command.h).
#include "server/command.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/numbers.h"

namespace peregrine {

uint32_t CommandSpec::AclCategories() const {
  uint32_t c = acl;
  if (flags & kCmdWrite) c |= kAclWrite;
  if ((flags & kCmdReadonly) && !(c & kAclScripting)) c |= kAclRead;  // (Redis: EVAL_RO is not @read)
  if (flags & kCmdAdmin) c |= kAclAdmin | kAclDangerous;
  if (flags & kCmdPubsub) c |= kAclPubsub;
  if (flags & kCmdFast) c |= kAclFast;
  if (flags & kCmdBlocking) c |= kAclBlocking;
  if (!(c & kAclFast)) c |= kAclSlow;
  return c;
}

bool CommandSpec::KeyPositions(std::span<const std::string_view> args, std::vector<size_t>* out) const {
  out->clear();
  if (first_key <= 0) return true;
  if (find_keys != nullptr) return find_keys(args, out);
  int argc = static_cast<int>(args.size());
  if (numkeys_index > 0) {
    int64_t n;
    const int64_t least = (flags & kCmdNoMandatoryKeys) ? 0 : 1;
    if (numkeys_index >= argc || !ParseInt64(args[static_cast<size_t>(numkeys_index)], &n) || n < least ||
        n > argc - numkeys_index - 1)
      return false;
    if (first_key < numkeys_index) out->push_back(static_cast<size_t>(first_key));  // a destination
    for (int64_t i = 1; i <= n; i++) out->push_back(static_cast<size_t>(numkeys_index + i));
    return true;
  }
  int last = last_key < 0 ? argc + last_key : last_key;
  if (first_key >= argc || last >= argc) return false;
  for (int i = first_key; i <= last; i += key_step) out->push_back(static_cast<size_t>(i));
  return true;
}

size_t CommandSpec::FirstKeyIndex(std::span<const std::string_view> args, std::vector<size_t>* scratch) const {
  if (first_key <= 0) return 0;
  if (find_keys == nullptr && numkeys_index == 0)
    return static_cast<size_t>(first_key) < args.size() ? static_cast<size_t>(first_key) : 0;
  return KeyPositions(args, scratch) && !scratch->empty() ? (*scratch)[0] : 0;
}

void CommandTable::Register(CommandSpec spec) {
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  owned->fullname = std::string(owned->name);
  owned->id = next_id_++;
  if (owned->numkeys_index > 0 || owned->find_keys != nullptr) owned->flags |= kCmdMovableKeys;
  for (CommandSpec& sub : owned->subcommands) {
    sub.parent = owned.get();
    sub.fullname = owned->fullname + "|" + std::string(sub.name);
    sub.id = next_id_++;
  }
  commands_.push_back(std::move(owned));
  Rebuild();
}

void CommandFamily::Complete(CommandSpec& spec) const {
  if (spec.group.empty()) spec.group = group_;
  if (spec.first_key > 0 && spec.key_step == 0) spec.key_step = 1;
  if (spec.subcommands.empty()) spec.acl |= acl_;  // a container has no category of its own
  for (CommandSpec& sub : spec.subcommands) Complete(sub);
}

void CommandFamily::Add(CommandSpec spec) {
  Complete(spec);
  table_.Register(std::move(spec));
}

uint32_t CommandTable::LowerAndHash(std::string_view name, char* buf) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (size_t i = 0; i < name.size(); i++) {
    char c = name[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
    buf[i] = c;
    h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  }
  return h;
}

std::vector<CommandTable::Slot> CommandTable::Build(
    const std::vector<std::pair<std::string_view, const CommandSpec*>>& names) {
  size_t size = 16;
  while (size < names.size() * 4) size *= 2;
  std::vector<Slot> slots(size);
  char buf[kMaxNameLength];
  for (const auto& [name, cmd] : names) {
    size_t slot = LowerAndHash(name, buf) & (size - 1);
    while (slots[slot].cmd != nullptr) slot = (slot + 1) & (size - 1);
    slots[slot] = Slot{name, cmd};
  }
  return slots;
}

void CommandTable::Rebuild() {
  // (Names are lowercase: the commands' own are declared so, renamed ones
  // are stored lowered.)
  std::vector<std::pair<std::string_view, const CommandSpec*>> own, client;
  for (const auto& cmd : commands_) own.emplace_back(cmd->name, cmd.get());
  for (const auto& [name, cmd] : client_names_) client.emplace_back(*name, cmd);
  own_slots_ = Build(own);
  slots_ = renamed_ ? Build(client) : own_slots_;
  listed_.assign(renamed_ ? next_id_ : 0, false);
  for (const auto& [name, cmd] : client_names_) listed_[cmd->id] = true;
}

const CommandSpec* CommandTable::FindIn(const std::vector<Slot>& slots, std::string_view name) {
  if (name.size() > kMaxNameLength || slots.empty()) return nullptr;
  char lower[kMaxNameLength];
  const size_t mask = slots.size() - 1;
  for (size_t slot = LowerAndHash(name, lower) & mask;; slot = (slot + 1) & mask) {
    const Slot& s = slots[slot];
    if (s.cmd == nullptr) return nullptr;
    if (s.name.size() == name.size() && std::memcmp(s.name.data(), lower, name.size()) == 0) return s.cmd;
  }
}

bool CommandTable::Rename(std::string_view from, std::string_view to, std::string* err) {
  const CommandSpec* cmd = Find(from);
  if (cmd == nullptr) {
    *err = "No such command in rename-command";
    return false;
  }
  if (to.size() > kMaxNameLength) {
    *err = "Target command name is longer than " + std::to_string(kMaxNameLength) + " characters";
    return false;
  }
  char from_buf[kMaxNameLength], to_buf[kMaxNameLength];
  LowerAndHash(from, from_buf);
  LowerAndHash(to, to_buf);
  const bool same = std::string_view(from_buf, from.size()) == std::string_view(to_buf, to.size());
  if (!to.empty() && !same && Find(to) != nullptr) {
    *err = "Target command name already exists";
    return false;
  }
  if (!renamed_) {
    for (const auto& c : commands_) client_names_.emplace_back(std::make_unique<std::string>(c->name), c.get());
    renamed_ = true;
  }
  const std::string_view from_lower(from_buf, from.size());
  std::erase_if(client_names_, [&](const auto& n) { return *n.first == from_lower; });
  if (!to.empty()) client_names_.emplace_back(std::make_unique<std::string>(to_buf, to.size()), cmd);
  Rebuild();
  return true;
}

bool CommandTable::Listed(const CommandSpec& cmd) const {
  if (!renamed_) return true;
  const CommandSpec* top = cmd.parent != nullptr ? cmd.parent : &cmd;
  return listed_[top->id];
}

const CommandSpec* CommandTable::FindSubcommand(const CommandSpec& parent, std::string_view name) {
  if (name.size() > kMaxNameLength) return nullptr;
  char lower[kMaxNameLength];
  LowerAndHash(name, lower);
  std::string_view l(lower, name.size());
  for (const CommandSpec& sub : parent.subcommands)
    if (sub.name == l) return &sub;
  return nullptr;
}

std::vector<std::string_view> FlagNames(uint32_t flags) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kCmdWrite, "write"},          {kCmdReadonly, "readonly"},     {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},          {kCmdPubsub, "pubsub"},         {kCmdNoscript, "noscript"},
      {kCmdBlocking, "blocking"},    {kCmdLoading, "loading"},       {kCmdStale, "stale"},
      {kCmdSkipMonitor, "skip_monitor"}, {kCmdSkipSlowlog, "skip_slowlog"}, {kCmdAsking, "asking"},
      {kCmdFast, "fast"},
      {kCmdNoAuth, "no_auth"},  // (may_replicate, sentinel and protected: hidden, as Redis hides them)
      {kCmdNoMandatoryKeys, "no_mandatory_keys"}, {kCmdNoAsyncLoading, "no_async_loading"},
      {kCmdNoMulti, "no_multi"},
      {kCmdMovableKeys, "movablekeys"}, {kCmdAllowBusy, "allow_busy"},
  };  // Redis 7.2's order (addReplyFlagsForCommand)
  std::vector<std::string_view> out;
  for (auto [bit, name] : kNames)
    if (flags & bit) out.push_back(name);
  return out;
}

std::span<const std::pair<uint32_t, std::string_view>> AclCategoryTable() {
  // Redis's order (its ACL_CATEGORY_* bits), as COMMAND INFO and ACL CAT
  // list them.
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kAclKeyspace, "keyspace"},   {kAclRead, "read"},
      {kAclWrite, "write"},         {kAclSet, "set"},
      {kAclSortedSet, "sortedset"}, {kAclList, "list"},
      {kAclHash, "hash"},           {kAclString, "string"},
      {kAclBitmap, "bitmap"},       {kAclHyperLogLog, "hyperloglog"},
      {kAclGeo, "geo"},             {kAclStream, "stream"},
      {kAclPubsub, "pubsub"},       {kAclAdmin, "admin"},
      {kAclFast, "fast"},           {kAclSlow, "slow"},
      {kAclBlocking, "blocking"},   {kAclDangerous, "dangerous"},
      {kAclConnection, "connection"}, {kAclTransaction, "transaction"},
      {kAclScripting, "scripting"},
  };
  return kNames;
}

std::vector<std::string_view> AclCategoryNames(uint32_t categories) {
  static const std::vector<std::string> kWithAt = [] {
    std::vector<std::string> v;
    for (auto [bit, name] : AclCategoryTable()) v.push_back("@" + std::string(name));
    return v;
  }();
  std::vector<std::string_view> out;
  size_t i = 0;
  for (auto [bit, name] : AclCategoryTable()) {
    if (categories & bit) out.push_back(kWithAt[i]);
    i++;
  }
  return out;
}

}  // namespace peregrine
