// Key specs: for every command with keys, where each of its key arguments
// is and how the command uses it, as Redis 7.2 declares them (COMMAND
// INFO's tenth element; COMMAND GETKEYS and GETKEYSANDFLAGS). The table,
// key_specs_table.cc, states Redis's specs in a compact form of our own;
// commands Redis 7.2 lacks follow the Redis that added them (7.4: the hash
// field TTL commands; 8.0: HGETDEL, HGETEX, HSETEX).
//
// The dispatcher does not read these: it routes by CommandSpec's key
// positions (first_key ..., numkeys_index, find_keys), and ACL by its own
// reduced table (acl_keys.cc). The unit test checks that the three agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace peregrine {

struct CommandSpec;
class ReplyWriter;

// A key spec's flags (Redis's CMD_KEY_*), in the order COMMAND prints them.
enum KeySpecFlag : uint16_t {
  kKeySpecRO = 1 << 0,        // read only
  kKeySpecRW = 1 << 1,        // read and write
  kKeySpecOW = 1 << 2,        // overwritten, not read
  kKeySpecRM = 1 << 3,        // deleted
  kKeySpecAccess = 1 << 4,    // the value goes back to the user
  kKeySpecUpdate = 1 << 5,    // the value is changed
  kKeySpecInsert = 1 << 6,    // something is added, nothing changed
  kKeySpecDelete = 1 << 7,    // something is removed
  kKeySpecNotKey = 1 << 8,    // not a key (a shard channel): found, never a key
  kKeySpecIncomplete = 1 << 9,      // may miss keys: the command's own parser finds them
  kKeySpecVariableFlags = 1 << 10,  // the flags depend on the arguments
};

// Where the search for a spec's keys begins: at an index, or after a
// keyword looked for from an index (negative: from the end, backwards).
struct KeyBegin {
  enum Type : uint8_t { kIndex, kKeyword, kUnknown };
  Type type = kUnknown;
  int pos = 0;  // the index, or where the keyword's search starts
  std::string_view keyword;
};

// Which arguments from there are keys: a range (the last key relative to
// the first, or negative from the end; every keystep-th; with limit, only
// the first 1/limit of what is left, as XREAD's STREAMS), or a count
// (at keynumidx from the begin) of keys (from firstkey past the begin).
struct KeyFind {
  enum Type : uint8_t { kRange, kKeynum, kUnknown };
  Type type = kUnknown;
  int lastkey = 0;
  int keystep = 1;
  int limit = 0;
  int keynumidx = 0;
  int firstkey = 0;
};

struct KeySpec {
  std::string_view command;  // the full name ("object|freq")
  uint16_t flags = 0;
  KeyBegin begin;
  KeyFind find;
  std::string_view notes;
};

// The key specs of a command by its full name, in Redis's order (empty if
// it has none).
std::span<const KeySpec> KeySpecsOf(std::string_view fullname);

// Every spec of every command, a command's specs next to each other.
std::span<const KeySpec> AllKeySpecs();

// The flags' names as COMMAND prints them ("RW", "access", "update").
std::vector<std::string_view> KeySpecFlagNames(uint16_t flags);

// COMMAND INFO's key specs (a set of maps), and a key's flags (a set of
// simple strings), as Redis writes them.
void WriteKeySpecs(ReplyWriter& w, std::span<const KeySpec> specs);
void WriteKeySpecFlags(ReplyWriter& w, uint16_t flags);

// One key an invocation names: its index in the arguments, and its flags.
struct KeyReference {
  size_t pos;
  uint16_t flags;
};

// Whether COMMAND GETKEYS can find keys in the command (Redis's
// doesCommandHaveKeys): a spec that is not NOT_KEY, or a parser of its own.
bool CommandHasKeyArguments(const CommandSpec& cmd);

// The keys of an invocation (args[0] the command's name; a subcommand's
// begins with its container's), with their flags, as Redis's
// getKeysFromCommandWithSpecs finds them: by the specs when they are
// complete and their flags fixed, else (or when the specs fail) by the
// command's own parser (SET's GET, SORT's STORE, MIGRATE's KEYS ...).
// Empty when the arguments name none (or cannot be read).
void FindKeysWithFlags(const CommandSpec& cmd, std::span<const std::string_view> args,
                       std::vector<KeyReference>* out);

}  // namespace peregrine
