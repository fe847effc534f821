// libFuzzer target for everything that reads persisted data from outside:
// RESTORE's payloads, the RDB file loaded at start-up (and by DEBUG
// RELOAD), and the append-only file. The first input byte picks which:
// even, the rest is a DUMP payload's body (a type byte, then the value, as
// RESTORE hands it to LoadRdbObject after checking the footer); odd, the
// rest is a whole RDB file, loaded into an in-process server's shards (one
// worker, or two); odd with bit 3 (8) set, the rest is an AOF directory's
// incremental file (bit 4, 16: its manifest instead), loaded by AofLoader
// as at start-up (its writes replayed, scripts skipped).
// A finding is a crash, a sanitizer report or a leak: whatever the bytes,
// the loaders must refuse or load them, and a loaded value must be sound
// (its container's own checks pass).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "persist/aof_format.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_value.h"
#include "persist/rdb_writer.h"
#include "server/aof.h"
#include "server/config.h"
#include "server/persistence.h"
#include "server/lua_engine.h"
#include "commands/all_commands.h"
#include "server/server.h"

namespace {

using namespace peregrine;

// Small limits, so that inputs of a few KB reach the large encodings.
ContainerLimits FuzzLimits() {
  ContainerLimits l;
  l.list = ListLimits{4, 1};
  l.set = SetLimits{8, 4, 16};
  l.hash = HashLimits{4, 16};
  l.zset = ZSetLimits{4, 16};
  return l;
}

void CheckSound(const Value& v) {
  bool ok = true;
  if (v.is_list()) ok = v.list().Validate();
  if (v.is_zset()) ok = v.zset().Validate();
  if (!ok) {
    std::fprintf(stderr, "a loaded value fails its container's checks\n");
    std::abort();
  }
  // What was loaded can be written again.
  RdbWriter w;
  w.Byte(RdbWriter::TypeOf(v));
  w.Object(v);
}

Server& FuzzServer(int threads) {
  static Server* servers[2] = {nullptr, nullptr};
  Server*& s = servers[threads - 1];
  if (s == nullptr) {
    Config c;
    c.port = 0;
    c.bind.clear();
    c.threads = threads;
    c.loglevel = "nothing";
    c.save_params.clear();
    c.list_max_listpack_size = 4;
    c.set_max_listpack_entries = 4;
    c.hash_max_listpack_entries = 4;
    c.zset_max_listpack_entries = 4;
    s = new Server(c, peregrine::AllCommands(), "", "peregrine-fuzz");
    std::string err;
    if (!s->InitWorkers(&err)) std::abort();
    s->ApplyRuntimeConfig();
  }
  return *s;
}

// Empties the shards (and the libraries) for the next input.
void Reset(Server& server) {
  for (size_t s = 0; s < server.num_shards(); s++)
    for (int d = 0; d < server.shard(s).num_dbs(); d++) server.shard(s).db(d).Clear();
  server.functions().Flush();
}

// An AOF directory of its own (absolute: the harness does not chdir).
const std::string& AofDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/peregrine-aof-fuzz-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    return std::string(tmpl);
  }();
  return dir;
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

void LoadAof(Server& server, const uint8_t* data, size_t size, bool manifest) {
  server.config().appenddirname = AofDir();
  const std::string incr = AofDir() + "/appendonly.aof.1.incr.aof";
  const std::string mf = AofDir() + "/appendonly.aof.manifest";
  if (manifest) {
    WriteFile(mf, data, size);
    WriteFile(incr, reinterpret_cast<const uint8_t*>("*1\r\n$4\r\nPING\r\n"), 14);
  } else {
    static const char kManifest[] = "file appendonly.aof.1.incr.aof seq 1 type i\n";
    WriteFile(mf, reinterpret_cast<const uint8_t*>(kManifest), sizeof(kManifest) - 1);
    WriteFile(incr, data, size);
  }
  AofLoader loader(server, server.worker(0), AofLoader::Options{.open_for_appending = false, .scripts = false});
  bool found = false;
  std::string err;
  if (loader.Open(&found, &err) && found)
    while (loader.Step(1000) == StartupLoader::Status::kMore) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t mode = data[0];
  data++;
  size--;
  if ((mode & 1) == 0) {
    RdbReader reader(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
    Value v;
    if (LoadRdbObject(reader, data[0], FuzzLimits(), 1'000'000'000'000, &v) == RdbLoadStatus::kOk) CheckSound(v);
    return 0;
  }
  Server& server = FuzzServer((mode & 2) ? 2 : 1);
  if (mode & 8) {
    LoadAof(server, data, size, (mode & 16) != 0);
    Reset(server);
    return 0;
  }
  const int fd = memfd_create("rdb", MFD_CLOEXEC);
  if (fd < 0 || write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
  bool found = false;
  std::string err;
  LoadRdbFile(server, server.worker(0).lua(), "/proc/self/fd/" + std::to_string(fd), /*merge=*/(mode & 4) != 0, &found, &err);
  close(fd);
  Reset(server);
  return 0;
}
