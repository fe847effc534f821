// peregrine: the server binary. Reads the configuration as redis-server does
// (`peregrine [config-file] [--directive value ...]`), then runs the server.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "net/event_loop.h"
#include "persist/aof_check.h"
#include "persist/rdb_check.h"
#include "server/config.h"
#include "server/config_options.h"
#include "server/log.h"
#include "server/persistence.h"
#include "cluster/cluster_bus.h"
#include "commands/all_commands.h"
#include "server/server.h"
#include "server/supervise.h"

#ifdef PEREGRINE_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

peregrine::Server* g_server = nullptr;

#ifndef PEREGRINE_MALLOC
#define PEREGRINE_MALLOC "libc"
#endif

void PrintVersion() {
  std::printf("Peregrine server v=%s redis_compat=7.2.4 malloc=%s bits=64\n", PEREGRINE_VERSION, PEREGRINE_MALLOC);
}

void PrintUsage() {
  std::printf(
      "Usage: ./peregrine [/path/to/peregrine.conf] [options] [-]\n"
      "       ./peregrine - (read config from stdin)\n"
      "       ./peregrine -v or --version\n"
      "       ./peregrine -h or --help\n"
      "       ./peregrine --check-rdb <file.rdb>\n"
      "       ./peregrine --check-aof [--fix] <file.manifest|file.aof>\n"
      "\n"
      "Options are redis.conf directives with two dashes, e.g.:\n"
      "       ./peregrine --port 7777\n"
      "       ./peregrine /etc/peregrine/6379.conf --loglevel verbose\n"
      "       ./peregrine --bind 127.0.0.1 ::1 --unixsocket /tmp/peregrine.sock\n"
      "\n"
      "Supported directives: port, bind, unixsocket, unixsocketperm, databases, maxclients,\n"
      "threads, timeout, tcp-keepalive, tcp-backlog, loglevel, logfile, daemonize, pidfile,\n"
      "proto-max-bulk-len, client-query-buffer-limit, hz, save, dir, dbfilename, rdbcompression,\n"
      "rdbchecksum, appendonly (no only), and the rest of redis.conf's that docs/commands.md lists.\n"
      "With no arguments the server listens on 127.0.0.1:6379 (and ::1 when available).\n");
}

void FatalConfigError(const peregrine::Directive& d, const std::string& why) {
  std::fprintf(stderr,
               "\n*** FATAL CONFIG FILE ERROR (Peregrine %s) ***\n"
               "Reading the configuration file, at %s\n"
               ">>> '%s'\n"
               "%s\n",
               PEREGRINE_VERSION, d.origin.c_str(), d.text.c_str(), why.c_str());
  std::exit(1);
}

void Daemonize() {
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid > 0) std::exit(0);
  setsid();
  int fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO) close(fd);
  }
}

// `peregrine --check-rdb FILE` and `peregrine --check-aof [--fix] FILE`
// (also as peregrine-check-rdb / peregrine-check-aof, links to the binary,
// as redis-server is redis-check-rdb): *handled false when the arguments
// ask for neither.
int CheckTool(const std::vector<std::string>& args, bool* handled) {
  *handled = true;
  if (!args.empty() && args[0] == "--check-rdb") {
    if (args.size() != 2) {
      std::fprintf(stderr, "Usage: peregrine --check-rdb <rdb-file-name>\n");
      return 1;
    }
    return peregrine::CheckRdbMain(args[1], peregrine::UnixTimeMs());
  }
  if (!args.empty() && args[0] == "--check-aof") {
    peregrine::AofCheckOptions options;
    size_t i = 1;
    if (i < args.size() && args[i] == "--fix") {
      options.fix = true;
      i++;
    }
    if (i + 1 != args.size()) {
      std::fprintf(stderr, "Usage: peregrine --check-aof [--fix] <file.manifest|file.aof>\n");
      return 1;
    }
    return peregrine::CheckAofMain(args[i], options, peregrine::UnixTimeMs());
  }
  *handled = false;
  return 0;
}

}  // namespace

// Allocator settings that differ from its defaults (docs/storage.md).
void TuneAllocator() {
#ifdef PEREGRINE_WITH_MIMALLOC
  // mimalloc 2.0 gives the pages of freed spans back to the OS 25 ms after
  // they are freed; large values overwritten faster than that (a stream of
  // SETs of 1 MB values) then fault in and zero fresh pages for every value:
  // a third of the server's time at pipeline 8. One second keeps them for
  // reuse while the churn lasts (jemalloc, Redis's allocator, keeps freed
  // pages for 10 s), and still returns memory soon after it stops. An
  // environment variable (MIMALLOC_DECOMMIT_DELAY) still overrides it.
  if (std::getenv("MIMALLOC_DECOMMIT_DELAY") == nullptr) mi_option_set(mi_option_decommit_delay, 1000);
#endif
}

int main(int argc, char** argv) {
  using namespace peregrine;
  TuneAllocator();
  // SORT ... ALPHA compares with strcoll in the environment's collation,
  // as Redis (which sets LC_COLLATE from the environment at start).
  std::setlocale(LC_COLLATE, "");
  std::vector<char*> args(argv + 1, argv + argc);
  {
    std::vector<std::string> tool(args.begin(), args.end());
    const std::string name = argc > 0 ? argv[0] : "";
    const std::string base = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    if (base == "peregrine-check-rdb") tool.insert(tool.begin(), "--check-rdb");
    if (base == "peregrine-check-aof") tool.insert(tool.begin(), "--check-aof");
    bool handled;
    const int rc = CheckTool(tool, &handled);
    if (handled) return rc;
  }
  if (!args.empty()) {
    std::string first = args[0];
    if (first == "-v" || first == "--version") {
      PrintVersion();
      return 0;
    }
    if (first == "-h" || first == "--help") {
      PrintUsage();
      return 0;
    }
  }

  std::vector<Directive> directives;
  std::string config_file;
  size_t next = 0;
  if (!args.empty() && std::strncmp(args[0], "--", 2) != 0) {
    config_file = args[0];
    next = 1;
    std::string text;
    if (config_file == "-") {
      std::stringstream in;
      in << std::cin.rdbuf();
      text = in.str();
    } else {
      std::string err;
      if (!ReadConfigFile(config_file, &text, &err)) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
      }
      char* abs = realpath(config_file.c_str(), nullptr);
      if (abs != nullptr) {
        config_file = abs;
        std::free(abs);
      }
    }
    std::string err;
    if (!ParseConfigText(text, &directives, &err)) {
      std::fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Peregrine %s) ***\n%s\n", PEREGRINE_VERSION,
                   err.c_str());
      return 1;
    }
    if (config_file == "-") config_file.clear();
  }
  // A trailing "-" after options also means "read stdin", as redis-server.
  ParseConfigArgs(std::span<char* const>(args.data() + next, args.size() - next), &directives);

  {
    std::string err;
    bool unreadable = false;
    if (!ExpandIncludes(&directives, &err, &unreadable)) {
      // (A file that cannot be read is told alone, as Redis tells it.)
      if (unreadable)
        std::fprintf(stderr, "%s\n", err.c_str());
      else
        std::fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Peregrine %s) ***\n%s\n", PEREGRINE_VERSION,
                     err.c_str());
      return 1;
    }
  }
  // rename-command (redis.conf's, at start only) changes the names clients
  // use, in the file's order; loadmodule has nothing to load here.
  CommandTable commands = AllCommands();
  std::vector<Directive> settings;
  for (Directive& d : directives) {
    const std::string name = config_options::Lower(d.name);
    if (name == "rename-command") {
      std::string err;
      if (d.args.size() != 2) FatalConfigError(d, "Bad directive or wrong number of arguments");
      if (!commands.Rename(d.args[0], d.args[1], &err)) FatalConfigError(d, err);
    } else if (name == "loadmodule") {
      FatalConfigError(d, "Peregrine has no module support (docs/commands.md): no module can be loaded");
    } else {
      settings.push_back(std::move(d));
    }
  }
  directives = std::move(settings);
  Config config;
  std::string why;
  const Directive* failed = nullptr;
  if (!ApplyDirectives(&config, directives, &why, &failed)) FatalConfigError(*failed, why);

  // Under a supervisor the server stays in the foreground, as Redis's.
  const bool supervised = supervise::Start(config.supervised) != Config::Supervised::kNo;
  if (config.daemonize && !supervised) {
    if (config.pidfile.empty()) config.pidfile = "/var/run/peregrine.pid";
    Daemonize();
  }
  std::string err;
  if (!SetLogFile(config.logfile, &err)) {
    std::fprintf(stderr, "Can't open the log file: %s\n", err.c_str());
    return 1;
  }
  if (!config.pidfile.empty()) {
    std::ofstream pid(config.pidfile);
    if (pid) pid << getpid() << "\n";
    else LOG_WARNING("Failed to write PID file: %s", std::strerror(errno));
  }

  std::string executable;
  if (char* exe = realpath("/proc/self/exe", nullptr)) {
    executable = exe;
    std::free(exe);
  }
  // The server is deliberately never destroyed: as Redis does, the process
  // exits without freeing the dataset key by key, which with millions of keys
  // would only delay the exit. The global keeps it reachable for LeakSanitizer.
  g_server = new Server(config, std::move(commands), config_file, executable);
  Server& server = *g_server;
  SetLogLevel(LogLevel::kNotice);
  server.ApplyRuntimeConfig();
  LOG_NOTICE("Peregrine %s starting, pid=%d", PEREGRINE_VERSION, static_cast<int>(getpid()));
  supervise::LogStart();
  {
    // (A redis.conf's directives that mean nothing here: each named once.)
    std::set<std::string> inert;
    for (const Directive& d : directives)
      if (config_options::IsInert(d.name)) inert.insert(config_options::Lower(d.name));
    std::string names;
    for (const std::string& n : inert) names += (names.empty() ? "" : ", ") + n;
    if (!names.empty())
      LOG_NOTICE("Redis directives accepted, with no effect in Peregrine (docs/shipping.md): %s", names.c_str());
  }
  // Redis Cluster: nodes.conf is read (or made) in `dir`, before anything
  // listens; a bad one stops the start, as in Redis.
  if (config.cluster.enabled) {
    auto bus = std::make_unique<peregrine::cluster::ClusterBus>(config.cluster, config.port, config.tls_port,
                                                                 config.bind);
    if (!bus->Load(&err)) {
      LOG_WARNING("%s", err.c_str());
      std::fprintf(stderr, "%s\n", err.c_str());
      return 1;
    }
    bus->AttachServer(server);
    server.SetCluster(std::move(bus));
  }
  if (!server.Start(&err)) {
    LOG_WARNING("%s", err.c_str());
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  // With appendonly yes the append-only file is the data (as Redis, the
  // RDB file is not read then): loaded before the workers start, then
  // opened for appending.
  if (server.config().appendonly) {
    auto aof = std::make_unique<AofLoader>(server, server.worker(0));
    bool found = false;
    if (!aof->Open(&found, &err) || (!found && !OpenForAppending(server, &err))) {
      LOG_WARNING("%s", err.c_str());
      std::fprintf(stderr, "Fatal error loading the append only file: %s\n", err.c_str());
      return 1;
    }
    if (found) server.SetStartupLoader(std::move(aof));
    LOG_NOTICE("Ready to accept connections on port %d", config.port);
    return server.Run();
  }
  // The snapshot: worker 0 loads it between its events once the server
  // runs, answering -LOADING meanwhile (a bad header stops us here).
  bool found = false;
  auto loader = std::make_unique<RdbLoader>(server, server.worker(0).lua(), /*merge=*/false);
  if (!loader->Open(server.config().dbfilename, &found, &err)) {
    LOG_WARNING("%s", err.c_str());
    LOG_WARNING("Fatal error loading the DB, check server logs. Exiting.");
    std::fprintf(stderr, "Fatal error loading the DB: %s\n", err.c_str());
    return 1;
  }
  if (found) server.SetStartupLoader(std::move(loader));
  LOG_NOTICE("Ready to accept connections on port %d", config.port);
  return server.Run();
}
