// What the hash command files share (commands/hash_commands.cc: the Redis 7.2
// commands; commands/hash_expiry_commands.cc: field expiry, Redis 7.4 and 8.0).
#pragma once

#include <span>
#include <string_view>

#include "commands/common.h"
#include "core/hash_object.h"

namespace peregrine::hash_commands {

// The hash-max-listpack-* directives as they are now.
HashLimits Limits(const CommandContext& ctx);

// LookupTyped for a hash, after which the hash's fields whose deadline has
// passed are gone (Db::ExpireFieldsOf: *e is nullptr if none was left).
bool LookupHash(CommandContext& ctx, std::string_view key, Db::Entry** e, bool write = false);

// The hash of an entry LookupHash found, or a new empty one at `key` if it
// found none.
HashObject& HashOf(CommandContext& ctx, Db::Entry* e, std::string_view key);

// As Redis's hashTypeTryConversion before a write of field/value `pairs`:
// more pairs than a listpack may hold, or a long argument, convert the hash
// before anything is written.
void ConvertForPairs(HashObject& h, std::span<const std::string_view> pairs, const HashLimits& limits);

// After a command changed fields or their deadlines: deletes the key if its
// hash has no fields left, and otherwise registers the hash's earliest
// deadline with the database if it moved from `min_before`
// (Db::NoteHashDeadline).
void Settle(CommandContext& ctx, std::string_view key, const HashObject& h, int64_t min_before);

// The field-expiry commands (hash_expiry_commands.cc), registered by
// RegisterHashCommands after the others.
void RegisterHashExpiryCommands(CommandTable& t);

}  // namespace peregrine::hash_commands
