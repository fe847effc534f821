// OutputBuffer (see output_buffer.h).
#include "protocol/output_buffer.h"

#include <algorithm>
#include <cstring>

#include "core/lent_blocks.h"

namespace peregrine {

void OutputBuffer::AppendRef(const char* data, size_t len, const char* block) {
  if (len == 0) return;
  lent_blocks::Lend(block);
  refs_.push_back({base_ + bytes_.size(), data, len, block});
  ref_bytes_ += len;
}

int OutputBuffer::Gather(iovec* iov, int max) const {
  int k = 0;
  size_t pos = 0;  // offset in bytes_ of the next inline byte to cover
  for (size_t r = 0; k < max; r++) {
    const size_t until = r < refs_.size() ? OffsetOf(refs_[r]) : bytes_.size();
    if (until > pos) {
      iov[k++] = {const_cast<char*>(bytes_.data() + pos), until - pos};
      pos = until;
      if (k == max) break;
    }
    if (r >= refs_.size()) break;
    const size_t skip = r == 0 ? front_written_ : 0;
    iov[k++] = {const_cast<char*>(refs_[r].data + skip), refs_[r].len - skip};
  }
  return k;
}

void OutputBuffer::Consume(size_t n) {
  while (n > 0) {
    if (!refs_.empty() && OffsetOf(refs_.front()) == 0) {
      Ref& r = refs_.front();
      const size_t take = std::min(n, r.len - front_written_);
      front_written_ += take;
      ref_bytes_ -= take;
      n -= take;
      if (front_written_ == r.len) {
        lent_blocks::Return(r.block);
        refs_.pop_front();
        front_written_ = 0;
      }
      continue;
    }
    const size_t until = refs_.empty() ? bytes_.size() : OffsetOf(refs_.front());
    const size_t take = std::min(n, until);
    if (take == 0) break;  // n was more than what is pending
    bytes_.Consume(take);
    base_ += take;
    n -= take;
  }
}

void OutputBuffer::Clear() {
  for (const Ref& r : refs_) lent_blocks::Return(r.block);
  refs_.clear();
  base_ += bytes_.size();
  bytes_.Clear();
  front_written_ = 0;
  ref_bytes_ = 0;
}

void OutputBuffer::Flatten() {
  if (refs_.empty()) return;
  Buffer flat;
  char* p = flat.Reserve(size());
  auto copy = [&p](const char* src, size_t n) {
    if (n == 0) return;  // src may be null then
    std::memcpy(p, src, n);
    p += n;
  };
  size_t pos = 0;
  for (size_t r = 0; r < refs_.size(); r++) {
    const size_t until = OffsetOf(refs_[r]);
    copy(bytes_.data() + pos, until - pos);
    pos = until;
    const size_t skip = r == 0 ? front_written_ : 0;
    copy(refs_[r].data + skip, refs_[r].len - skip);
  }
  copy(bytes_.data() + pos, bytes_.size() - pos);
  flat.Commit(size());
  for (const Ref& r : refs_) lent_blocks::Return(r.block);
  refs_.clear();
  front_written_ = 0;
  ref_bytes_ = 0;
  bytes_.Swap(flat);
}

}  // namespace peregrine
