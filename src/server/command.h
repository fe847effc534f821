// The command table: one declaration per command (name, arity, flags, key
// positions, ACL categories, documentation, handler) that the dispatcher
// enforces, that COMMAND / COMMAND INFO / COMMAND DOCS report, and that routes
// keys to shards. Each commands/<family>_commands.cc declares its commands
// here through a CommandFamily.
#pragma once

#include <cctype>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/numbers.h"  // (EqualsIgnoreCase)
#include "server/latency_histogram.h"

namespace peregrine {


// Command flags, as COMMAND INFO names them.
enum CommandFlag : uint32_t {
  kCmdWrite = 1u << 0,
  kCmdReadonly = 1u << 1,
  kCmdDenyOom = 1u << 2,
  kCmdAdmin = 1u << 3,
  kCmdPubsub = 1u << 4,
  kCmdNoscript = 1u << 5,
  kCmdBlocking = 1u << 6,
  kCmdLoading = 1u << 7,
  kCmdStale = 1u << 8,
  kCmdSkipMonitor = 1u << 9,
  kCmdSkipSlowlog = 1u << 10,
  kCmdFast = 1u << 11,
  kCmdNoAuth = 1u << 12,
  kCmdMayReplicate = 1u << 13,
  kCmdNoMulti = 1u << 14,
  // Refused (-LOADING) while a replica serves its old data during a swapdb
  // load (Redis's CMD_NO_ASYNC_LOADING).
  kCmdNoAsyncLoading = 1u << 19,
  // Served on a slot being imported without ASKING (RESTORE-ASKING).
  kCmdAsking = 1u << 20,
  // Peregrine's own: SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE, whose arguments
  // from the first on (SPUBLISH: just the first) are shard channels. Redis
  // gives them key specs flagged not_key: COMMAND INFO shows those and a
  // cluster routes them by slot, but they are no keys (no shard holds them).
  kCmdShardChannels = 1u << 21,
  kCmdAllowBusy = 1u << 15,
  kCmdSentinel = 1u << 16,
  // Set by Register for a command with numkeys.
  kCmdMovableKeys = 1u << 17,
  // EVAL, FCALL: keys may be none.
  kCmdNoMandatoryKeys = 1u << 18,
  // Peregrine's own, not reported by COMMAND INFO: the command reads or
  // writes every shard (KEYS, FLUSHALL) or every worker's state (INFO,
  // CLIENT LIST, CONFIG SET), so it runs with all of them held
  // (docs/transactions.md).
  kCmdAllShards = 1u << 31,
  // Peregrine's own too: allowed to a client subscribed over RESP2 (Redis's
  // list: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT, RESET).
  kCmdPubsubContext = 1u << 30,
  // PUBLISH: runs holding every worker that has subscribers.
  kCmdPublishes = 1u << 29,
  // DEBUG (Redis's CMD_PROTECTED, which Redis 7.0's COMMAND INFO does not
  // show): refused before it runs, counted as rejected, unless
  // enable-debug-command allows the client.
  kCmdProtected = 1u << 28,
  // Inside MULTI, run at once instead of queued (Redis's list: MULTI, EXEC,
  // DISCARD, WATCH, QUIT, RESET).
  kCmdNotQueued = 1u << 27,
  // EXEC: runs holding the shards of the queued commands' keys.
  kCmdExec = 1u << 26,
  // WATCH: runs on the client's own worker (it changes the connection's
  // state), holding the shards of its keys.
  kCmdLocal = 1u << 25,
  // EVAL / EVALSHA (and their _RO forms): its declared keys are those after
  // numkeys, none is mandatory; a script known to touch others runs holding
  // every shard (docs/scripting.md).
  kCmdScript = 1u << 24,
};

// ACL categories (without the '@').
enum AclCategory : uint32_t {
  kAclKeyspace = 1u << 0,
  kAclRead = 1u << 1,
  kAclWrite = 1u << 2,
  kAclString = 1u << 3,
  kAclFast = 1u << 4,
  kAclSlow = 1u << 5,
  kAclAdmin = 1u << 6,
  kAclDangerous = 1u << 7,
  kAclConnection = 1u << 8,
  kAclTransaction = 1u << 9,
  kAclPubsub = 1u << 10,
  kAclBlocking = 1u << 11,
  kAclHash = 1u << 12,
  kAclSet = 1u << 13,
  kAclList = 1u << 14,
  kAclSortedSet = 1u << 15,
  kAclGeo = 1u << 16,
  kAclScripting = 1u << 17,
  kAclBitmap = 1u << 18,
  kAclHyperLogLog = 1u << 19,
  kAclStream = 1u << 20,
};

// A command's handler: its context is server/command_context.h.
struct CommandContext;
using CommandHandler = void (*)(CommandContext&);

struct CommandStats {
  uint64_t calls = 0;
  uint64_t ticks = 0;  // time spent, in CycleClock ticks
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
  // latency-tracking: its calls' latencies (made at the first one).
  std::unique_ptr<LatencyHistogram> latency;
  void RecordLatency(uint64_t us) {
    if (latency == nullptr) [[unlikely]]
      latency = std::make_unique<LatencyHistogram>();
    latency->Record(static_cast<int64_t>(us) * 1000);
  }
};

struct CommandSpec {
  std::string_view name;  // lowercase; a subcommand's own name ("list")
  int arity = 0;          // argc including the name(s); negative = at least -arity
  uint32_t flags = 0;
  uint32_t acl = 0;        // categories beyond those implied by flags
  int first_key = 0;       // 0 = no keys
  int last_key = 0;        // negative counts from the end
  int key_step = 0;
  // Keys given as "numkeys key [key ...]" (SINTERCARD, ZUNION, EVAL): the
  // index of numkeys, whose keys follow it (first_key is the next index,
  // or a destination key before numkeys, as ZUNIONSTORE's; last_key and
  // key_step are not used).
  int numkeys_index = 0;
  // Keys found by reading the arguments (GEORADIUS ... STORE key): when
  // set, KeyPositions asks it (first_key is still the first key).
  bool (*find_keys)(std::span<const std::string_view> args, std::vector<size_t>* out) = nullptr;
  // Arguments that can name keys no key position gives (SORT's BY and GET
  // patterns): when this says so, the command holds every shard (as one
  // flagged kCmdAllShards does), here, in a transaction and in a script.
  bool (*all_shards_when)(std::span<const std::string_view> args) = nullptr;
  std::string_view summary;
  std::string_view since;
  std::string_view group;
  std::string_view complexity;
  std::vector<std::string_view> tips;
  CommandHandler handler = nullptr;
  std::vector<CommandSpec> subcommands;

  // Filled in by CommandTable::Register.
  const CommandSpec* parent = nullptr;
  std::string fullname;  // "get", "client|list"
  uint32_t id = 0;       // dense over commands and subcommands: indexes per-worker statistics

  // All ACL categories, including those implied by flags (@write, @fast ...).
  uint32_t AclCategories() const;
  // Positions of the key arguments in `args` (empty if none or malformed).
  // Returns false if the arguments are too few for the key spec.
  bool KeyPositions(std::span<const std::string_view> args, std::vector<size_t>* out) const;
  // The index in `args` of the first key, or 0 if they name none (a bad
  // numkeys, XREAD without STREAMS): first_key, unless keys are found by
  // parsing (numkeys, find_keys), when first_key only says there are keys.
  size_t FirstKeyIndex(std::span<const std::string_view> args, std::vector<size_t>* scratch) const;
  // Whether these arguments need every shard held (kCmdAllShards, or
  // all_shards_when).
  bool NeedsAllShards(std::span<const std::string_view> args) const {
    return (flags & kCmdAllShards) || (all_shards_when != nullptr && all_shards_when(args));
  }
};

class CommandTable {
 public:
  // Adds a command (with its subcommands). Names must be unique.
  void Register(CommandSpec spec);

  // Case-insensitive lookup of a name clients may use (after rename-command);
  // nullptr if unknown.
  const CommandSpec* Find(std::string_view name) const { return FindIn(slots_, name); }
  // By a command's own name, whatever rename-command did (ACL rules name
  // commands so, as Redis's).
  const CommandSpec* FindOwn(std::string_view name) const { return FindIn(own_slots_, name); }
  // Either: for what the server replays (the append-only file, a primary's
  // stream), which holds the names clients typed (renamed ones too, as in
  // Redis) and the server's own rewritten forms (own names, tried first).
  const CommandSpec* FindAny(std::string_view name) const {
    const CommandSpec* c = FindOwn(name);
    return c != nullptr || !renamed_ ? c : Find(name);
  }
  static const CommandSpec* FindSubcommand(const CommandSpec& parent, std::string_view name);

  // redis.conf's rename-command, at start: `from` (a name clients may use)
  // becomes `to`, or is removed when `to` is empty. False with *err
  // (Redis's texts) if `from` is unknown or `to` taken (by another name;
  // `to` may be `from` itself), or longer than a command name may be.
  bool Rename(std::string_view from, std::string_view to, std::string* err);
  // Whether clients can reach the command by some name (COMMAND lists only
  // those, as Redis lists its renamed table).
  bool Listed(const CommandSpec& cmd) const;

  // Commands in registration order.
  const std::vector<std::unique_ptr<CommandSpec>>& all() const { return commands_; }
  // How many ids Register has given (commands and subcommands).
  uint32_t num_ids() const { return next_id_; }

 private:
  static constexpr size_t kMaxNameLength = 64;
  // Lowercases `name` into buf (kMaxNameLength bytes) and returns its hash.
  static uint32_t LowerAndHash(std::string_view name, char* buf);
  struct Slot {
    std::string_view name;  // lowercase
    const CommandSpec* cmd = nullptr;
  };
  // Open addressing over lowercase names: the lookup runs for every request,
  // so it lowercases and hashes in one pass and never allocates.
  static std::vector<Slot> Build(const std::vector<std::pair<std::string_view, const CommandSpec*>>& names);
  static const CommandSpec* FindIn(const std::vector<Slot>& slots, std::string_view name);
  void Rebuild();

  std::vector<std::unique_ptr<CommandSpec>> commands_;
  // The names clients use (the commands' own until a rename), and the
  // commands' own names once some rename happened.
  std::vector<Slot> slots_, own_slots_;
  bool renamed_ = false;
  std::vector<std::pair<std::unique_ptr<std::string>, const CommandSpec*>> client_names_;
  std::vector<bool> listed_;  // by command id, once renamed: some client name reaches it
  uint32_t next_id_ = 0;
};

// How every command is declared (commands/<family>_commands.cc): a family
// names its ACL category and its COMMAND DOCS group once, then adds each of
// its commands, in the table's order, as one CommandSpec in designated-
// initializer form (subcommands, numkeys_index, find_keys, all_shards_when
// and tips included):
//
//   CommandFamily f(t, kAclString, "string");
//   f.Add({.name = "get", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
//          .summary = "Returns the string value of a key.", .since = "1.0.0", .complexity = "O(1)",
//          .handler = GetCommand});
//
// Add fills in what the family gives, then registers the command
// (CommandTable::Register): the family's group where .group is empty; the
// family's category, joined to .acl (which names only categories beyond it,
// as RESTORE's @dangerous); key_step 1 where the command has keys and no
// key_step. A container (a command with subcommands) takes no category, as
// in Redis: its subcommands do, each filled in as a command is.
//
// A family whose commands span several files (hash + hash_expiry, zset +
// zset_op, stream + stream_group, stream_read and stream_info, geo +
// geo_search) has one Register<Part>Commands(CommandTable&) per file, each
// building its own CommandFamily with the same category and group, declared
// in the family's header and called by the family's Register<Family>Commands,
// which alone is in the one list, commands/all_commands.cc (AllCommands). (DUMP and RESTORE, generic
// commands as the key family's, are a family of their own, dump_commands.cc:
// their place in the table's order is not beside the key commands'.)
class CommandFamily {
 public:
  CommandFamily(CommandTable& table, uint32_t acl, std::string_view group) : table_(table), acl_(acl), group_(group) {}

  void Add(CommandSpec spec);

 private:
  // Fills in what the family gives a command (or a subcommand).
  void Complete(CommandSpec& spec) const;

  CommandTable& table_;
  uint32_t acl_;
  std::string_view group_;
};

// An argument as Redis's error texts print it (C's %s): up to its first NUL
// byte. For every error that quotes what the client sent.
inline std::string_view UpToNul(std::string_view arg) { return arg.substr(0, arg.find('\0')); }


// Names of flags and categories as COMMAND INFO prints them.
std::vector<std::string_view> FlagNames(uint32_t flags);
std::vector<std::string_view> AclCategoryNames(uint32_t categories);  // "@read" ...
// Every ACL category (its bit, its name without '@'), in Redis's order.
std::span<const std::pair<uint32_t, std::string_view>> AclCategoryTable();

}  // namespace peregrine
