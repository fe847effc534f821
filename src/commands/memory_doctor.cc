// MEMORY DOCTOR: a plain-text look at the memory figures (MEMORY STATS's,
// the clients' buffers, the script cache), naming what looks wrong and what
// to do about it. Redis's checks, in our own words (as LATENCY DOCTOR's).
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/memory_doctor.h"
#include "server/client.h"

namespace peregrine {

namespace {

std::string Mb(uint64_t bytes) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.2f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

void MemoryDoctorCommand(CommandContext& ctx) {
  const ServerState::MemoryOverview m = ctx.server.Memory();
  std::string out;
  if (m.total < 5 * 1024 * 1024) {
    out = "This server uses " + Mb(m.total) +
          ", too little for its memory figures to mean much. Ask again once it holds some data.\n";
    ctx.reply.Verbatim(out);
    return;
  }
  std::vector<std::string> findings;
  if (m.peak > m.total + m.total / 2) {
    findings.push_back("* Peak: used_memory once reached " + Mb(m.peak) + ", more than 1.5 times the " +
                       Mb(m.total) + " used now. Memory freed since goes back to the system only as whole "
                       "pages empty, so RSS may stay closer to the peak than to the present. If the peak was "
                       "a one-off (a large load, a burst of big replies), nothing needs doing.");
  }
  // (The process itself, its code, stacks and interpreters, is some 15 MB
  // of RSS before any data: a small dataset's ratio says nothing.)
  if (m.rss > m.total + m.total * 2 / 5 && m.rss - m.total > 32 * 1024 * 1024) {
    char ratio[32];
    snprintf(ratio, sizeof(ratio), "%.2f", static_cast<double>(m.rss) / static_cast<double>(m.total));
    findings.push_back("* Fragmentation: the process's RSS is " + Mb(m.rss) + ", " + ratio +
                       " times used_memory. Freed memory is held in partly used pages. MEMORY PURGE asks the "
                       "allocator to return what it can; a workload that deletes many small keys and adds "
                       "larger ones keeps this ratio high.");
  }
  uint64_t normal = 0, replica = 0, n_normal = 0, n_replica = 0;
  for (const Client* c : ctx.server.AllClients()) {
    const uint64_t bytes = c->out.capacity() + c->out.referenced_bytes();
    if (c->replica) {
      replica += bytes;
      n_replica++;
    } else {
      normal += bytes;
      n_normal++;
    }
  }
  if (n_normal > 0 && normal / n_normal > 200 * 1024) {
    findings.push_back("* Client buffers: the " + std::to_string(n_normal) + " clients' output buffers average " +
                       Mb(normal / n_normal) + ". Clients that read their replies slowly, or commands with very "
                       "large replies (KEYS, HGETALL of big hashes, large MGETs), hold memory here; see CLIENT "
                       "LIST's omem and client-output-buffer-limit.");
  }
  if (n_replica > 0 && replica / n_replica > 10 * 1024 * 1024) {
    findings.push_back("* Replica buffers: the replicas' output buffers average " + Mb(replica / n_replica) +
                       ". A replica falling behind, or a network slower than the write rate, keeps the stream "
                       "waiting here; check the link and client-output-buffer-limit replica.");
  }
  if (const size_t scripts = ctx.server.scripts().size(); scripts > 1000) {
    findings.push_back("* Scripts: " + std::to_string(scripts) + " EVAL scripts are cached. An application that "
                       "builds a new script for each call (values in the source rather than in ARGV) fills the "
                       "cache; pass values as arguments, and SCRIPT FLUSH to empty it.");
  }
  if (findings.empty()) {
    out = "No memory problem stands out: used_memory is " + Mb(m.total) + " (peak " + Mb(m.peak) + "), RSS " +
          Mb(m.rss) + ", the dataset " + Mb(m.dataset) + " of it.\n";
  } else {
    out = "Memory report (used_memory " + Mb(m.total) + ", RSS " + Mb(m.rss) + "):\n\n";
    for (const std::string& f : findings) out += f + "\n\n";
  }
  ctx.reply.Verbatim(out);
}

}  // namespace peregrine
