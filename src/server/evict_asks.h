// A worker's asks to the other workers to evict (or trim their tracking
// tables) now and answer, for a command about to run (worker_evict.cc,
// docs/tracking.md "Evictions come before the reply"): which round of asks
// is awaited, how many answers it has, and which workers have not answered
// an earlier ask yet (they are not asked again, nor waited for, until they
// do: one worker in a long command costs the others one wait, not one per
// command). Used on its worker's thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/client.h"
#include "server/worker_mail.h"

namespace peregrine {

class EvictAsks {
 public:
  // A new round: answers to earlier ones are late from now on.
  void Begin() {
    seq_++;
    asked_ = answers_ = 0;
  }
  // The ask for worker `to` (the mail to send), or null if `to` still owes
  // an answer to an earlier one.
  EvictMail* Make(uint32_t from, uint32_t to, const Client& c, bool trim) {
    if (to >= out_.size()) out_.resize(to + 1, 0);
    if (out_[to]) return nullptr;
    out_[to] = 1;
    asked_++;
    return new EvictMail(from, to, seq_, c.id, c.home, trim);
  }
  // An answer came back (`m` stays the caller's).
  void Answered(const EvictMail& m) {
    if (m.to < out_.size()) out_[m.to] = 0;
    if (m.seq == seq_) answers_++;
  }
  size_t asked() const { return asked_; }
  bool done() const { return answers_ >= asked_; }

 private:
  uint64_t seq_ = 0;
  size_t asked_ = 0, answers_ = 0;
  std::vector<uint8_t> out_;  // per worker: an ask of ours it has not answered
};

}  // namespace peregrine
