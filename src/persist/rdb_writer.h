// RdbWriter: serializes values in Redis's RDB format into a buffer, for a
// DUMP payload or (with a sink that takes full buffers) a whole RDB file.
// It keeps the running CRC-64 of everything handed on, for the file's
// trailing checksum. Not thread-safe: one writer per save.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/value.h"

namespace peregrine {

class RdbWriter {
 public:
  // Takes the buffered bytes when Flush() runs; false if they could not be
  // written (the writer then fails and writes nothing more).
  using Sink = std::function<bool(std::string_view)>;

  // compress: strings over 20 bytes go LZF-compressed when that saves
  // bytes (rdbcompression); checksum: keep the CRC-64 (rdbchecksum).
  explicit RdbWriter(bool compress = true, bool checksum = true, Sink sink = nullptr)
      : compress_(compress), checksum_(checksum), sink_(std::move(sink)) {}

  // --- Primitives (Redis's rdbSave* functions) ---
  void Byte(uint8_t b) { buf_.push_back(static_cast<char>(b)); }
  void Raw(std::string_view s) { buf_.append(s); }
  void Len(uint64_t n);
  // A string: as an integer when it is one's canonical form (up to 11
  // bytes), LZF-compressed when that pays, else length and bytes.
  void String(std::string_view s);
  // An integer as a string (the 8, 16 or 32-bit encodings, else decimal).
  void Integer(int64_t v);
  // A packed item (core/packed.h): integers as integers.
  void Item(const uint8_t* item);
  void BinaryDouble(double d);
  void MillisTime(int64_t ms);

  // --- Values ---
  // The RDB type Object() writes `v` as (a hash with field deadlines needs
  // Redis 7.4's kTypeHashMetadata).
  static uint8_t TypeOf(const Value& v);
  // Whether TypeOf(v) needs a newer RDB version than rdb::kVersion.
  static int VersionFor(const Value& v);
  void Object(const Value& v);
  // A key and its value with its deadline (kNoExpire: none), as a file
  // holds them.
  void KeyValue(std::string_view key, const Value& v, int64_t expire_ms);

  // --- Output ---
  // Hands the buffer to the sink once it holds `threshold` bytes or more.
  bool MaybeFlush(size_t threshold = 1 << 16) { return buf_.size() < threshold || Flush(); }
  bool Flush();
  // The file's end: the EOF opcode and the checksum (0 without rdbchecksum),
  // then a flush.
  bool Finish();
  // DUMP's payload: what was written, the 2-byte RDB version and the
  // CRC-64 of both (little-endian). Call once, without a sink.
  std::string DumpPayload(int version);
  // A value's whole DUMP payload (DUMP, MIGRATE).
  static std::string Dump(const Value& v);

  bool failed() const { return failed_; }
  // Bytes handed to the sink so far plus those buffered.
  uint64_t bytes() const { return flushed_ + buf_.size(); }
  std::string& buffer() { return buf_; }

 private:
  bool compress_;
  bool checksum_;
  bool failed_ = false;
  Sink sink_;
  std::string buf_;
  std::string lzf_;  // compression scratch
  uint64_t crc_ = 0;
  uint64_t flushed_ = 0;
};

}  // namespace peregrine
