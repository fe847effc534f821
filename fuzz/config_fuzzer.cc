// libFuzzer target over the configuration file reader (issue #6): the input is
// a config file's text. It is split into directives (comments, quoting and
// escapes as redis.conf), applied to a default Config, and every directive's
// value printed back by CONFIG GET is fed to CONFIG SET again, which must
// accept it for the run-time mutable directives (what CONFIG GET prints, the
// server must take back: CONFIG REWRITE and redis-cli round trips rely on
// it). A crash, a sanitizer report or a refused round trip (abort) is a
// finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "server/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace peregrine;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Directive> directives;
  std::string err;
  if (!ParseConfigText(text, &directives, &err)) return 0;
  Config config;
  const Directive* failed = nullptr;
  // A bad directive stops at the culprit; what came before stays applied.
  ApplyDirectives(&config, directives, &err, &failed);

  const std::string_view all[] = {"*"};
  for (const auto& [name, value] : ConfigGet(config, all)) {
    const std::string_view pair[] = {name, value};
    std::string set_err;
    if (ConfigSet(&config, pair, &set_err)) continue;
    // Only the directives CONFIG SET may not change (here: immutable or
    // protected ones) are allowed to refuse.
    if (set_err.find("can't set immutable config") != std::string::npos ||
        set_err.find("can't set protected config") != std::string::npos)
      continue;
    std::fprintf(stderr, "CONFIG SET %s '%s' refused what CONFIG GET printed: %s\n", name.c_str(), value.c_str(),
                 set_err.c_str());
    std::abort();
  }
  return 0;
}
