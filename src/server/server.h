// The server: listeners, client connections, the dispatcher and the cron, on
// one event loop. The dispatcher looks a command up in the command table,
// enforces arity once, routes it to the shard that owns its keys and runs the
// handler; replies are flushed once per loop iteration.
//
// Threading: everything here runs on the loop's thread. Several threads, each
// with its own loop and shard, are issue #5.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "net/event_loop.h"
#include "protocol/reply.h"
#include "server/client.h"
#include "server/command.h"
#include "core/slot.h"
#include "server/config.h"
#include "server/shard.h"

namespace peregrine {

struct ServerStats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t rejected_connections = 0;
  uint64_t total_error_replies = 0;
  uint64_t total_reads_processed = 0;
  uint64_t total_writes_processed = 0;
  uint64_t client_query_buffer_limit_disconnections = 0;
  std::map<std::string, uint64_t> error_counts;  // by error code ("ERR", "WRONGTYPE")
};

class Server : public ErrorSink {
 public:
  Server(Config config, std::string config_file, std::string executable);
  ~Server() override;

  // Opens listeners and signal handling. Returns false with *err on failure
  // (e.g. "Address already in use").
  bool Start(std::string* err);
  // Runs until SHUTDOWN or SIGTERM/SIGINT. Returns the process exit code.
  int Run();

  // --- For command handlers (same thread) ---
  Config& config() { return config_; }
  const CommandTable& commands() const { return commands_; }
  size_t num_shards() const { return shards_.size(); }
  // The shard owning `key`: its Redis Cluster slot, in contiguous ranges of
  // slots per shard.
  size_t ShardIndexOf(std::string_view key) const {
    return shards_.size() == 1 ? 0 : static_cast<size_t>(SlotOf(key)) * shards_.size() / kNumSlots;
  }
  Shard& shard(size_t i) { return *shards_[i]; }
  const std::map<uint64_t, std::unique_ptr<Client>>& clients() const { return clients_; }
  ServerStats& stats() { return stats_; }
  const std::string& run_id() const { return run_id_; }
  const std::string& config_file() const { return config_file_; }
  const std::string& executable() const { return executable_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int tcp_port() const { return config_.port; }

  // Re-applies settings that CONFIG SET may have changed (log level, limits).
  void ApplyRuntimeConfig();
  // Stops the loop after the current batch; the process exits with code 0.
  void RequestShutdown();
  // Closes a client after the replies already queued for it are written.
  void CloseAfterReply(Client& c) { c.close_after_reply = true; }
  // CLIENT KILL: the client running the command is closed once its reply is
  // written; any other client is closed at once.
  void CloseClient(Client& c);
  // The CLIENT LIST / CLIENT INFO line of a client, with its trailing "\n".
  std::string ClientInfoLine(const Client& c, int64_t now_ms) const;
  // INFO text for the requested sections (none = the default sections).
  std::string Info(std::span<const std::string_view> sections, int64_t now_ms);
  // Resets the statistics CONFIG RESETSTAT resets.
  void ResetStats();
  // Bytes of every client's read and reply buffers (INFO, MEMORY STATS).
  uint64_t ClientBufferBytes() const;
  // used_memory as INFO reports it (the keyspace plus the clients' buffers);
  // raises used_memory_peak, which the cron also samples every tick.
  uint64_t UsedMemory();
  uint64_t used_memory_peak() const { return used_memory_peak_; }

  // What MEMORY STATS and INFO memory report, computed once (Redis's
  // getMemoryOverheadData): used memory split into the start-up base, the
  // clients' buffers, the tables' structure and the deadlines (overhead),
  // and the dataset; the allocator's and the process's view beside it.
  struct MemoryOverview {
    uint64_t peak = 0, total = 0, startup = 0, clients_normal = 0;
    struct DbOverhead {
      int db;
      uint64_t main, expires;
    };
    std::vector<DbOverhead> dbs;  // databases holding keys
    uint64_t overhead = 0, keys = 0, bytes_per_key = 0, dataset = 0;
    double dataset_percentage = 0, peak_percentage = 0;
    uint64_t allocator_allocated = 0, allocator_active = 0, allocator_resident = 0, rss = 0;
  };
  MemoryOverview Memory();
  // The ops/s of the last couple of seconds (INFO stats).
  uint64_t instantaneous_ops_per_sec() const;

  // ErrorSink: counts every error reply (INFO errorstats).
  void OnErrorReply(std::string_view msg) override;

  // --- For the I/O layer ---
  void OnClientEvent(Client& c, uint32_t events);
  void Accept(int listen_fd, bool is_unix);

 private:
  struct Listener;
  struct SignalWatcher;

  void ReadFromClient(Client& c);
  void ProcessInput(Client& c);
  // `cmd` is the top-level command already looked up for args[0] (nullptr if
  // unknown); `hint` its first key, encoded, when prefetched. The
  // command starts at CycleClock time `start` (the end of the previous one:
  // one clock read per command); returns the time it ended.
  uint64_t ExecuteCommand(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                          const CompactKey::Probe* hint, uint64_t start);
  void QueueWrite(Client& c);
  void FlushClient(Client& c);
  void FlushPendingWrites();
  void FreeClient(Client& c);
  // maxmemory: evicts by policy while the keyspace is over the limit. False
  // if it is over and nothing could be evicted.
  bool EnforceMaxmemory();
  void Cron();
  // One slice of active expiry (1 ms at most) over every shard; while keys
  // remain to be visited, slices continue every couple of milliseconds from
  // the loop instead of waiting for the next cron tick.
  void ActiveExpireSlice();
  void Cleanup();

  Config config_;
  std::string config_file_;
  std::string executable_;
  std::string run_id_;
  CommandTable commands_;
  EventLoop loop_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<SignalWatcher> signals_;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  std::vector<Client*> pending_writes_;

  // A pipeline batch: commands parsed ahead of execution so that their keys'
  // cache misses can be prefetched together (reused between batches).
  struct BatchedCommand {
    const CommandSpec* cmd;
    uint32_t first_arg;
    uint32_t nargs;
    size_t consumed;
    CompactKey::Probe key;  // the first key, encoded (key.bytes empty if none)
    uint32_t shard = 0;     // the shard owning that key
  };
  static constexpr size_t kMaxBatch = 32;
  std::vector<BatchedCommand> batch_;
  std::vector<std::string_view> batch_args_;
  std::vector<std::unique_ptr<Client>> to_free_;
  uint64_t next_client_id_ = 1;
  Client* current_client_ = nullptr;  // the client whose command is running
  ServerStats stats_;
  int64_t start_time_ms_ = 0;
  bool expire_pressure_ = false;
  int64_t last_expire_slice_us_ = 0;
  uint64_t used_memory_peak_ = 0;  // reset by CONFIG RESETSTAT, as Redis's stat_peak_memory
  uint64_t used_memory_startup_ = 0;  // used_memory when Start() finished
  size_t evict_shard_ = 0;            // the shard that evicted last

  // instantaneous_ops_per_sec: samples of total_commands_processed.
  static constexpr int kOpsSamples = 16;
  int64_t ops_sample_time_ms_ = 0;
  uint64_t ops_sample_count_ = 0;
  uint64_t ops_samples_[kOpsSamples] = {};
  int ops_sample_idx_ = 0;
};

}  // namespace peregrine
