// What INFO and MEMORY STATS read that takes gathering: the memory overview
// (used_memory as Redis means it, and its parts) and each command's latency
// histogram merged over the workers.
#include <unistd.h>

#include <fstream>

#include "core/memory.h"
#include "server/server.h"

namespace peregrine {
namespace {

uint64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

std::unique_ptr<LatencyHistogram> Server::MergedLatency(const CommandSpec& cmd) {
  std::unique_ptr<LatencyHistogram> h;
  for (auto& w : workers_) {
    const CommandStats& one = w->command_stats(cmd);
    if (one.latency == nullptr) continue;
    if (h == nullptr) h = std::make_unique<LatencyHistogram>();
    h->Merge(*one.latency);
  }
  return h;
}

Server::MemoryOverview Server::Memory() {
  MemoryOverview m;
  // Every worker is held: its clients' buffers are counted as they are now.
  // used_memory, as Redis means it: what the process has allocated. The
  // keyspace (core/memory.h), the rest of the C++ heap (every operator new,
  // counted the same way), the clients' buffers and the scripts'
  // interpreters (Lua allocates with realloc).
  uint64_t lua = 0;
  for (auto& w : workers_) {
    for (const auto& [id, c] : w->clients()) {
      const uint64_t bytes = c->in.capacity() + c->out.capacity();
      (c->replica ? m.clients_replicas : m.clients_normal) += bytes;
    }
    lua += w->LuaEvalBytes() + w->LuaFunctionBytes();
  }
  const ReplicationPrimary::BacklogInfo backlog = replication_->Backlog();
  m.replication_backlog = backlog.active ? std::max<uint64_t>(config_.repl_backlog_size, ReplBacklog::kMinSize) : 0;
  for (size_t i = 0; i < num_shards(); i++) m.aof_buffer += shard(i).aof().size();
  const uint64_t heap = static_cast<uint64_t>(std::max<int64_t>(TotalHeapBytes(), 0));
  m.total = static_cast<uint64_t>(std::max<int64_t>(TotalKeyspaceBytes(), 0)) + heap + m.clients_normal +
            m.clients_replicas + lua;
  NotePeak(m.total);
  m.peak = used_memory_peak();
  m.startup = used_memory_startup_;
  // The overhead: what the server had at start, the clients, the heap it
  // grew since (connections, scripts, replication's buffers) and the
  // interpreters; what is left is the dataset.
  m.overhead = m.startup + m.clients_normal + m.clients_replicas +
               (heap > heap_at_startup_ ? heap - heap_at_startup_ : 0) + lua;
  for (int d = 0; d < config_.databases; d++) {
    uint64_t main = 0, expires = 0, keys = 0;
    for (auto& w : workers_) {
      const Db& db = w->shard().db(d);
      if (db.size() == 0) continue;
      keys += db.size();
      main += db.StructureBytes();
      expires += db.expires_count() * sizeof(int64_t);  // what a deadline adds to an entry
    }
    if (keys == 0) continue;
    m.keys += keys;
    m.dbs.push_back({d, main, expires});
    m.overhead += main + expires;
  }
  m.dataset = m.total > m.overhead ? m.total - m.overhead : 0;
  const uint64_t net = m.total > m.startup ? m.total - m.startup : 1;
  m.bytes_per_key = m.keys ? net / m.keys : 0;
  m.dataset_percentage = 100.0 * static_cast<double>(m.dataset) / static_cast<double>(net);
  m.peak_percentage = m.peak ? 100.0 * static_cast<double>(m.total) / static_cast<double>(m.peak) : 0;
  // The allocator's view: allocated is what we count (usable sizes). Active
  // and resident are the process's RSS: mimalloc has no cheap count of its
  // active pages, and its commit figure (mi_process_info) counts whole
  // reserved arenas (32 MB for an empty server), which would say nothing.
  m.rss = RssBytes();
  m.allocator_allocated = m.total;
  m.allocator_active = m.allocator_resident = m.rss;
  return m;
}

}  // namespace peregrine
