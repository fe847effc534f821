// Checking an RDB file without a server (`peregrine --check-rdb FILE`, as
// redis-check-rdb): every opcode and value is read as a load reads it
// (values built into Peregrine's containers, so a value that would not
// load fails here too), the checksum compared, and either the first problem
// reported with its offset and what was being read, or the keys counted by
// type. Also the RDB part of an AOF with an RDB preamble (aof_check.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "persist/rdb_reader.h"

namespace peregrine {

struct RdbCheckResult {
  bool ok = false;
  // Where the RDB ended (after its checksum) when ok: an AOF's tail starts
  // there.
  uint64_t end = 0;
  uint64_t keys = 0, expires = 0, already_expired = 0, empty = 0, functions = 0;
  std::array<uint64_t, 6> by_type{};  // by ValueType
};

// Reads an RDB from `r` (a file's or a preamble's start), appending a
// report to *out in redis-check-rdb's shape: "[offset N] ..." lines, then
// "[info]" counts; an error after "--- RDB ERROR DETECTED ---". Keys whose
// deadline is before now_ms count as already expired.
RdbCheckResult CheckRdb(RdbReader& r, int64_t now_ms, std::string* out);

// `peregrine --check-rdb FILE`: prints the report; the exit status (0 if
// the file is whole, 1 if not).
int CheckRdbMain(const std::string& path, int64_t now_ms);

}  // namespace peregrine
