// Checking an append-only file without a server (`peregrine --check-aof
// [--fix] FILE|MANIFEST`, as redis-check-aof): a Redis 7 manifest's files in
// order (the base an RDB, an RDB-preambled AOF or commands; then the
// incremental files), or one AOF file. Every command must be whole, and a
// MULTI must reach its EXEC. The last file alone may be repaired: --fix
// truncates it to its last whole command (before an unfinished MULTI),
// after asking, as redis-check-aof does; a problem in an earlier file
// cannot be fixed by cutting.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace peregrine {

struct AofCheckOptions {
  bool fix = false;
  // Where --fix asks "Continue? [y/N]" and reads the answer.
  std::FILE* in = stdin;
  std::FILE* out = stdout;
};

// What one file of commands holds (after `from`, where an RDB preamble
// ended): the length of its whole commands outside an unfinished MULTI
// (ok_up_to), the line where reading stopped (ok_up_to_line, counted as
// redis-check-aof counts it: one past the newlines before that point),
// whether the rest is malformed, and the file's size.
struct AofFileCheck {
  bool readable = true;
  uint64_t size = 0;
  uint64_t ok_up_to = 0;
  uint64_t ok_up_to_line = 0;
  uint64_t commands = 0;
  bool format_error = false;
  // redis-check-aof's line on why it stopped ("0x... : Expected to read 6
  // bytes, got 1 bytes", "... Reached EOF before reading EXEC for MULTI"),
  // or empty.
  std::string error;
  bool whole() const { return readable && ok_up_to == size; }
};
AofFileCheck CheckAofCommands(int fd, uint64_t from);

// `peregrine --check-aof [--fix] PATH`: prints the report; the exit status
// (0: valid, or fixed; 1: not valid).
int CheckAofMain(const std::string& path, const AofCheckOptions& options, int64_t now_ms);

}  // namespace peregrine
