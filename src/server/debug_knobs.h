// The switches DEBUG turns at run time (Redis's test suite's, mostly). Any
// worker reads them at any time: relaxed atomics, each on its own.
#pragma once

#include <atomic>
#include <cstdint>

namespace peregrine {

struct DebugKnobs {
  // SET-ACTIVE-EXPIRE: whether the cron deletes expired keys (lookups still
  // expire them lazily).
  std::atomic<bool> active_expire{true};
  // PAUSE-CRON: whether the workers' cron does nothing (Redis's pause_cron).
  std::atomic<bool> cron_paused{false};
  // SET-DISABLE-DENY-SCRIPTS: scripts may call DEBUG (Redis's test suite's
  // switch; Redis lets every no-script command through, here only DEBUG:
  // the others would re-enter the interpreter or a transaction).
  std::atomic<bool> script_disable_deny{false};
  // SET-SKIP-CHECKSUM-VALIDATION: RDB files and DUMP payloads load without
  // their CRC-64 checked (Redis's corrupt-dump tests feed hostile payloads
  // through it).
  std::atomic<bool> skip_checksum_validation{false};
  // REPLYBUFFER PEAK-RESET-TIME: after how long idle a client's buffers
  // are given back (Redis: after how long its reply buffer's peak resets,
  // so that it shrinks); -1: never. REPLYBUFFER RESIZING 0: an idle
  // client's reply buffer is kept (Redis: the buffer is never resized).
  static constexpr int64_t kDefaultBufferFreeMs = 2000;
  std::atomic<int64_t> buffer_free_ms{kDefaultBufferFreeMs};
  std::atomic<bool> reply_buffer_resizing{true};
};

}  // namespace peregrine
