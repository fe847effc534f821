// Readers of the packed blobs Redis stores values in, as RDB files and DUMP
// payloads carry them: listpack (Redis 7), ziplist (Redis 3.2 to 6.2),
// intset and zipmap (Redis 2.4). Each walks a blob from an untrusted input,
// checks every header, length and back-link against the blob's bounds (as
// Redis's deep integrity validation), and hands each element to a callback.
// The elements are only read: Peregrine builds its own containers from them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace peregrine::rdb {

// One element of a listpack or ziplist: a string or an integer.
struct Element {
  std::string_view str;
  int64_t num = 0;
  bool is_int = false;
  // The element as a string (an integer formatted into `scratch`, 24 bytes).
  std::string_view View(char* scratch) const;
};

// Each returns false with *err set if the blob is malformed, or as soon as
// the callback returns false (then *err is left as the callback set it).
using ElementFn = std::function<bool(const Element&)>;
bool WalkListpack(std::string_view blob, const ElementFn& f, std::string* err);
bool WalkZiplist(std::string_view blob, const ElementFn& f, std::string* err);
// The values of an intset, which must be strictly ascending.
bool WalkIntset(std::string_view blob, const std::function<bool(int64_t)>& f, std::string* err);
// The field/value pairs of a zipmap.
bool WalkZipmap(std::string_view blob, const std::function<bool(std::string_view, std::string_view)>& f,
                std::string* err);

// Builds a listpack as Redis's listpack.c writes one (a stream node in an
// RDB file): a string that is a canonical integer is stored as an integer,
// as lpAppend does.
class ListpackWriter {
 public:
  ListpackWriter() : buf_(6, '\0') {}
  void AppendInt(int64_t v);
  void AppendString(std::string_view s);
  // The blob (header filled in, end byte added); the writer is then spent.
  std::string Finish();

 private:
  void Element(const uint8_t* enc, size_t enc_len, std::string_view data);
  std::string buf_;
  size_t count_ = 0;
};

// Redis's lpEncodeBacklen: the bytes that follow a listpack entry of `len`
// bytes to let it be walked backwards; returns how many (1..5).
size_t EncodeBacklen(uint8_t* out, uint64_t len);

}  // namespace peregrine::rdb
