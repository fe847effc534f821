// RdbReader: reads Redis's RDB primitives (lengths, strings in their
// integer and LZF forms, doubles, times) from a DUMP payload in memory or
// from an RDB file, checking every length against the bytes that are left,
// so that no corrupt or hostile input makes it read out of bounds or
// allocate more than the input could describe. It keeps the CRC-64 of the
// bytes consumed, for the file's trailing checksum. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace peregrine {

class RdbReader {
 public:
  // Reads `data` (which must outlive the reader).
  explicit RdbReader(std::string_view data) : data_(data.data()), end_(data.size()) {}
  // Reads `size` bytes from the open file or pipe `fd` (the reader does not
  // close it); a pipe that closes ends the input.
  RdbReader(int fd, uint64_t size);

  bool ok() const { return error_.empty(); }
  // Why reading stopped (a corrupt or short input, an I/O error).
  const std::string& error() const { return error_; }
  // Records the first error; returns false.
  bool Fail(std::string why);

  bool Byte(uint8_t* out);
  // `n` contiguous bytes, valid until the next read.
  bool Bytes(size_t n, const char** out);
  // A length; *encoded (if given) says it is a special string encoding
  // (its kind in *n) rather than a length.
  bool Len(uint64_t* n, bool* encoded = nullptr);
  // A string in any of its encodings, decoded into *out.
  bool String(std::string* out);
  bool BinaryDouble(double* out);
  // The old text form of a double (kTypeZSet): a length byte (253 nan,
  // 254 inf, 255 -inf), then the digits.
  bool StringDouble(double* out);
  bool MillisTime(int64_t* out);
  bool SecondsTime(int64_t* out);

  // A pipe's reader (the pipe non-blocking; Ensure waits for its bytes):
  // reads what has come into the window without waiting, up to the
  // window's room. False once the input has ended or failed.
  bool FillAvailable();
  // Bytes read in and not consumed yet; whether nothing more will come.
  size_t buffered() const { return end_ - pos_; }
  bool ended() const { return source_left_ == 0 || !error_.empty(); }
  // Bytes of the input not yet consumed.
  uint64_t remaining() const { return end_ - pos_ + source_left_; }
  // Bytes consumed so far.
  uint64_t consumed() const { return consumed_base_ + pos_; }
  // The CRC-64 of every byte consumed so far.
  uint64_t Crc();

 private:
  // Makes `n` bytes available from pos_ (refilling from the file).
  bool Ensure(size_t n);
  // Moves the unread bytes to the window's front, the window made room for
  // at least `n` (the CRC taken up to pos_ first).
  void Slide(size_t n);

  const char* data_ = nullptr;
  size_t pos_ = 0;
  size_t end_ = 0;
  int fd_ = -1;
  uint64_t source_left_ = 0;  // bytes of the file not read yet
  uint64_t consumed_base_ = 0;
  std::string buf_;           // the file's window
  std::string lzf_;           // a compressed string's bytes
  size_t crc_pos_ = 0;        // bytes of the window the CRC covers
  uint64_t crc_ = 0;
  std::string error_;
};

// Redis's verifyDumpPayload: whether a DUMP payload ends in a footer of an
// RDB version this server reads and the CRC-64 of everything before the
// checksum (unless `check_crc` is false: DEBUG SET-SKIP-CHECKSUM-VALIDATION).
// The value is then the payload less its last 10 bytes.
bool VerifyDumpPayload(std::string_view payload, bool check_crc = true);

// An RDB file's first 9 bytes, "REDIS" and four digits: *version, or false
// with Redis's error (a wrong signature, a version past rdb::kMaxVersion).
bool ReadRdbHeader(RdbReader& r, int* version);
// After the EOF opcode of a file of `version`: the CRC-64 of everything
// before it (*computed) and the one stored (*stored; 0 when the file was
// saved without, or before version 5, which has none).
bool ReadRdbChecksum(RdbReader& r, int version, uint64_t* stored, uint64_t* computed);

}  // namespace peregrine
