// RdbReader (see rdb_reader.h).
#include "persist/rdb_reader.h"

#include <lzf.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/numbers.h"
#include "persist/crc64.h"
#include "persist/rdb_format.h"

namespace peregrine {
namespace {
constexpr size_t kWindow = 1 << 20;
}

RdbReader::RdbReader(int fd, uint64_t size) : fd_(fd), source_left_(size) {}

bool RdbReader::Fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  return false;
}

void RdbReader::Slide(size_t n) {
  if (pos_ > crc_pos_) crc_ = Crc64(crc_, data_ + crc_pos_, pos_ - crc_pos_);
  const size_t keep = end_ - pos_;
  if (buf_.size() < std::max(n, kWindow)) {
    std::string bigger(std::max(n, kWindow), '\0');
    if (keep > 0) std::memcpy(bigger.data(), data_ + pos_, keep);
    buf_.swap(bigger);
  } else if (keep > 0) {
    std::memmove(buf_.data(), data_ + pos_, keep);
  }
  consumed_base_ += pos_;
  data_ = buf_.data();
  pos_ = crc_pos_ = 0;
  end_ = keep;
}

bool RdbReader::FillAvailable() {
  if (ended()) return false;
  if (pos_ > 0 || buf_.empty()) Slide(0);
  while (end_ < buf_.size() && source_left_ > 0) {
    const size_t want = std::min<uint64_t>(buf_.size() - end_, source_left_);
    const ssize_t got = ::read(fd_, buf_.data() + end_, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (got < 0) return Fail(std::string("Read error reading the RDB file: ") + std::strerror(errno));
    if (got == 0) {
      source_left_ = 0;
      break;
    }
    end_ += static_cast<size_t>(got);
    source_left_ -= static_cast<uint64_t>(got);
  }
  return !ended();
}

bool RdbReader::Ensure(size_t n) {
  if (!error_.empty()) return false;
  if (end_ - pos_ >= n) return true;
  if (n - (end_ - pos_) > source_left_) return Fail("Unexpected EOF reading RDB file");
  // Slide the unread bytes to the front of the window and refill it.
  Slide(n);
  while (end_ < n || (end_ < buf_.size() && source_left_ > 0)) {
    const size_t want = std::min<uint64_t>(buf_.size() - end_, source_left_);
    if (want == 0) break;
    const ssize_t got = ::read(fd_, buf_.data() + end_, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // (A non-blocking pipe with nothing yet: wait for its bytes, if
      // what came is not enough.)
      if (end_ >= n) break;
      pollfd p{fd_, POLLIN, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    if (got < 0) return Fail(std::string("Read error reading the RDB file: ") + std::strerror(errno));
    if (got == 0) {
      source_left_ = 0;  // (the end: enough for `n` or not, said below)
      break;
    }
    end_ += static_cast<size_t>(got);
    source_left_ -= static_cast<uint64_t>(got);
    // A short read from a pipe (a replica's diskless load): go on with what
    // came rather than wait for a full window (a file's reads are short only
    // at its end).
    if (static_cast<size_t>(got) < want && end_ >= n) break;
  }
  return end_ - pos_ >= n || Fail("Unexpected EOF reading RDB file");
}

uint64_t RdbReader::Crc() {
  if (pos_ > crc_pos_) crc_ = Crc64(crc_, data_ + crc_pos_, pos_ - crc_pos_);
  crc_pos_ = pos_;
  return crc_;
}

bool RdbReader::Byte(uint8_t* out) {
  if (!Ensure(1)) return false;
  *out = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

bool RdbReader::Bytes(size_t n, const char** out) {
  if (!Ensure(n)) return false;
  *out = data_ + pos_;
  pos_ += n;
  return true;
}

bool RdbReader::Len(uint64_t* n, bool* encoded) {
  uint8_t b;
  if (!Byte(&b)) return false;
  if (encoded) *encoded = false;
  const int kind = b >> 6;
  if (kind == rdb::kEncVal) {
    if (encoded == nullptr) return Fail("Unexpected string encoding where a length was expected");
    *encoded = true;
    *n = b & 0x3F;
    return true;
  }
  if (kind == rdb::k6BitLen) {
    *n = b & 0x3F;
    return true;
  }
  if (kind == rdb::k14BitLen) {
    uint8_t b2;
    if (!Byte(&b2)) return false;
    *n = (uint64_t{b & 0x3Fu} << 8) | b2;
    return true;
  }
  const char* p;
  if (b == rdb::k32BitLen) {
    if (!Bytes(4, &p)) return false;
    uint32_t v;
    std::memcpy(&v, p, 4);
    *n = __builtin_bswap32(v);
    return true;
  }
  if (b == rdb::k64BitLen) {
    if (!Bytes(8, &p)) return false;
    uint64_t v;
    std::memcpy(&v, p, 8);
    *n = __builtin_bswap64(v);
    return true;
  }
  return Fail("Unknown length encoding " + std::to_string(b) + " in rdbLoadLen()");
}

bool RdbReader::String(std::string* out) {
  bool encoded;
  uint64_t len;
  if (!Len(&len, &encoded)) return false;
  const char* p;
  if (!encoded) {
    if (len > remaining()) return Fail("Unexpected EOF reading RDB file");
    if (!Bytes(static_cast<size_t>(len), &p)) return false;
    out->assign(p, static_cast<size_t>(len));
    return true;
  }
  int64_t v = 0;
  switch (len) {
    case rdb::kEncInt8:
      if (!Bytes(1, &p)) return false;
      v = static_cast<int8_t>(p[0]);
      break;
    case rdb::kEncInt16: {
      if (!Bytes(2, &p)) return false;
      int16_t x;
      std::memcpy(&x, p, 2);
      v = x;
      break;
    }
    case rdb::kEncInt32: {
      if (!Bytes(4, &p)) return false;
      int32_t x;
      std::memcpy(&x, p, 4);
      v = x;
      break;
    }
    case rdb::kEncLzf: {
      uint64_t clen, ulen;
      if (!Len(&clen) || !Len(&ulen)) return false;
      // LZF expands at most about 88 times (a 3-byte back-reference copies
      // 264 bytes): a larger claim is corrupt, and allocating it could be
      // all the memory there is.
      if (clen > remaining()) return Fail("Unexpected EOF reading RDB file");
      if (clen == 0 || ulen == 0 || ulen > clen * 90 + 64)
        return Fail("Invalid LZF compressed string");
      if (!Bytes(static_cast<size_t>(clen), &p)) return false;
      out->resize(static_cast<size_t>(ulen));
      const unsigned got = lzf_decompress(p, static_cast<unsigned>(clen), out->data(), static_cast<unsigned>(ulen));
      if (got != ulen) return Fail("Invalid LZF compressed string");
      return true;
    }
    default:
      return Fail("Unknown RDB string encoding type " + std::to_string(len));
  }
  char digits[24];
  out->assign(digits, FormatInt64(v, digits));
  return true;
}

bool RdbReader::BinaryDouble(double* out) {
  const char* p;
  if (!Bytes(8, &p)) return false;
  std::memcpy(out, p, 8);
  return true;
}

bool RdbReader::StringDouble(double* out) {
  uint8_t n;
  if (!Byte(&n)) return false;
  switch (n) {
    case 253:
      *out = std::nan("");
      return true;
    case 254:
      *out = INFINITY;
      return true;
    case 255:
      *out = -INFINITY;
      return true;
  }
  const char* p;
  if (!Bytes(n, &p)) return false;
  const std::string text(p, n);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  if (n == 0 || end != text.c_str() + n) return Fail("Invalid double value");
  return true;
}

bool VerifyDumpPayload(std::string_view p, bool check_crc) {
  if (p.size() < 10) return false;
  const auto* footer = reinterpret_cast<const uint8_t*>(p.data() + p.size() - 10);
  const int version = footer[0] | footer[1] << 8;
  if (version > rdb::kMaxVersion) return false;
  if (!check_crc) return true;
  uint64_t crc;
  std::memcpy(&crc, footer + 2, 8);
  return Crc64(0, p.data(), p.size() - 8) == crc;
}

bool RdbReader::MillisTime(int64_t* out) {
  const char* p;
  if (!Bytes(8, &p)) return false;
  std::memcpy(out, p, 8);
  return true;
}

bool RdbReader::SecondsTime(int64_t* out) {
  const char* p;
  if (!Bytes(4, &p)) return false;
  int32_t v;
  std::memcpy(&v, p, 4);
  *out = v;
  return true;
}

bool ReadRdbHeader(RdbReader& r, int* version) {
  const char* magic;
  if (!r.Bytes(9, &magic)) return false;
  if (std::memcmp(magic, "REDIS", 5) != 0) return r.Fail("Wrong signature trying to load DB from file");
  *version = 0;
  for (int i = 5; i < 9; i++) {
    if (magic[i] < '0' || magic[i] > '9') return r.Fail("Wrong signature trying to load DB from file");
    *version = *version * 10 + (magic[i] - '0');
  }
  if (*version < 1 || *version > rdb::kMaxVersion)
    return r.Fail("Can't handle RDB format version " + std::to_string(*version));
  return true;
}

bool ReadRdbChecksum(RdbReader& r, int version, uint64_t* stored, uint64_t* computed) {
  *stored = *computed = 0;
  if (version < 5) return true;
  *computed = r.Crc();
  const char* p;
  if (!r.Bytes(8, &p)) return false;
  std::memcpy(stored, p, 8);
  return true;
}

}  // namespace peregrine
