// A connection's pending output: reply bytes encoded in place (a Buffer),
// interleaved with references to large values' heap blocks, which are sent
// from where they are (writev) instead of being copied into the buffer. The
// buffer holds a reference to each block it refers to (core/lent_blocks.h)
// until its bytes are written or dropped, so a value overwritten or deleted
// meanwhile is still sent as it was.
//
//   bytes:  "$2048\r\n" | "\r\n$2048\r\n" | "\r\n+OK\r\n"
//   refs:              ^ block A          ^ block B      (at inline positions)
//   sent:   "$2048\r\n" A "\r\n$2048\r\n" B "\r\n+OK\r\n"
//
// Not thread-safe: owned by one connection, on the thread that lent the
// blocks (every reference is returned on that thread).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>

#include "protocol/buffer.h"

namespace peregrine {

class OutputBuffer {
 public:
  OutputBuffer() = default;
  ~OutputBuffer() { Clear(); }
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  // Where replies are encoded; appending here goes after every reference.
  Buffer& bytes() { return bytes_; }
  const Buffer& bytes() const { return bytes_; }

  // Appends `data` (len bytes inside `block`) by reference: the block is
  // lent until those bytes are written or dropped.
  void AppendRef(const char* data, size_t len, const char* block);
  // Appends bytes by copy (a flat reply built elsewhere).
  void Append(std::string_view s) { bytes_.Append(s); }
  // Appends the bytes of `other` (replies built by another thread), taking
  // its allocation instead of copying when nothing is pending here; `other`
  // is left empty either way.
  void Take(Buffer& other) {
    if (empty() && other.size() > bytes_.capacity()) {
      bytes_.Clear();
      bytes_.Swap(other);
    } else {
      bytes_.Append(other.view());
    }
    other.Clear();
  }

  // Pending bytes, referenced ones included.
  size_t size() const { return bytes_.size() + ref_bytes_; }
  bool empty() const { return bytes_.empty() && refs_.empty(); }
  bool has_refs() const { return !refs_.empty(); }
  size_t ref_count() const { return refs_.size(); }
  // Referenced bytes not yet written.
  size_t referenced_bytes() const { return ref_bytes_; }
  // Bytes allocated for the encoded part (capacity of the byte buffer).
  size_t capacity() const { return bytes_.capacity(); }

  // Fills up to `max` iovecs with the pending bytes, in order; returns how
  // many. Every byte is covered when the result is below `max`.
  int Gather(iovec* iov, int max) const;
  // Drops the first n pending bytes (written), returning the references
  // whose bytes are all out.
  void Consume(size_t n);
  // Drops everything (the connection is closed or its replies discarded).
  void Clear();
  // Copies every referenced byte into the byte buffer, in place, and returns
  // the references (before another thread may free the blocks).
  void Flatten();
  // Frees the byte buffer's allocation if it is empty and larger than `keep`.
  void ShrinkIfIdle(size_t keep) {
    if (refs_.empty()) bytes_.ShrinkIfIdle(keep);
  }

 private:
  struct Ref {
    uint64_t at;  // the inline position it comes before (counted from base_)
    const char* data;
    size_t len;
    const char* block;
  };
  // Offset in bytes_ of the first inline byte after which `r` comes.
  size_t OffsetOf(const Ref& r) const { return static_cast<size_t>(r.at - base_); }

  Buffer bytes_;
  std::deque<Ref> refs_;
  uint64_t base_ = 0;        // inline bytes consumed so far: the position of bytes_.data()
  size_t front_written_ = 0;  // bytes of refs_.front() already written
  size_t ref_bytes_ = 0;      // referenced bytes pending
};

}  // namespace peregrine
