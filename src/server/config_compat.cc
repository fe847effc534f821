// Redis 7's directives that have nothing to act on in Peregrine (its
// allocator's defragmenter, jemalloc's thread, fork-based saves, the process
// title, syslog ...): accepted with Redis's names, defaults, checks and
// mutability, read back by CONFIG GET and written by CONFIG REWRITE, so that
// a redis.conf starts Peregrine and tools that set them get Redis's
// answers. The server logs at start which of them a file set
// (docs/shipping.md, "Moving from Redis"). Their values live in
// Config::inert, by name.
#include <algorithm>
#include <climits>
#include <functional>
#include <string>
#include <vector>

#include "server/config_options.h"

namespace peregrine::config_options {

namespace {

std::string InertGet(const Config& c, std::string_view name, std::string_view def) {
  auto it = c.inert.find(name);
  return it == c.inert.end() ? std::string(def) : it->second;
}

Option Inert(std::string_view name, std::string def, Mutability mut,
             std::function<std::string(const std::string& in, std::string* out)> check, int max_args = 1) {
  Option o{name, mut, 1, max_args, [name, def = std::move(def)](const Config& c) { return InertGet(c, name, def); },
           [name, check](Config& c, Args a) -> std::string {
             std::string joined;
             for (const std::string& s : a) joined += (joined.empty() ? "" : " ") + s;
             std::string value;
             std::string err = check(joined, &value);
             if (err.empty()) c.inert[std::string(name)] = value;
             return err;
           }};
  o.inert = true;
  return o;
}

Option InertBool(std::string_view name, bool def, Mutability mut) {
  return Inert(name, def ? "yes" : "no", mut, [](const std::string& in, std::string* out) -> std::string {
    bool v = false;
    std::string err = CheckBool(in, &v);
    *out = v ? "yes" : "no";
    return err;
  });
}

Option InertInt(std::string_view name, int64_t def, int64_t min, int64_t max, Mutability mut) {
  return Inert(name, std::to_string(def), mut, [min, max](const std::string& in, std::string* out) -> std::string {
    int64_t v = 0;
    std::string err = CheckInt(in, min, max, &v);
    *out = std::to_string(v);
    return err;
  });
}

Option InertString(std::string_view name, std::string_view def, Mutability mut) {
  return Inert(name, std::string(def), mut, [](const std::string& in, std::string* out) -> std::string {
    *out = in;
    return "";
  });
}

// One of `names`.
Option InertEnum(std::string_view name, std::string_view def, std::vector<std::string_view> names, Mutability mut) {
  return Inert(name, std::string(def), mut, [names](const std::string& in, std::string* out) -> std::string {
    *out = Lower(in);
    return std::find(names.begin(), names.end(), *out) != names.end() ? "" : NotOneOf(names);
  });
}

}  // namespace

void AddInertOptions(std::vector<Option>& o) {
  o.push_back(InertBool("activerehashing", true, kMutable));
  // (Redis built without its patched jemalloc refuses it on too: there is
  // no defragmenter here either.)
  o.push_back(Inert("activedefrag", "no", kMutable, [](const std::string& in, std::string* out) -> std::string {
    bool on = false;
    std::string err = CheckBool(in, &on);
    if (err.empty() && on)
      err = "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified "
            "Jemalloc like the one shipped by default with the Redis source distribution";
    *out = "no";
    return err;
  }));
  o.push_back(Inert("active-defrag-ignore-bytes", "104857600", kMutable,
                    [](const std::string& in, std::string* out) -> std::string {
                      uint64_t v = 0;
                      std::string err = CheckMemory(in, 1, LLONG_MAX, &v);
                      *out = std::to_string(v);
                      return err;
                    }));
  o.push_back(InertInt("active-defrag-threshold-lower", 10, 0, 1000, kMutable));
  o.push_back(InertInt("active-defrag-threshold-upper", 100, 0, 1000, kMutable));
  o.push_back(InertInt("active-defrag-cycle-min", 1, 1, 99, kMutable));
  o.push_back(InertInt("active-defrag-cycle-max", 25, 1, 99, kMutable));
  o.push_back(InertInt("active-defrag-max-scan-fields", 1000, 1, LLONG_MAX, kMutable));
  o.push_back(InertInt("active-expire-effort", 1, 1, 10, kMutable));
  o.push_back(InertBool("always-show-logo", false, kImmutable));
  o.push_back(InertBool("aof-disable-auto-gc", false, kMutable));
  for (std::string_view name : {"server_cpulist", "bio_cpulist", "aof_rewrite_cpulist", "bgsave_cpulist"})
    o.push_back(InertString(name, "", kImmutable));
  o.push_back(InertString("bind-source-addr", "", kMutable));
  o.push_back(InertBool("crash-log-enabled", true, kMutable));
  o.push_back(InertBool("crash-memcheck-enabled", true, kMutable));
  o.push_back(InertBool("disable-thp", true, kImmutable));
  o.push_back(InertBool("dynamic-hz", true, kMutable));
  o.push_back(InertString("ignore-warnings", "", kMutable));
  o.push_back(InertBool("io-threads-do-reads", false, kImmutable));
  o.push_back(InertBool("jemalloc-bg-thread", true, kMutable));
  for (std::string_view name : {"lazyfree-lazy-eviction", "lazyfree-lazy-expire", "lazyfree-lazy-server-del",
                                "lazyfree-lazy-user-del", "replica-lazy-flush"})
    o.push_back(InertBool(name, false, kMutable));
  {
    // (Another name of the same setting, as in Redis.)
    Option alias = o.back();
    alias.name = "slave-lazy-flush";
    o.push_back(std::move(alias));
  }
  o.push_back(InertInt("maxmemory-eviction-tenacity", 10, 0, 100, kMutable));
  {
    // (relative is yes's other name: CONFIG GET says yes, as Redis.)
    Option adj = InertEnum("oom-score-adj", "no", {"no", "yes", "relative", "absolute"}, kMutable);
    adj.set = [set = adj.set](Config& c, Args a) -> std::string {
      std::string err = set(c, a);
      if (err.empty() && c.inert["oom-score-adj"] == "relative") c.inert["oom-score-adj"] = "yes";
      return err;
    };
    o.push_back(std::move(adj));
  }
  o.push_back(Inert("oom-score-adj-values", "0 200 800", kMutable,
                    [](const std::string& in, std::string* out) -> std::string {
                      out->clear();
                      int n = 0;
                      for (size_t pos = 0; pos < in.size();) {
                        const size_t end = std::min(in.find(' ', pos), in.size());
                        const std::string_view word = std::string_view(in).substr(pos, end - pos);
                        pos = end + 1;
                        if (word.empty()) continue;
                        int64_t v;
                        if (!ParseInt64(word, &v) || v < -2000 || v > 2000)
                          return "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
                        *out += (out->empty() ? "" : " ") + std::to_string(v);
                        n++;
                      }
                      return n == 3 ? "" : "wrong number of arguments";
                    },
                    3));
  o.push_back(Inert("proc-title-template", "{title} {listen-addr} {server-mode}", kMutable,
                    [](const std::string& in, std::string* out) -> std::string {
                      // (Redis's check: only its variables, in whole braces, and not empty.)
                      static constexpr std::string_view kVars[] = {"{title}",   "{listen-addr}", "{server-mode}",
                                                                   "{port}",    "{tls-port}",    "{unixsocket}",
                                                                   "{config-file}"};
                      const std::string err = "template format is invalid or contains unknown variables";
                      if (in.empty()) return err;
                      for (size_t pos = 0; pos < in.size();) {
                        if (in[pos] == '}') return err;
                        if (in[pos] != '{') {
                          pos++;
                          continue;
                        }
                        const size_t end = in.find('}', pos);
                        if (end == std::string::npos) return err;
                        const std::string_view var = std::string_view(in).substr(pos, end - pos + 1);
                        if (std::find(std::begin(kVars), std::end(kVars), var) == std::end(kVars)) return err;
                        pos = end + 1;
                      }
                      *out = in;
                      return "";
                    }));
  o.push_back(InertEnum("propagation-error-behavior", "ignore", {"ignore", "panic", "panic-on-replicas"}, kMutable));
  o.push_back(InertBool("rdb-del-sync-files", false, kMutable));
  o.push_back(InertBool("rdb-save-incremental-fsync", true, kMutable));
  o.push_back(InertBool("repl-disable-tcp-nodelay", false, kMutable));
  o.push_back(InertBool("replica-ignore-disk-write-errors", false, kMutable));
  o.push_back(InertEnum("sanitize-dump-payload", "no", {"no", "yes", "clients"}, kMutable));
  o.push_back(InertBool("set-proc-title", true, kImmutable));
  for (std::string_view name : {"shutdown-on-sigint", "shutdown-on-sigterm"})
    o.push_back(Inert(
        name, "default", kMutable,
        [](const std::string& in, std::string* out) -> std::string {
          // Redis's flags: any of them, read back in this order, "default"
          // when none.
          static constexpr std::string_view kFlags[] = {"save", "nosave", "now", "force"};
          static const std::string kNotAFlag =
              NotOneOf(std::vector<std::string_view>{"default", "save", "nosave", "now", "force"});
          bool set[4] = {};
          size_t words = 0;
          for (size_t pos = 0; pos <= in.size();) {
            const size_t end = std::min(in.find(' ', pos), in.size());
            const std::string word = Lower(std::string_view(in).substr(pos, end - pos));
            pos = end + 1;
            if (word.empty()) continue;
            words++;
            if (word == "default") continue;
            const auto it = std::find(std::begin(kFlags), std::end(kFlags), word);
            if (it == std::end(kFlags)) return kNotAFlag;
            set[it - std::begin(kFlags)] = true;
          }
          if (words == 0) return kNotAFlag;
          if (set[0] && set[1]) return "shutdown options SAVE and NOSAVE can't be used simultaneously";
          out->clear();
          for (size_t i = 0; i < 4; i++)
            if (set[i]) *out += (out->empty() ? "" : " ") + std::string(kFlags[i]);
          if (out->empty()) *out = "default";
          return "";
        },
        INT_MAX));
  o.push_back(InertInt("socket-mark-id", 0, 0, UINT_MAX, kImmutable));
  o.push_back(InertBool("syslog-enabled", false, kImmutable));
  o.push_back(InertString("syslog-ident", "redis", kImmutable));
  o.push_back(InertEnum("syslog-facility", "local0",
                        {"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"},
                        kImmutable));
  for (std::string_view name : {"tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass"})
    o.push_back(InertString(name, "", kMutable));
}

bool IsInert(std::string_view name) {
  const Option* o = FindOption(name);
  return o != nullptr && o->inert;
}

}  // namespace peregrine::config_options
