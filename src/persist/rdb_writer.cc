// RdbWriter (see rdb_writer.h). The choices of encoding follow Redis's
// rdbSaveRawString / rdbSaveObject so that files compare byte for byte
// where the value's form allows it; containers are written in the plain
// forms every Redis since 2.x loads (docs/persistence.md says why).
#include "persist/rdb_writer.h"

#include <lzf.h>

#include <cstring>

#include "core/numbers.h"
#include "core/packed.h"
#include "core/packed_page.h"
#include "persist/crc64.h"
#include "persist/rdb_format.h"
#include "persist/rdb_stream.h"

namespace peregrine {

void RdbWriter::Len(uint64_t n) {
  if (n < (1 << 6)) {
    Byte(static_cast<uint8_t>(n));
  } else if (n < (1 << 14)) {
    Byte(static_cast<uint8_t>((n >> 8) | (rdb::k14BitLen << 6)));
    Byte(static_cast<uint8_t>(n & 0xff));
  } else if (n <= UINT32_MAX) {
    Byte(rdb::k32BitLen);
    const uint32_t be = __builtin_bswap32(static_cast<uint32_t>(n));
    Raw({reinterpret_cast<const char*>(&be), 4});
  } else {
    Byte(rdb::k64BitLen);
    const uint64_t be = __builtin_bswap64(n);
    Raw({reinterpret_cast<const char*>(&be), 8});
  }
}

void RdbWriter::Integer(int64_t v) {
  const uint8_t enc = rdb::kEncVal << 6;
  if (v >= INT8_MIN && v <= INT8_MAX) {
    Byte(enc | rdb::kEncInt8);
    Byte(static_cast<uint8_t>(v));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    Byte(enc | rdb::kEncInt16);
    Byte(static_cast<uint8_t>(v));
    Byte(static_cast<uint8_t>(v >> 8));
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    Byte(enc | rdb::kEncInt32);
    const uint32_t u = static_cast<uint32_t>(v);
    char b[4] = {static_cast<char>(u), static_cast<char>(u >> 8), static_cast<char>(u >> 16),
                 static_cast<char>(u >> 24)};
    Raw({b, 4});
  } else {
    char digits[24];
    const size_t n = FormatInt64(v, digits);
    Len(n);
    Raw({digits, n});
  }
}

void RdbWriter::String(std::string_view s) {
  // Redis tries the integer forms for up to 11 bytes (a 32-bit value's
  // longest decimal form).
  if (s.size() <= 11 && !s.empty()) {
    int64_t v;
    if (ParseInt64(s, &v) && v >= INT32_MIN && v <= INT32_MAX) {
      Integer(v);
      return;
    }
  }
  if (compress_ && s.size() > 20) {
    // As Redis: worth it only if it saves more than 4 bytes.
    const size_t room = s.size() - 4;
    if (lzf_.size() < room) lzf_.resize(room);
    const unsigned got = lzf_compress(s.data(), static_cast<unsigned>(s.size()), lzf_.data(),
                                      static_cast<unsigned>(room));
    if (got > 0 && s.size() <= UINT32_MAX) {
      Byte(rdb::kEncVal << 6 | rdb::kEncLzf);
      Len(got);
      Len(s.size());
      Raw({lzf_.data(), got});
      return;
    }
  }
  Len(s.size());
  Raw(s);
}

void RdbWriter::Item(const uint8_t* item) {
  int64_t v;
  if (packed::ItemInt(item, &v) && v >= INT32_MIN && v <= INT32_MAX) {
    Integer(v);
    return;
  }
  char scratch[packed::kScratchSize];
  String(packed::View(item, scratch));
}

void RdbWriter::BinaryDouble(double d) {
  static_assert(sizeof(double) == 8);
  Raw({reinterpret_cast<const char*>(&d), 8});
}

void RdbWriter::MillisTime(int64_t ms) { Raw({reinterpret_cast<const char*>(&ms), 8}); }

namespace {

bool HasFieldDeadlines(const HashObject& h) {
  if (h.min_deadline() == 0) return false;
  bool any = false;
  h.ForEachEntry([&](const uint8_t* e) { any |= Page::DeadlineOfEntry(e) != Page::kNoDeadline; });
  return any;
}

}  // namespace

uint8_t RdbWriter::TypeOf(const Value& v) {
  switch (v.type()) {
    case ValueType::kString:
      return rdb::kTypeString;
    case ValueType::kList:
      return rdb::kTypeList;
    case ValueType::kSet:
      return v.set().AsIntSet() != nullptr ? rdb::kTypeSetIntset : rdb::kTypeSet;
    case ValueType::kZSet:
      return rdb::kTypeZSet2;
    case ValueType::kHash:
      return HasFieldDeadlines(v.hash()) ? rdb::kTypeHashMetadata : rdb::kTypeHash;
    case ValueType::kStream:
      return rdb::kTypeStreamListpacks2;
  }
  return rdb::kTypeString;
}

int RdbWriter::VersionFor(const Value& v) {
  return v.is_hash() && HasFieldDeadlines(v.hash()) ? rdb::kVersionFieldTtl : rdb::kVersion;
}

void RdbWriter::Object(const Value& v) {
  switch (v.type()) {
    case ValueType::kString: {
      const CompactString& s = v.str();
      if (s.is_int()) {
        const int64_t n = s.int_value();
        if (n >= INT32_MIN && n <= INT32_MAX) {
          Integer(n);
          return;
        }
      }
      char scratch[CompactString::kIntBufferSize];
      String(s.View(scratch));
      return;
    }
    case ValueType::kList: {
      const ListObject& l = v.list();
      Len(l.size());
      char scratch[packed::kScratchSize];
      for (ListObject::Pos p = l.First(); !l.AtEnd(p); p = l.Next(p)) String(l.View(p, scratch));
      l.DropCache();
      return;
    }
    case ValueType::kSet: {
      const SetObject& s = v.set();
      if (const IntSet* is = s.AsIntSet()) {
        // Redis's intset: encoding (the width) and length, u32 little-endian,
        // then the values as this server keeps them.
        const uint32_t header[2] = {is->width, is->size()};
        const size_t bytes = size_t{is->size()} * is->width;
        std::string blob(reinterpret_cast<const char*>(header), 8);
        blob.append(reinterpret_cast<const char*>(is->raw_values()), bytes);
        String(blob);
        return;
      }
      Len(s.size());
      s.ForEach([&](std::string_view m) { String(m); });
      return;
    }
    case ValueType::kZSet: {
      const ZSetObject& z = v.zset();
      Len(z.size());
      z.ForEach([&](std::string_view m, double score) {
        String(m);
        BinaryDouble(score);
      });
      return;
    }
    case ValueType::kHash: {
      const HashObject& h = v.hash();
      if (!HasFieldDeadlines(h)) {
        Len(h.size());
        h.ForEachEntry([&](const uint8_t* e) {
          Item(Page::ItemOf(e, 0));
          Item(Page::ItemOf(e, 1));
        });
        return;
      }
      // Redis 7.4's kTypeHashMetadata: the earliest field deadline, then
      // each field's deadline relative to it (+1; 0 for none) before the
      // field and value.
      int64_t min = INT64_MAX;
      h.ForEachEntry([&](const uint8_t* e) {
        const int64_t d = Page::DeadlineOfEntry(e);
        if (d != Page::kNoDeadline && d < min) min = d;
      });
      MillisTime(min);
      Len(h.size());
      h.ForEachEntry([&](const uint8_t* e) {
        const int64_t d = Page::DeadlineOfEntry(e);
        Len(d == Page::kNoDeadline ? 0 : static_cast<uint64_t>(d - min) + 1);
        Item(Page::ItemOf(e, 0));
        Item(Page::ItemOf(e, 1));
      });
      return;
    }
    case ValueType::kStream:
      WriteStream(*this, v.stream());
      return;
  }
}

void RdbWriter::KeyValue(std::string_view key, const Value& v, int64_t expire_ms) {
  if (expire_ms >= 0) {
    Byte(rdb::kOpExpireTimeMs);
    MillisTime(expire_ms);
  }
  Byte(TypeOf(v));
  String(key);
  Object(v);
}

bool RdbWriter::Flush() {
  if (failed_) return false;
  if (buf_.empty()) return true;
  if (checksum_) crc_ = Crc64(crc_, buf_);
  if (sink_ && !sink_(buf_)) {
    failed_ = true;
    return false;
  }
  flushed_ += buf_.size();
  buf_.clear();
  return true;
}

bool RdbWriter::Finish() {
  Byte(rdb::kOpEof);
  if (checksum_) crc_ = Crc64(crc_, buf_);
  flushed_ += buf_.size();
  const uint64_t crc = checksum_ ? crc_ : 0;
  buf_.append(reinterpret_cast<const char*>(&crc), 8);
  // The bytes just checksummed go out without being summed again.
  const bool ok = !failed_ && (!sink_ || sink_(buf_));
  failed_ = !ok;
  flushed_ += 8;
  buf_.clear();
  return ok;
}

std::string RdbWriter::Dump(const Value& v) {
  RdbWriter w;
  w.Byte(TypeOf(v));
  w.Object(v);
  return w.DumpPayload(VersionFor(v));
}

std::string RdbWriter::DumpPayload(int version) {
  Byte(static_cast<uint8_t>(version & 0xff));
  Byte(static_cast<uint8_t>(version >> 8));
  const uint64_t crc = Crc64(0, buf_);
  buf_.append(reinterpret_cast<const char*>(&crc), 8);
  return std::move(buf_);
}

}  // namespace peregrine
