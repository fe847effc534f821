// libFuzzer target for everything that reads RDB data from outside:
// RESTORE's payloads and the RDB file loaded at start-up (and by DEBUG
// RELOAD). The first input byte picks which: even, the rest is a DUMP
// payload's body (a type byte, then the value, as RESTORE hands it to
// LoadRdbObject after checking the footer); odd, the rest is a whole RDB
// file, loaded into an in-process server's shards (one worker, or two).
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

#include "persist/rdb_reader.h"
#include "persist/rdb_value.h"
#include "persist/rdb_writer.h"
#include "server/config.h"
#include "server/persistence.h"
#include "scripting/lua_engine.h"
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
    s = new Server(c, "", "peregrine-fuzz");
    std::string err;
    if (!s->InitWorkers(&err)) std::abort();
    s->ApplyRuntimeConfig();
  }
  return *s;
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
  const int fd = memfd_create("rdb", MFD_CLOEXEC);
  if (fd < 0 || write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
  bool found = false;
  std::string err;
  LoadRdbFile(server, server.worker(0).lua(), "/proc/self/fd/" + std::to_string(fd), /*merge=*/(mode & 4) != 0, &found, &err);
  close(fd);
  // Empty the shards (and the libraries) for the next input.
  for (size_t s = 0; s < server.num_shards(); s++)
    for (int d = 0; d < server.shard(s).num_dbs(); d++) server.shard(s).db(d).Clear();
  server.functions().Flush();
  return 0;
}
