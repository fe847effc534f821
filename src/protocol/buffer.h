// A growable byte buffer with a consumable front: the connection's read buffer
// (bytes arrive at the back, parsed commands leave from the front) and its
// reply buffer (replies appended at the back, written bytes dropped from the
// front). Not thread-safe; owned by one connection.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

namespace peregrine {

class Buffer {
 public:
  Buffer() = default;
  ~Buffer() { std::free(buf_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const char* data() const { return buf_ + head_; }
  char* data() { return buf_ + head_; }
  size_t size() const { return tail_ - head_; }
  bool empty() const { return tail_ == head_; }
  size_t capacity() const { return cap_; }
  // Bytes that can be appended without reallocating.
  size_t writable() const { return cap_ - tail_; }
  std::string_view view() const { return {data(), size()}; }

  // Ensures at least n writable bytes at the back and returns where they start.
  char* Reserve(size_t n) {
    if (cap_ - tail_ < n) Grow(n);
    return buf_ + tail_;
  }
  // Marks n bytes written after Reserve().
  void Commit(size_t n) { tail_ += n; }

  void Append(const void* p, size_t n) {
    if (n == 0) return;  // memcpy to or from a null pointer is undefined even for 0 bytes
    std::memcpy(Reserve(n), p, n);
    tail_ += n;
  }
  void Append(std::string_view s) { Append(s.data(), s.size()); }
  void Append(char c) {
    *Reserve(1) = c;
    tail_ += 1;
  }

  // Keeps only the first n bytes (n <= size()).
  void Truncate(size_t n) { tail_ = head_ + n; }

  // Drops n bytes from the front.
  void Consume(size_t n) {
    head_ += n;
    if (head_ == tail_) head_ = tail_ = 0;
  }

  // Moves the unconsumed bytes to the front of the allocation.
  void Compact() {
    if (head_ == 0) return;
    std::memmove(buf_, buf_ + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
  }

  void Clear() { head_ = tail_ = 0; }

  void Swap(Buffer& o) {
    std::swap(buf_, o.buf_);
    std::swap(head_, o.head_);
    std::swap(tail_, o.tail_);
    std::swap(cap_, o.cap_);
  }

  // Frees the allocation if it is larger than `keep` bytes and empty.
  void ShrinkIfIdle(size_t keep) {
    if (empty() && cap_ > keep) {
      std::free(buf_);
      buf_ = nullptr;
      cap_ = 0;
    }
  }

  size_t head_offset() const { return head_; }

 private:
  void Grow(size_t n) {
    Compact();
    if (cap_ - tail_ >= n) return;
    size_t want = tail_ + n;
    size_t cap = cap_ == 0 ? 1024 : cap_;
    while (cap < want) cap *= 2;
    char* p = static_cast<char*>(std::realloc(buf_, cap));
    if (p == nullptr) std::abort();  // out of memory: nothing sane to do
    buf_ = p;
    cap_ = cap;
  }

  char* buf_ = nullptr;
  size_t head_ = 0;
  size_t tail_ = 0;
  size_t cap_ = 0;
};

}  // namespace peregrine
