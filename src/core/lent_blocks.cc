// The per-thread table of lent blocks (see lent_blocks.h).
//
// Written by hand rather than with std::unordered_map: that allocates a node
// per insert, and a reference is taken and returned for every large value a
// reply sends (twice per GET). This is a tiny open-addressing table — linear
// probing, deletion by backward shift (no tombstones), a power-of-two size
// kept under half full — that allocates only when it grows; Abseil's tables
// would do, but Abseil is not a run-time dependency of the server.
#include "core/lent_blocks.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/memory.h"

namespace peregrine::lent_blocks {
namespace {

struct Slot {
  const char* block = nullptr;  // nullptr: empty
  uint32_t refs = 0;
  bool orphaned = false;  // its owner has released it: freed with the last reference
};

class Table {
 public:
  ~Table() {
    // A thread that exits with orphaned blocks still lent (only at process
    // exit: workers drop their clients' replies first) frees them.
    for (Slot& s : slots_)
      if (s.block != nullptr && s.orphaned) std::free(const_cast<char*>(s.block));
  }

  Slot* Find(const char* block) {
    if (size_ == 0) return nullptr;
    for (size_t i = Home(block);; i = (i + 1) & mask_) {
      if (slots_[i].block == block) return &slots_[i];
      if (slots_[i].block == nullptr) return nullptr;
    }
  }

  Slot& Insert(const char* block) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t i = Home(block);
    while (slots_[i].block != nullptr && slots_[i].block != block) i = (i + 1) & mask_;
    if (slots_[i].block == nullptr) {
      slots_[i].block = block;
      slots_[i].refs = 0;
      slots_[i].orphaned = false;
      size_++;
    }
    return slots_[i];
  }

  // Removes the slot `s` points to, shifting later members of its probe run
  // back so that every member stays reachable from its home.
  void Erase(Slot* s) {
    size_t hole = static_cast<size_t>(s - slots_.data());
    for (size_t i = (hole + 1) & mask_; slots_[i].block != nullptr; i = (i + 1) & mask_) {
      const size_t home = Home(slots_[i].block);
      // Movable into the hole if its home is not in (hole, i] (cyclically).
      if (((i - home) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = Slot{};
    size_--;
  }

  size_t size() const { return size_; }

 private:
  size_t Home(const char* block) const {
    // Blocks are at least 8-byte aligned: mix the rest (Fibonacci hashing).
    const uint64_t h = (reinterpret_cast<uintptr_t>(block) >> 3) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }

  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.block == nullptr) continue;
      Slot& n = Insert(s.block);
      n.refs = s.refs;
      n.orphaned = s.orphaned;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

thread_local Table tls_table;

}  // namespace

void Lend(const char* block) { tls_table.Insert(block).refs++; }

void Return(const char* block) {
  Slot* s = tls_table.Find(block);
  if (s == nullptr) return;
  if (--s->refs > 0) return;
  const bool orphaned = s->orphaned;
  tls_table.Erase(s);
  if (orphaned) std::free(const_cast<char*>(block));  // already uncounted by Release
}

bool IsLent(const char* block) { return tls_table.Find(block) != nullptr; }

void Release(char* block) {
  Slot* s = tls_table.Find(block);
  if (s == nullptr) {
    CountedFree(block);
    return;
  }
  ForgetCounted(block);
  s->orphaned = true;
}

size_t LentCount() { return tls_table.size(); }

}  // namespace peregrine::lent_blocks
