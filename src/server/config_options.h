// The table of directives behind config.h, for the files that implement
// it (config.cc: parsing, CONFIG GET / SET; config_rewrite.cc: CONFIG
// REWRITE). Not for anyone else: they go through config.h.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/config.h"

namespace peregrine::config_options {

using Args = std::span<const std::string>;

// Whether CONFIG SET may change a directive.
enum Mutability : uint8_t {
  kImmutable,    // immutable in Redis too: refused before the value is looked at
  kMutable,      // CONFIG SET applies it
  kNotYet,       // Redis can change it at run time, Peregrine not yet: the value
                 // is validated first (as Redis would), then refused
  kProtected,    // CONFIG SET applies it if enable-protected-configs allows
};

struct Option {
  std::string_view name;
  Mutability mutability;
  int min_args, max_args;  // number of values the directive takes
  std::function<std::string(const Config&)> get;
  // Parses and stores; returns "" on success or the reason it failed.
  std::function<std::string(Config&, Args)> set;
};


// Every directive, in CONFIG GET's order; one by name (aliases included).
const std::vector<Option>& Options();
const Option* FindOption(std::string_view name);

}  // namespace peregrine::config_options
