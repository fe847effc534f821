// INFO: the server's state in Redis's section and field names, so that
// client libraries and tools that parse INFO (redis_version above all) work.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "core/glob.h"
#include "core/lazy_free.h"
#include "core/memory.h"
#include "server/server.h"

// mimalloc's process statistics, when the binary is linked with mimalloc
// (weak: the unit tests and the libc build do without).
extern "C" void mi_process_info(size_t* elapsed_msecs, size_t* user_msecs, size_t* system_msecs,
                                size_t* current_rss, size_t* peak_rss, size_t* current_commit,
                                size_t* peak_commit, size_t* page_faults) __attribute__((weak));

namespace peregrine {
namespace {

std::string HumanBytes(uint64_t n) {
  char buf[32];
  double d = static_cast<double>(n);
  if (n < 1024) snprintf(buf, sizeof(buf), "%lluB", static_cast<unsigned long long>(n));
  else if (n < 1024ULL * 1024) snprintf(buf, sizeof(buf), "%.2fK", d / 1024);
  else if (n < 1024ULL * 1024 * 1024) snprintf(buf, sizeof(buf), "%.2fM", d / (1024 * 1024));
  else if (n < (1ULL << 40)) snprintf(buf, sizeof(buf), "%.2fG", d / (1024.0 * 1024 * 1024));
  else if (n < (1ULL << 50)) snprintf(buf, sizeof(buf), "%.2fT", d / static_cast<double>(1ULL << 40));
  else if (n < (1ULL << 60)) snprintf(buf, sizeof(buf), "%.2fP", d / static_cast<double>(1ULL << 50));
  else snprintf(buf, sizeof(buf), "%lluB", static_cast<unsigned long long>(n));  // as Redis's bytesToHuman
  return buf;
}

uint64_t Micros(uint64_t ticks) { return static_cast<uint64_t>(CycleClock::ToMicros(ticks)); }

// "<sec>.<usec>" of a timeval, as INFO's used_cpu_* fields.
std::string Seconds(const timeval& t) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(t.tv_sec), static_cast<long>(t.tv_usec));
  return buf;
}

// The main thread's (worker 0's) user and system time, from its
// /proc/self/task/<tid>/stat (fields 14 and 15, in clock ticks).
bool MainThreadCpu(timeval* user, timeval* sys) {
  std::ifstream f("/proc/self/task/" + std::to_string(getpid()) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const size_t close = line.rfind(')');  // (the name may hold spaces)
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; i++) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  const long hz = sysconf(_SC_CLK_TCK);
  auto to = [hz](unsigned long long t, timeval* tv) {
    tv->tv_sec = static_cast<time_t>(t / static_cast<unsigned long long>(hz));
    tv->tv_usec = static_cast<suseconds_t>((t % static_cast<unsigned long long>(hz)) * 1000000ULL /
                                           static_cast<unsigned long long>(hz));
  };
  to(utime, user);
  to(stime, sys);
  return true;
}


// A name inside a field's name (an error code, a command's): '#', ':', CR
// and LF become '_', as Redis's getSafeInfoString, so parsers of INFO
// still split its lines.
std::string SafeInfoName(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '#' || c == ':' || c == '\n' || c == '\r') c = '_';
  return out;
}

void Field(std::string& out, const char* name, std::string_view value) {
  out += name;
  out += ':';
  out += value;
  out += "\r\n";
}
void Field(std::string& out, const char* name, uint64_t value) { Field(out, name, std::to_string(value)); }
void Field(std::string& out, const char* name, int64_t value) { Field(out, name, std::to_string(value)); }
void Field(std::string& out, const char* name, int value) { Field(out, name, std::to_string(value)); }

}  // namespace

std::string Server::Info(std::span<const std::string_view> requested, int64_t now_ms) {
  static const std::vector<std::string_view> kDefault = {
      "server", "clients", "memory", "persistence", "stats", "replication",
      "cpu",    "modules", "errorstats", "cluster", "keyspace", "peregrine"};
  std::set<std::string> want;
  bool everything = false;
  if (requested.empty()) {
    want.insert(kDefault.begin(), kDefault.end());
  }
  for (std::string_view r : requested) {
    std::string s(r);
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (s == "all" || s == "everything") {
      everything = true;
    } else if (s == "module_list") {
      want.insert("modules");  // (Redis's name for the section in its default list)
    } else if (s == "default") {
      want.insert(kDefault.begin(), kDefault.end());
    } else {
      want.insert(s);
    }
  }
  if (everything) {
    want.insert(kDefault.begin(), kDefault.end());
    want.insert("commandstats");
    want.insert("latencystats");
  }

  std::string out;
  auto section = [&](const char* name) {
    if (!want.count(name)) return false;
    if (!out.empty()) out += "\r\n";
    out += "# ";
    if (std::string_view(name) == "cpu") {
      out += "CPU";  // (Redis's header; the others are capitalized)
    } else {
      out += static_cast<char>(std::toupper(name[0]));
      out += name + 1;
    }
    out += "\r\n";
    return true;
  };

  if (section("server")) {
    utsname un;
    uname(&un);
    Field(out, "redis_version", kRedisCompatVersion);
    Field(out, "redis_git_sha1", "00000000");
    Field(out, "redis_git_dirty", 0);
    Field(out, "redis_build_id", "0");
    Field(out, "redis_mode", cluster() != nullptr ? "cluster" : "standalone");
    Field(out, "os", std::string(un.sysname) + " " + un.release + " " + un.machine);
    Field(out, "arch_bits", 64);
    Field(out, "monotonic_clock", "POSIX clock_gettime");
    Field(out, "multiplexing_api", "epoll");
    Field(out, "atomicvar_api", "c11-builtin");
    Field(out, "gcc_version", std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                                  std::to_string(__GNUC_PATCHLEVEL__));
    Field(out, "process_id", static_cast<int64_t>(getpid()));
    Field(out, "process_supervised", "no");
    Field(out, "run_id", run_id_);
    Field(out, "tcp_port", config_.port);
    Field(out, "server_time_usec", UnixTimeUs());
    int64_t uptime = (now_ms - start_time_ms_) / 1000;
    Field(out, "uptime_in_seconds", uptime);
    Field(out, "uptime_in_days", uptime / 86400);
    Field(out, "hz", config_.hz);
    Field(out, "configured_hz", config_.hz);
    Field(out, "lru_clock", static_cast<int64_t>((now_ms / 1000) & ((1 << 24) - 1)));
    Field(out, "executable", executable_);
    Field(out, "config_file", config_file_);
    Field(out, "io_threads_active", 0);
    // (While SHUTDOWN waits for lagging replicas: how long until it gives up.)
    if (shutdown_waiting.load())
      Field(out, "shutdown_in_milliseconds", std::max<int64_t>(shutdown_deadline_ms.load() - now_ms, 0));
    // The listeners, as Redis's getListensInfoString: tcp (0), unix (1), tls (2).
    auto listener = [&](int index, const char* type, const std::vector<std::string>& binds, int port) {
      std::string line = "name=" + std::string(type);
      for (const std::string& b : binds) line += ",bind=" + b;
      if (port != 0) line += ",port=" + std::to_string(port);
      Field(out, ("listener" + std::to_string(index)).c_str(), line);
    };
    if (config_.port != 0) listener(0, "tcp", config_.bind, config_.port);
    if (!config_.unixsocket.empty()) listener(1, "unix", {config_.unixsocket}, 0);
    if (config_.tls_port != 0) listener(2, "tls", config_.bind, config_.tls_port);
  }
  // The workers' counters, summed (every worker is held).
  ServerStats stats;
  for (auto& w : workers_) stats.Add(w->stats());
  if (section("clients")) {
    size_t max_in = 0, max_out = 0, connected = 0, pubsub_clients = 0, blocked = 0, timed = 0, blocking_keys = 0;
    size_t watching = 0, watched_keys = 0;
    for (auto& w : workers_) {
      connected += w->clients().size();
      blocked += w->waits().blocked_clients();
      timed += w->waits().timed_blocked_clients();
      blocking_keys += w->shard().blocking().keys();
      watched_keys += w->shard().watches().keys();
      for (auto& [id, c] : w->clients()) {
        if (c->watch != nullptr && !c->watch->keys.empty() && !c->watch->Dirty()) watching++;
        max_in = std::max(max_in, c->in.capacity());
        max_out = std::max(max_out, c->out.capacity() + c->out.referenced_bytes());
        if (c->subs != nullptr) pubsub_clients++;
        if (c->wait_acks) blocked++;  // (in WAIT: blocked too, as Redis counts it)
      }
    }
    Field(out, "connected_clients", static_cast<uint64_t>(connected));
    Field(out, "cluster_connections", 0);
    Field(out, "maxclients", static_cast<uint64_t>(config_.maxclients));
    // (The last 8 seconds' largest, as the crons saw them, or now's.)
    uint64_t recent_in = max_in, recent_out = max_out;
    for (auto& w : workers_) w->stats().peak_buffers.Max(now_ms / 1000, &recent_in, &recent_out);
    Field(out, "client_recent_max_input_buffer", recent_in);
    Field(out, "client_recent_max_output_buffer", recent_out);
    Field(out, "blocked_clients", static_cast<uint64_t>(blocked));
    Field(out, "tracking_clients", tracking_.clients().load(std::memory_order_relaxed));
    Field(out, "pubsub_clients", static_cast<uint64_t>(pubsub_clients));
    Field(out, "watching_clients", static_cast<uint64_t>(watching));
    Field(out, "clients_in_timeout_table", static_cast<uint64_t>(timed));
    Field(out, "total_watched_keys", static_cast<uint64_t>(watched_keys));
    Field(out, "total_blocking_keys", static_cast<uint64_t>(blocking_keys));
    Field(out, "total_blocking_keys_on_nokey", 0);
  }
  if (section("memory")) {
    // used_memory: what the process allocated (Memory). maxmemory bounds
    // the keyspace part (docs/storage.md).
    const MemoryOverview m = Memory();
    const uint64_t used = m.total, rss = m.rss;
    const char* allocator = mi_process_info != nullptr ? "mimalloc" : "libc";
    auto percent = [](double v) {
      char buf[32];
      snprintf(buf, sizeof(buf), "%.2f%%", v);
      return std::string(buf);
    };
    Field(out, "used_memory", used);
    Field(out, "used_memory_human", HumanBytes(used));
    Field(out, "used_memory_rss", rss);
    Field(out, "used_memory_rss_human", HumanBytes(rss));
    Field(out, "used_memory_peak", m.peak);
    Field(out, "used_memory_peak_human", HumanBytes(m.peak));
    Field(out, "used_memory_peak_perc", percent(m.peak_percentage));
    Field(out, "used_memory_overhead", m.overhead);
    Field(out, "used_memory_startup", m.startup);
    Field(out, "used_memory_dataset", m.dataset);
    Field(out, "used_memory_dataset_perc", percent(m.dataset_percentage));
    Field(out, "allocator_allocated", m.allocator_allocated);
    Field(out, "allocator_active", m.allocator_active);
    Field(out, "allocator_resident", m.allocator_resident);
    const uint64_t system =
        static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    Field(out, "total_system_memory", system);
    Field(out, "total_system_memory_human", HumanBytes(system));
    // Scripting: every worker's interpreters (one for scripts, one for
    // functions, each made at its first use) and the cached scripts' and
    // libraries' code.
    uint64_t lua = 0, lua_functions = 0;
    for (auto& w : workers_) {
      lua += w->LuaEvalBytes();
      lua_functions += w->LuaFunctionBytes();
    }
    const uint64_t scripts = scripts_.bytes();
    Field(out, "used_memory_lua", lua);
    Field(out, "used_memory_vm_eval", lua);
    Field(out, "used_memory_lua_human", HumanBytes(lua));
    Field(out, "used_memory_scripts_eval", scripts);
    Field(out, "number_of_cached_scripts", static_cast<uint64_t>(scripts_.size()));
    Field(out, "number_of_functions", static_cast<uint64_t>(functions_.functions()));
    Field(out, "number_of_libraries", static_cast<uint64_t>(functions_.libraries()));
    Field(out, "used_memory_vm_functions", lua_functions);
    Field(out, "used_memory_vm_total", lua + lua_functions);
    Field(out, "used_memory_vm_total_human", HumanBytes(lua + lua_functions));
    Field(out, "used_memory_functions", static_cast<uint64_t>(functions_.code_bytes()));
    Field(out, "used_memory_scripts", scripts + functions_.code_bytes());
    Field(out, "used_memory_scripts_human", HumanBytes(scripts + functions_.code_bytes()));
    Field(out, "maxmemory", config_.maxmemory);
    Field(out, "maxmemory_human", HumanBytes(config_.maxmemory));
    Field(out, "maxmemory_policy", MaxmemoryPolicyName(config_.maxmemory_policy));
    auto ratio = [](uint64_t a, uint64_t b) {
      char buf[32];
      snprintf(buf, sizeof(buf), "%.2f", b ? static_cast<double>(a) / static_cast<double>(b) : 0.0);
      return std::string(buf);
    };
    auto diff = [](uint64_t a, uint64_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); };
    // (The allocator's active and resident figures are the RSS: see Memory.)
    Field(out, "allocator_frag_ratio", ratio(m.allocator_active, m.allocator_allocated));
    Field(out, "allocator_frag_bytes", diff(m.allocator_active, m.allocator_allocated));
    Field(out, "allocator_rss_ratio", ratio(m.allocator_resident, m.allocator_active));
    Field(out, "allocator_rss_bytes", diff(m.allocator_resident, m.allocator_active));
    Field(out, "rss_overhead_ratio", ratio(rss, m.allocator_resident));
    Field(out, "rss_overhead_bytes", diff(rss, m.allocator_resident));
    Field(out, "mem_fragmentation_ratio", ratio(rss, used));
    Field(out, "mem_fragmentation_bytes", diff(rss, used));
    // What maxmemory leaves out (it bounds the keyspace and the heap): the
    // clients' buffers and the interpreters.
    const uint64_t counted = static_cast<uint64_t>(std::max<int64_t>(TotalCountedBytes(), 0));
    Field(out, "mem_not_counted_for_evict", used > counted ? used - counted : 0);
    // (The backlog is the replicas' shared buffer, as Redis 7's.)
    Field(out, "mem_replication_backlog", m.replication_backlog);
    Field(out, "mem_total_replication_buffers", m.replication_backlog);
    Field(out, "mem_clients_slaves", m.clients_replicas);
    Field(out, "mem_clients_normal", m.clients_normal);
    Field(out, "mem_cluster_links", 0);  // (the bus's buffers are its thread's, not counted)
    Field(out, "mem_aof_buffer", m.aof_buffer);
    Field(out, "mem_allocator", allocator);
    Field(out, "active_defrag_running", 0);
    Field(out, "lazyfree_pending_objects", lazy_free::PendingAllThreads());
    Field(out, "lazyfreed_objects", lazy_free::FreedAllThreads());
  }
  if (section("persistence")) {
    const PersistenceState& st = persistence_;
    const bool async = async_loading();
    const bool loading = st.loading.load(std::memory_order_acquire) && !async;
    Field(out, "loading", loading ? 1 : 0);
    Field(out, "async_loading", async ? 1 : 0);
    Field(out, "current_cow_peak", 0);
    Field(out, "current_cow_size", 0);
    Field(out, "current_cow_size_age", 0);
    // (Redis's fork percentage is its child's progress: the snapshot's here.)
    const uint64_t saved = bgsave_ ? bgsave_->keys_saved() : 0, to_save = bgsave_ ? bgsave_->keys_total() : 0;
    char fork_perc[32];
    snprintf(fork_perc, sizeof(fork_perc), "%.2f",
             to_save ? 100.0 * static_cast<double>(saved) / static_cast<double>(to_save) : 0.0);
    Field(out, "current_fork_perc", fork_perc);
    Field(out, "current_save_keys_processed", saved);
    Field(out, "current_save_keys_total", to_save);
    Field(out, "rdb_changes_since_last_save", TotalDirty(*this) - st.dirty_at_save.load(std::memory_order_relaxed));
    // (A disk-based sync sending its file has no BGSAVE running any more.)
    const bool rdb_job = bgsave_ && !bgsave_->aof_base() && !bgsave_->sending_file();
    const bool aof_job = bgsave_ && bgsave_->aof_base();
    Field(out, "rdb_bgsave_in_progress", rdb_job ? 1 : 0);
    Field(out, "rdb_last_save_time", st.lastsave_s.load(std::memory_order_relaxed));
    Field(out, "rdb_last_bgsave_status", st.last_save_ok.load(std::memory_order_relaxed) ? "ok" : "err");
    Field(out, "rdb_last_bgsave_time_sec", st.last_save_duration_s);
    Field(out, "rdb_current_bgsave_time_sec", rdb_job ? (now_ms - bgsave_->start_ms()) / 1000 : -1);
    Field(out, "rdb_saves", st.saves);
    Field(out, "rdb_last_cow_size", 0);
    Field(out, "rdb_last_load_keys_expired", st.last_load_keys_expired);
    Field(out, "rdb_last_load_keys_loaded", st.last_load_keys_loaded);
    const AofStats& as = aof_stats_;
    Field(out, "aof_enabled", aof_->active() ? 1 : 0);
    Field(out, "aof_rewrite_in_progress", aof_job ? 1 : 0);
    Field(out, "aof_rewrite_scheduled", as.rewrite_scheduled ? 1 : 0);
    Field(out, "aof_last_rewrite_time_sec", as.last_rewrite_time_s);
    Field(out, "aof_current_rewrite_time_sec", aof_job ? (now_ms - bgsave_->start_ms()) / 1000 : -1);
    Field(out, "aof_last_bgrewrite_status", as.last_rewrite_ok ? "ok" : "err");
    Field(out, "aof_rewrites", as.rewrites);
    Field(out, "aof_rewrites_consecutive_failures", as.consecutive_failures);
    Field(out, "aof_last_write_status", aof_->write_failed() ? "err" : "ok");
    Field(out, "aof_last_cow_size", 0);
    Field(out, "module_fork_in_progress", 0);
    Field(out, "module_fork_last_cow_size", 0);
    if (aof_->active()) {
      Field(out, "aof_current_size", aof_->current_size());
      Field(out, "aof_base_size", aof_->base_size());
      Field(out, "aof_pending_rewrite", as.rewrite_scheduled ? 1 : 0);
      uint64_t buffered = 0;
      for (size_t i = 0; i < num_shards(); i++) buffered += shard(i).aof().size();
      Field(out, "aof_buffer_length", buffered);
      Field(out, "aof_pending_bio_fsync", 0);
      Field(out, "aof_delayed_fsync", 0);
    }
    // (Redis lists the loading fields last; an async load's too.)
    if (loading || async) {
      const uint64_t total = st.loading_total_bytes, done = st.loading_loaded_bytes.load(std::memory_order_relaxed);
      const int64_t elapsed = now_ms / 1000 - st.loading_start_s;
      char perc[32];
      snprintf(perc, sizeof(perc), "%.2f", total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0);
      Field(out, "loading_start_time", st.loading_start_s);
      Field(out, "loading_total_bytes", total);
      Field(out, "loading_rdb_used_mem", 0);
      Field(out, "loading_loaded_bytes", done);
      Field(out, "loading_loaded_perc", perc);
      // Redis's estimate: elapsed * remaining / (loaded + 1), 1 in the first second.
      Field(out, "loading_eta_seconds",
            elapsed <= 0 ? int64_t{1}
                         : static_cast<int64_t>(static_cast<uint64_t>(elapsed) * (total > done ? total - done : 0) /
                                                (done + 1)));
    }
  }
  // Loop and command time summed over the workers (the stats and debug
  // sections).
  EventLoop::Stats loops;
  for (auto& w : workers_) {
    const EventLoop::Stats& l = w->loop().stats();
    loops.cycles += l.cycles;
    loops.ticks += l.ticks;
    loops.cron_ticks += l.cron_ticks;
    loops.max_ticks = std::max(loops.max_ticks, l.max_ticks);
    loops.max_progress = std::max(loops.max_progress, l.max_progress);
  }
  auto rate = [&](Rates::Metric m) {
    uint64_t sum = 0;
    for (auto& w : workers_) sum += w->rates().PerSecond(m);
    return sum;
  };
  auto kbps = [&](Rates::Metric m) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(rate(m)) / 1024);
    return std::string(buf);
  };
  if (section("stats")) {
    uint64_t hits = 0, misses = 0, expired = 0, expired_fields = 0, evicted = 0;
    for (auto& w : workers_) {
      hits += w->shard().stats().keyspace_hits;
      misses += w->shard().stats().keyspace_misses;
      expired += w->shard().expired_keys();
      expired_fields += w->shard().expired_fields();
      evicted += w->shard().evicted_keys();
    }
    const uint64_t repl_in = repl_stats_.net_input.load(std::memory_order_relaxed);
    Field(out, "total_connections_received", stats.total_connections_received);
    Field(out, "total_commands_processed", stats.total_commands_processed);
    Field(out, "instantaneous_ops_per_sec", rate(Rates::kOps));
    // (As Redis's: the totals with replication's bytes, which the repl_
    // fields single out.)
    Field(out, "total_net_input_bytes", stats.total_net_input_bytes + repl_in);
    Field(out, "total_net_output_bytes", stats.total_net_output_bytes);
    Field(out, "total_net_repl_input_bytes", repl_in);
    Field(out, "total_net_repl_output_bytes", stats.total_net_repl_output_bytes);
    Field(out, "instantaneous_input_kbps", kbps(Rates::kNetInput));
    Field(out, "instantaneous_output_kbps", kbps(Rates::kNetOutput));
    Field(out, "instantaneous_input_repl_kbps", kbps(Rates::kReplInput));
    Field(out, "instantaneous_output_repl_kbps", kbps(Rates::kReplOutput));
    Field(out, "rejected_connections", stats.rejected_connections);
    Field(out, "sync_full", repl_stats_.full.load(std::memory_order_relaxed));
    Field(out, "sync_partial_ok", repl_stats_.partial_ok.load(std::memory_order_relaxed));
    Field(out, "sync_partial_err", repl_stats_.partial_err.load(std::memory_order_relaxed));
    Field(out, "expired_keys", expired);
    Field(out, "expired_subkeys", expired_fields);
    char stale[32];
    snprintf(stale, sizeof(stale), "%.2f", stats.expired_stale_perc / static_cast<double>(workers_.size()));
    Field(out, "expired_stale_perc", stale);
    Field(out, "expired_time_cap_reached_count", stats.expired_time_cap_reached_count);
    Field(out, "expire_cycle_cpu_milliseconds", stats.expire_cycle_us / 1000);
    Field(out, "evicted_keys", evicted);
    Field(out, "evicted_clients", stats.evicted_clients);
    const int64_t mono = MonotonicMs();
    const int64_t exceeded_now = eviction_exceeded_since_ms_ != 0 ? mono - eviction_exceeded_since_ms_ : 0;
    Field(out, "total_eviction_exceeded_time", eviction_exceeded_ms_ + exceeded_now);
    Field(out, "current_eviction_exceeded_time", exceeded_now);
    Field(out, "keyspace_hits", hits);
    Field(out, "keyspace_misses", misses);
    // Distinct channels and patterns with subscribers, over every worker.
    std::set<std::string, std::less<>> channels, patterns, shard_channels;
    for (auto& w : workers_) {
      w->pubsub().ActiveChannels(std::nullopt, &channels);
      w->pubsub().ActivePatterns(&patterns);
      w->pubsub().ActiveChannels(std::nullopt, &shard_channels, true);
    }
    Field(out, "pubsub_channels", static_cast<uint64_t>(channels.size()));
    Field(out, "pubsub_patterns", static_cast<uint64_t>(patterns.size()));
    Field(out, "pubsubshard_channels", static_cast<uint64_t>(shard_channels.size()));
    // (Snapshots and AOF rewrites do not fork, a replica's writable keys do
    // not expire on their own, nothing defrags: docs/observability.md.)
    Field(out, "latest_fork_usec", 0);
    Field(out, "total_forks", 0);
    Field(out, "migrate_cached_sockets", migrate_cached_sockets.load(std::memory_order_relaxed));
    Field(out, "slave_expires_tracked_keys", 0);
    Field(out, "active_defrag_hits", 0);
    Field(out, "active_defrag_misses", 0);
    Field(out, "active_defrag_key_hits", 0);
    Field(out, "active_defrag_key_misses", 0);
    Field(out, "total_active_defrag_time", 0);
    Field(out, "current_active_defrag_time", 0);
    Field(out, "tracking_total_keys", tracking_.keys().load(std::memory_order_relaxed));
    Field(out, "tracking_total_items", tracking_.items().load(std::memory_order_relaxed));
    Field(out, "tracking_total_prefixes", tracking_.prefix_count());
    Field(out, "unexpected_error_replies", repl_stats_.unexpected_errors.load(std::memory_order_relaxed));
    Field(out, "total_error_replies", stats.total_error_replies);
    Field(out, "dump_payload_sanitizations", 0);  // (no sanitize-dump-payload: RESTORE checks every payload)
    Field(out, "total_reads_processed", stats.total_reads_processed);
    Field(out, "total_writes_processed", stats.total_writes_processed);
    Field(out, "io_threaded_reads_processed", 0);  // (no I/O threads: each worker does its own)
    Field(out, "io_threaded_writes_processed", 0);
    Field(out, "client_query_buffer_limit_disconnections", stats.client_query_buffer_limit_disconnections);
    Field(out, "client_output_buffer_limit_disconnections", stats.client_output_buffer_limit_disconnections);
    Field(out, "reply_buffer_shrinks", stats.reply_buffer_shrinks);
    Field(out, "reply_buffer_expands", 0);  // (buffers grow as replies need, not in the cron)
    Field(out, "eventloop_cycles", loops.cycles);
    Field(out, "eventloop_duration_sum", Micros(loops.ticks));
    Field(out, "eventloop_duration_cmd_sum", Micros(stats.command_ticks));
    const uint64_t cycles_per_sec = rate(Rates::kLoopCycles);
    Field(out, "instantaneous_eventloop_cycles_per_sec", cycles_per_sec);
    Field(out, "instantaneous_eventloop_duration_usec",
          cycles_per_sec ? Micros(rate(Rates::kLoopTicks)) / cycles_per_sec : uint64_t{0});
    Field(out, "acl_access_denied_auth", acl_->denied(AclResult::kDeniedAuth));
    Field(out, "acl_access_denied_cmd", acl_->denied(AclResult::kDeniedCmd));
    Field(out, "acl_access_denied_key", acl_->denied(AclResult::kDeniedKey));
    Field(out, "acl_access_denied_channel", acl_->denied(AclResult::kDeniedChannel));
  }
  if (section("replication")) {
    // A primary (docs/replication.md): its replicas, the stream's offset
    // and IDs, the backlog (made when the first replica attaches).
    std::vector<ReplicationPrimary::ReplicaInfo> replicas = replication_->Replicas();
    const uint64_t offset = replication_->offset();
    if (link_ != nullptr) {
      // A replica (Redis's fields, in its order).
      const ReplicaLink::Status st = link_->status();
      Field(out, "role", "slave");
      Field(out, "master_host", link_->host());
      Field(out, "master_port", static_cast<int64_t>(link_->port()));
      Field(out, "master_link_status", st.up ? "up" : "down");
      Field(out, "master_last_io_seconds_ago", st.up ? (now_ms - st.last_io_ms) / 1000 : int64_t{-1});
      Field(out, "master_sync_in_progress", st.syncing ? 1 : 0);
      Field(out, "slave_read_repl_offset", st.read_offset);
      Field(out, "slave_repl_offset", offset);
      if (st.syncing) {
        Field(out, "master_sync_total_bytes", st.sync_total);
        Field(out, "master_sync_read_bytes", st.sync_read);
        Field(out, "master_sync_left_bytes", st.sync_total >= 0 ? st.sync_total - st.sync_read : int64_t{-1});
        char perc[32];
        std::snprintf(perc, sizeof(perc), "%.2f",
                      st.sync_total > 0 ? 100.0 * static_cast<double>(st.sync_read) / static_cast<double>(st.sync_total)
                                        : 0.0);
        Field(out, "master_sync_perc", perc);
        Field(out, "master_sync_last_io_seconds_ago", (now_ms - st.last_io_ms) / 1000);
      }
      // (-1: never up since REPLICAOF, as Redis.)
      if (!st.up)
        Field(out, "master_link_down_since_seconds", st.down_since_ms != 0 ? (now_ms - st.down_since_ms) / 1000 : int64_t{-1});
      Field(out, "slave_priority", static_cast<int64_t>(config_.replica_priority));
      Field(out, "slave_read_only", config_.replica_read_only ? 1 : 0);
      Field(out, "replica_announced", config_.replica_announced ? 1 : 0);
    } else {
      Field(out, "role", "master");
    }
    Field(out, "connected_slaves", static_cast<uint64_t>(replicas.size()));
    // (While min-replicas-to-write is on: how many count as good.)
    if (config_.min_replicas_to_write > 0 && config_.min_replicas_max_lag > 0)
      Field(out, "min_slaves_good_slaves", static_cast<int64_t>(replication_->good_replicas()));
    for (size_t i = 0; i < replicas.size(); i++) {
      const ReplicationPrimary::ReplicaInfo& r = replicas[i];
      // (A diskless transfer is Redis's wait_bgsave too; send_bulk is a
      // file's being sent.)
      const bool bulk = r.state == ReplicationPrimary::State::kSendingRdb && bgsave_ != nullptr &&
                        bgsave_->for_replicas() && bgsave_->sending_file();
      const char* state = r.state == ReplicationPrimary::State::kOnline ? "online"
                          : bulk                                      ? "send_bulk"
                                                                      : "wait_bgsave";
      const std::string name = "slave" + std::to_string(i);
      Field(out, name.c_str(),
            "ip=" + r.ip + ",port=" + std::to_string(r.listening_port) + ",state=" + state +
                ",offset=" + std::to_string(r.ack_offset) +
                ",lag=" + std::to_string(std::max<int64_t>(0, (now_ms - r.last_ack_ms) / 1000)));
    }
    Field(out, "master_failover_state", FailoverStateName());
    Field(out, "master_replid", repl_ids_.replid);
    Field(out, "master_replid2", repl_ids_.replid2);
    Field(out, "master_repl_offset", offset);
    Field(out, "second_repl_offset", repl_ids_.second_offset);
    const ReplicationPrimary::BacklogInfo backlog = replication_->Backlog();
    Field(out, "repl_backlog_active", backlog.active ? 1 : 0);
    Field(out, "repl_backlog_size", std::max<uint64_t>(config_.repl_backlog_size, ReplBacklog::kMinSize));
    Field(out, "repl_backlog_first_byte_offset", backlog.first);
    Field(out, "repl_backlog_histlen", backlog.histlen);
  }
  if (section("cpu")) {
    rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    Field(out, "used_cpu_sys", Seconds(self.ru_stime));
    Field(out, "used_cpu_user", Seconds(self.ru_utime));
    Field(out, "used_cpu_sys_children", Seconds(children.ru_stime));
    Field(out, "used_cpu_user_children", Seconds(children.ru_utime));
    timeval main_user{}, main_sys{};
    MainThreadCpu(&main_user, &main_sys);
    Field(out, "used_cpu_sys_main_thread", Seconds(main_sys));
    Field(out, "used_cpu_user_main_thread", Seconds(main_user));
  }
  section("modules");
  if (section("commandstats")) {
    auto emit = [&](const CommandSpec& cmd) {
      CommandStats st;
      for (auto& w : workers_) {
        const CommandStats& one = w->command_stats(cmd);
        st.calls += one.calls;
        st.ticks += one.ticks;
        st.rejected_calls += one.rejected_calls;
        st.failed_calls += one.failed_calls;
      }
      if (st.calls == 0 && st.rejected_calls == 0 && st.failed_calls == 0) return;
      const double usec = CycleClock::ToMicros(st.ticks);
      char buf[256];
      snprintf(buf, sizeof(buf),
               "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
               SafeInfoName(cmd.fullname).c_str(), static_cast<unsigned long long>(st.calls),
               static_cast<unsigned long long>(usec),
               st.calls ? usec / static_cast<double>(st.calls) : 0.0,
               static_cast<unsigned long long>(st.rejected_calls),
               static_cast<unsigned long long>(st.failed_calls));
      out += buf;
    };
    for (auto& cmd : commands_.all()) {
      emit(*cmd);
      for (auto& sub : cmd->subcommands) emit(sub);
    }
  }
  if (section("errorstats")) {
    for (auto& [code, count] : stats.error_counts)
      Field(out, ("errorstat_" + SafeInfoName(code)).c_str(), "count=" + std::to_string(count));
  }
  if (section("latencystats") && config_.latency_tracking) {
    // Each command's percentiles (latency-tracking-info-percentiles), in
    // microseconds, from every worker's histogram merged.
    std::vector<std::string> names;
    for (double p : config_.latency_tracking_info_percentiles) names.push_back(PercentileName(p));
    auto emit = [&](const CommandSpec& cmd) {
      std::unique_ptr<LatencyHistogram> h = MergedLatency(cmd);
      if (h == nullptr) return;
      out += "latency_percentiles_usec_" + SafeInfoName(cmd.fullname) + ":";
      for (size_t j = 0; j < names.size(); j++) {
        char buf[64];
        snprintf(buf, sizeof(buf), "p%s=%.3f", names[j].c_str(),
                 static_cast<double>(h->ValueAtPercentile(config_.latency_tracking_info_percentiles[j])) / 1000.0);
        if (j > 0) out += ',';
        out += buf;
      }
      out += "\r\n";
    };
    for (auto& cmd : commands_.all()) {
      emit(*cmd);
      for (auto& sub : cmd->subcommands) emit(sub);
    }
  }
  if (section("cluster")) Field(out, "cluster_enabled", cluster() != nullptr ? 1 : 0);
  if (section("keyspace")) {
    int ndb = config_.databases;
    for (int i = 0; i < ndb; i++) {
      uint64_t keys = 0, expires = 0;
      // avg_ttl over the shards that have an estimate, weighted by their
      // deadlines: each worker's active expiry samples on its own schedule,
      // and a shard not sampled yet (estimate 0) says nothing about the TTLs.
      double ttl_weighted = 0, weight = 0;
      for (auto& w : workers_) {
        const Db& db = w->shard().db(i);
        keys += db.size();
        expires += db.expires_count();
        if (db.avg_ttl() > 0 && db.expires_count() > 0) {
          ttl_weighted += static_cast<double>(db.avg_ttl()) * static_cast<double>(db.expires_count());
          weight += static_cast<double>(db.expires_count());
        }
      }
      if (keys == 0) continue;
      const int64_t avg_ttl = weight > 0 ? static_cast<int64_t>(ttl_weighted / weight) : 0;
      Field(out, ("db" + std::to_string(i)).c_str(),
            "keys=" + std::to_string(keys) + ",expires=" + std::to_string(expires) +
                ",avg_ttl=" + std::to_string(avg_ttl));
    }
  }
  // Peregrine's own (docs/observability.md): its version and workers, the
  // cross-worker traffic, and each worker's load.
  if (section("peregrine")) {
    Field(out, "peregrine_version", PEREGRINE_VERSION);
    Field(out, "threads", static_cast<uint64_t>(workers_.size()));
    Field(out, "cross_shard_batches", stats.cross_shard_batches);
    Field(out, "cross_shard_read_groups", stats.cross_shard_read_groups);
    Field(out, "cross_shard_read_group_reruns", stats.cross_shard_read_group_reruns);
    Field(out, "cross_shard_write_groups", stats.cross_shard_write_groups);
    uint64_t wakeups = 0;
    for (auto& w : workers_) wakeups += w->waker().signals();
    Field(out, "worker_wakeups", wakeups);
    Field(out, "worker_spins", stats.worker_spins);
    Field(out, "worker_spin_hits", stats.worker_spin_hits);
    for (size_t i = 0; i < workers_.size(); i++) {
      Worker& w = *workers_[i];
      uint64_t keys = 0;
      for (int d = 0; d < w.shard().num_dbs(); d++) keys += w.shard().db(d).size();
      Field(out, ("worker" + std::to_string(i)).c_str(),
            "clients=" + std::to_string(w.clients().size()) + ",keys=" + std::to_string(keys) +
                ",commands=" + std::to_string(w.stats().total_commands_processed) +
                ",ops_per_sec=" + std::to_string(w.rates().PerSecond(Rates::kOps)) +
                ",loop_cycles=" + std::to_string(w.loop().stats().cycles) +
                ",loop_usec=" + std::to_string(Micros(w.loop().stats().ticks)));
    }
  }
  // Only when asked for by name, as Redis's.
  if (section("debug")) {
    uint64_t aof = 0;
    for (auto& w : workers_) aof += w->aof_write_ticks();
    Field(out, "eventloop_duration_aof_sum", Micros(aof));
    Field(out, "eventloop_duration_cron_sum", Micros(loops.cron_ticks));
    Field(out, "eventloop_duration_max", Micros(loops.max_ticks));
    Field(out, "eventloop_cmd_per_cycle_max", loops.max_progress);
  }
  return out;
}

}  // namespace peregrine
