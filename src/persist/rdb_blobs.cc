// Listpack, ziplist, intset and zipmap walkers (see rdb_blobs.h). The
// layouts are Redis's (listpack.c, ziplist.c, intset.c, zipmap.c); every
// read is bounds-checked here.
#include "persist/rdb_blobs.h"

#include <cstring>

#include "core/numbers.h"

namespace peregrine::rdb {
namespace {

uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint16_t LoadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

bool Bad(std::string* err, const char* what) {
  *err = what;
  return false;
}

}  // namespace

std::string_view Element::View(char* scratch) const {
  if (!is_int) return str;
  return {scratch, FormatInt64(num, scratch)};
}

size_t EncodeBacklen(uint8_t* out, uint64_t l) {
  if (l <= 127) {
    out[0] = static_cast<uint8_t>(l);
    return 1;
  }
  if (l < 16383) {
    out[0] = static_cast<uint8_t>(l >> 7);
    out[1] = static_cast<uint8_t>((l & 127) | 128);
    return 2;
  }
  if (l < 2097151) {
    out[0] = static_cast<uint8_t>(l >> 14);
    out[1] = static_cast<uint8_t>(((l >> 7) & 127) | 128);
    out[2] = static_cast<uint8_t>((l & 127) | 128);
    return 3;
  }
  if (l < 268435455) {
    out[0] = static_cast<uint8_t>(l >> 21);
    out[1] = static_cast<uint8_t>(((l >> 14) & 127) | 128);
    out[2] = static_cast<uint8_t>(((l >> 7) & 127) | 128);
    out[3] = static_cast<uint8_t>((l & 127) | 128);
    return 4;
  }
  out[0] = static_cast<uint8_t>(l >> 28);
  out[1] = static_cast<uint8_t>(((l >> 21) & 127) | 128);
  out[2] = static_cast<uint8_t>(((l >> 14) & 127) | 128);
  out[3] = static_cast<uint8_t>(((l >> 7) & 127) | 128);
  out[4] = static_cast<uint8_t>((l & 127) | 128);
  return 5;
}

// Listpack: total bytes u32 | count u16 (65535: unknown) | entries | 0xFF.
// An entry is an encoding byte (with the length or value), its data, and
// its own length again (EncodeBacklen).
bool WalkListpack(std::string_view blob, const ElementFn& f, std::string* err) {
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  const size_t size = blob.size();
  if (size < 7 || LoadU32(p) != size || p[size - 1] != 0xFF) return Bad(err, "Listpack integrity check failed.");
  const uint16_t declared = LoadU16(p + 4);
  size_t off = 6, count = 0;
  while (true) {
    if (off >= size) return Bad(err, "Listpack integrity check failed.");
    const uint8_t b = p[off];
    if (b == 0xFF) break;
    const size_t avail = size - 1 - off;  // bytes before the end marker
    Element e;
    size_t header = 1;
    uint64_t data = 0;
    auto need = [&](size_t n) { return n <= avail; };
    if ((b & 0x80) == 0) {
      e.is_int = true;
      e.num = b & 0x7F;
    } else if ((b & 0xC0) == 0x80) {
      data = b & 0x3F;
    } else if ((b & 0xE0) == 0xC0) {
      if (!need(2)) return Bad(err, "Listpack integrity check failed.");
      header = 2;
      const int64_t v = ((b & 0x1F) << 8) | p[off + 1];
      e.is_int = true;
      e.num = v >= 4096 ? v - 8192 : v;
    } else if ((b & 0xF0) == 0xE0) {
      if (!need(2)) return Bad(err, "Listpack integrity check failed.");
      header = 2;
      data = ((b & 0x0F) << 8) | p[off + 1];
    } else if (b == 0xF0) {
      if (!need(5)) return Bad(err, "Listpack integrity check failed.");
      header = 5;
      data = LoadU32(p + off + 1);
    } else if (b >= 0xF1 && b <= 0xF4) {
      static constexpr size_t kBytes[] = {2, 3, 4, 8};
      const size_t n = kBytes[b - 0xF1];
      if (!need(1 + n)) return Bad(err, "Listpack integrity check failed.");
      header = 1 + n;
      uint64_t u = 0;
      for (size_t i = 0; i < n; i++) u |= uint64_t{p[off + 1 + i]} << (8 * i);
      // Sign-extend from n bytes.
      const int shift = static_cast<int>(64 - 8 * n);
      e.is_int = true;
      e.num = static_cast<int64_t>(u << shift) >> shift;
    } else {
      return Bad(err, "Listpack integrity check failed.");
    }
    if (!need(header) || data > avail - header) return Bad(err, "Listpack integrity check failed.");
    const size_t entry = header + static_cast<size_t>(data);
    if (!e.is_int) e.str = std::string_view(reinterpret_cast<const char*>(p + off + header), data);
    uint8_t back[5];
    const size_t nb = EncodeBacklen(back, entry);
    if (nb > avail - entry || std::memcmp(back, p + off + entry, nb) != 0)
      return Bad(err, "Listpack integrity check failed.");
    off += entry + nb;
    count++;
    if (!f(e)) return false;
  }
  if (off != size - 1 || (declared != 65535 && declared != count))
    return Bad(err, "Listpack integrity check failed.");
  return true;
}

// Ziplist: total bytes u32 | offset of the last entry u32 | count u16 |
// entries | 0xFF. An entry is the previous entry's size (1 byte, or 0xFE
// and a u32), an encoding (with the length or an immediate value) and
// its data.
bool WalkZiplist(std::string_view blob, const ElementFn& f, std::string* err) {
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  const size_t size = blob.size();
  constexpr const char* kBad = "Ziplist integrity check failed.";
  if (size < 11 || LoadU32(p) != size || p[size - 1] != 0xFF) return Bad(err, kBad);
  const uint32_t tail = LoadU32(p + 4);
  const uint16_t declared = LoadU16(p + 8);
  size_t off = 10, count = 0, prev_size = 0, last = 10;
  while (p[off] != 0xFF) {
    const size_t avail = size - 1 - off;
    size_t n = 1;
    uint64_t prevlen = p[off];
    if (prevlen == 254) {
      if (avail < 5) return Bad(err, kBad);
      prevlen = LoadU32(p + off + 1);
      n = 5;
    }
    if (prevlen != prev_size || avail < n + 1) return Bad(err, kBad);
    const uint8_t b = p[off + n];
    Element e;
    size_t header = 1;
    uint64_t data = 0;
    switch (b >> 6) {
      case 0:
        data = b & 0x3F;
        break;
      case 1:
        if (avail < n + 2) return Bad(err, kBad);
        header = 2;
        data = (uint64_t{b & 0x3Fu} << 8) | p[off + n + 1];
        break;
      case 2:
        if (b != 0x80 || avail < n + 5) return Bad(err, kBad);
        header = 5;
        data = __builtin_bswap32(LoadU32(p + off + n + 1));
        break;
      default: {
        e.is_int = true;
        size_t bytes;
        if (b == 0xC0)
          bytes = 2;
        else if (b == 0xD0)
          bytes = 4;
        else if (b == 0xE0)
          bytes = 8;
        else if (b == 0xF0)
          bytes = 3;
        else if (b == 0xFE)
          bytes = 1;
        else if (b >= 0xF1 && b <= 0xFD) {
          bytes = 0;
          e.num = (b & 0x0F) - 1;
        } else
          return Bad(err, kBad);
        if (avail < n + 1 + bytes) return Bad(err, kBad);
        if (bytes > 0) {
          uint64_t u = 0;
          for (size_t i = 0; i < bytes; i++) u |= uint64_t{p[off + n + 1 + i]} << (8 * i);
          const int shift = static_cast<int>(64 - 8 * bytes);
          e.num = static_cast<int64_t>(u << shift) >> shift;
        }
        header = 1 + bytes;
        break;
      }
    }
    if (data > avail - n - header) return Bad(err, kBad);
    if (!e.is_int) e.str = std::string_view(reinterpret_cast<const char*>(p + off + n + header), data);
    const size_t entry = n + header + static_cast<size_t>(data);
    last = off;
    off += entry;
    prev_size = entry;
    count++;
    if (!f(e)) return false;
  }
  if (off != size - 1 || (count > 0 && tail != last) || (count == 0 && tail != 10) ||
      (declared != 65535 && declared != count))
    return Bad(err, kBad);
  return true;
}

// Intset: width u32 (2, 4 or 8) | count u32 | values, little-endian.
bool WalkIntset(std::string_view blob, const std::function<bool(int64_t)>& f, std::string* err) {
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  constexpr const char* kBad = "Intset integrity check failed.";
  if (blob.size() < 8) return Bad(err, kBad);
  const uint32_t width = LoadU32(p), count = LoadU32(p + 4);
  if ((width != 2 && width != 4 && width != 8) || uint64_t{count} * width + 8 != blob.size()) return Bad(err, kBad);
  int64_t prev = 0;
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t* q = p + 8 + size_t{i} * width;
    int64_t v;
    if (width == 2) {
      int16_t x;
      std::memcpy(&x, q, 2);
      v = x;
    } else if (width == 4) {
      int32_t x;
      std::memcpy(&x, q, 4);
      v = x;
    } else {
      std::memcpy(&v, q, 8);
    }
    if (i > 0 && v <= prev) return Bad(err, kBad);
    prev = v;
    if (!f(v)) return false;
  }
  return true;
}

// Zipmap: count u8 | (len key len free value [free bytes])* | 0xFF, a len
// being one byte below 254, or 254 and a u32.
bool WalkZipmap(std::string_view blob, const std::function<bool(std::string_view, std::string_view)>& f,
                std::string* err) {
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  const size_t size = blob.size();
  constexpr const char* kBad = "Zipmap integrity check failed.";
  if (size < 2 || p[size - 1] != 0xFF) return Bad(err, kBad);
  size_t off = 1;
  auto read_len = [&](uint64_t* len) {
    if (off >= size) return false;
    if (p[off] < 254) {
      *len = p[off++];
      return true;
    }
    if (p[off] != 254 || size - off < 5) return false;
    *len = LoadU32(p + off + 1);
    off += 5;
    return true;
  };
  while (off < size && p[off] != 0xFF) {
    uint64_t klen, vlen;
    if (!read_len(&klen) || klen > size - off) return Bad(err, kBad);
    const std::string_view key(reinterpret_cast<const char*>(p + off), klen);
    off += klen;
    if (!read_len(&vlen) || off >= size) return Bad(err, kBad);
    const uint8_t free = p[off++];
    if (vlen > size - off || free > size - off - vlen) return Bad(err, kBad);
    const std::string_view value(reinterpret_cast<const char*>(p + off), vlen);
    off += vlen + free;
    if (!f(key, value)) return false;
  }
  if (off != size - 1) return Bad(err, kBad);
  return true;
}

void ListpackWriter::Element(const uint8_t* enc, size_t enc_len, std::string_view data) {
  buf_.append(reinterpret_cast<const char*>(enc), enc_len);
  buf_.append(data);
  uint8_t back[5];
  buf_.append(reinterpret_cast<const char*>(back), EncodeBacklen(back, enc_len + data.size()));
  count_++;
}

void ListpackWriter::AppendInt(int64_t v) {
  uint8_t e[9];
  size_t n;
  if (v >= 0 && v <= 127) {
    e[0] = static_cast<uint8_t>(v);
    n = 1;
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t u = v < 0 ? (uint64_t{1} << 13) + static_cast<uint64_t>(v + 0) : static_cast<uint64_t>(v);
    e[0] = static_cast<uint8_t>((u >> 8) | 0xC0);
    e[1] = static_cast<uint8_t>(u & 0xff);
    n = 2;
  } else {
    int bytes;
    if (v >= -32768 && v <= 32767) {
      e[0] = 0xF1;
      bytes = 2;
    } else if (v >= -8388608 && v <= 8388607) {
      e[0] = 0xF2;
      bytes = 3;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      e[0] = 0xF3;
      bytes = 4;
    } else {
      e[0] = 0xF4;
      bytes = 8;
    }
    const uint64_t u = static_cast<uint64_t>(v);  // two's complement, cut to `bytes`
    for (int i = 0; i < bytes; i++) e[1 + i] = static_cast<uint8_t>(u >> (8 * i));
    n = 1 + static_cast<size_t>(bytes);
  }
  Element(e, n, {});
}

void ListpackWriter::AppendString(std::string_view s) {
  int64_t v;
  if (s.size() <= 20 && ParseInt64(s, &v)) {
    AppendInt(v);
    return;
  }
  uint8_t e[5];
  size_t n;
  if (s.size() < 64) {
    e[0] = static_cast<uint8_t>(0x80 | s.size());
    n = 1;
  } else if (s.size() < 4096) {
    e[0] = static_cast<uint8_t>(0xE0 | (s.size() >> 8));
    e[1] = static_cast<uint8_t>(s.size() & 0xff);
    n = 2;
  } else {
    e[0] = 0xF0;
    const uint32_t len = static_cast<uint32_t>(s.size());
    for (int i = 0; i < 4; i++) e[1 + i] = static_cast<uint8_t>(len >> (8 * i));
    n = 5;
  }
  Element(e, n, s);
}

std::string ListpackWriter::Finish() {
  buf_.push_back(static_cast<char>(0xFF));
  const uint32_t total = static_cast<uint32_t>(buf_.size());
  const uint16_t count = count_ < 65535 ? static_cast<uint16_t>(count_) : 65535;
  for (int i = 0; i < 4; i++) buf_[static_cast<size_t>(i)] = static_cast<char>(total >> (8 * i));
  buf_[4] = static_cast<char>(count & 0xff);
  buf_[5] = static_cast<char>(count >> 8);
  return std::move(buf_);
}

}  // namespace peregrine::rdb
