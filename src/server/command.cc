// The command table (see command.h).
#include "server/command.h"

#include <cctype>

namespace peregrine {

uint32_t CommandSpec::AclCategories() const {
  uint32_t c = acl;
  if (flags & kCmdWrite) c |= kAclWrite;
  if (flags & kCmdReadonly) c |= kAclRead;
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
  int argc = static_cast<int>(args.size());
  int last = last_key < 0 ? argc + last_key : last_key;
  if (first_key >= argc || last >= argc) return false;
  for (int i = first_key; i <= last; i += key_step) out->push_back(static_cast<size_t>(i));
  return true;
}

void CommandTable::Register(CommandSpec spec) {
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  owned->fullname = std::string(owned->name);
  for (CommandSpec& sub : owned->subcommands) {
    sub.parent = owned.get();
    sub.fullname = owned->fullname + "|" + std::string(sub.name);
  }
  by_name_.emplace(owned->fullname, owned.get());
  commands_.push_back(std::move(owned));
}

namespace {
// Lowercases `name` into buf; returns false if it cannot be a command name.
bool LowerName(std::string_view name, char* buf, size_t cap, std::string_view* out) {
  if (name.size() > cap) return false;
  for (size_t i = 0; i < name.size(); i++)
    buf[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  *out = std::string_view(buf, name.size());
  return true;
}
}  // namespace

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  std::string_view lower;
  if (!LowerName(name, buf, sizeof(buf), &lower)) return nullptr;
  auto it = by_name_.find(lower);
  return it == by_name_.end() ? nullptr : it->second;
}

const CommandSpec* CommandTable::FindSubcommand(const CommandSpec& parent, std::string_view name) {
  char buf[64];
  std::string_view lower;
  if (!LowerName(name, buf, sizeof(buf), &lower)) return nullptr;
  for (const CommandSpec& sub : parent.subcommands)
    if (sub.name == lower) return &sub;
  return nullptr;
}

std::vector<std::string_view> FlagNames(uint32_t flags) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kCmdWrite, "write"},          {kCmdReadonly, "readonly"},     {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},          {kCmdPubsub, "pubsub"},         {kCmdNoscript, "noscript"},
      {kCmdBlocking, "blocking"},    {kCmdLoading, "loading"},       {kCmdStale, "stale"},
      {kCmdSkipMonitor, "skip_monitor"}, {kCmdSkipSlowlog, "skip_slowlog"}, {kCmdFast, "fast"},
      {kCmdNoAuth, "no_auth"},       {kCmdMayReplicate, "may_replicate"}, {kCmdNoMulti, "no_multi"},
      {kCmdAllowBusy, "allow_busy"}, {kCmdSentinel, "sentinel"},
  };
  std::vector<std::string_view> out;
  for (auto [bit, name] : kNames)
    if (flags & bit) out.push_back(name);
  return out;
}

std::vector<std::string_view> AclCategoryNames(uint32_t categories) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kAclKeyspace, "@keyspace"}, {kAclRead, "@read"},         {kAclWrite, "@write"},
      {kAclString, "@string"},     {kAclFast, "@fast"},         {kAclSlow, "@slow"},
      {kAclAdmin, "@admin"},       {kAclDangerous, "@dangerous"}, {kAclConnection, "@connection"},
      {kAclTransaction, "@transaction"}, {kAclPubsub, "@pubsub"}, {kAclBlocking, "@blocking"},
  };
  std::vector<std::string_view> out;
  for (auto [bit, name] : kNames)
    if (categories & bit) out.push_back(name);
  return out;
}

}  // namespace peregrine
