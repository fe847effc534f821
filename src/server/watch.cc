#include "server/watch.h"

#include <algorithm>

#include "core/db.h"
#include "core/slot.h"

namespace peregrine {

namespace {

// Whether the key is in `d` and its deadline has passed (Redis's keyIsExpired).
bool ExpiredIn(const Db& d, std::string_view key, int64_t now_ms) {
  const Db::Entry* e = d.FindRaw(key);
  return e != nullptr && Db::IsExpired(*e, now_ms);
}

}  // namespace

void WatchTable::Count(int64_t delta) {
  if (counter_ != nullptr) counter_->fetch_add(delta, std::memory_order_relaxed);
}

bool WatchTable::Watches(int db, std::string_view key, const WatchState* w) const {
  if (keys_ == 0) return false;
  const Map& m = dbs_[static_cast<size_t>(db)];
  auto it = m.find(key);
  if (it == m.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [w](const Watcher& x) { return x.state.get() == w; });
}

bool WatchTable::Add(int db, std::string_view key, const std::shared_ptr<WatchState>& w, bool expired) {
  Map& m = dbs_[static_cast<size_t>(db)];
  auto it = m.find(key);
  if (it == m.end()) {
    it = m.emplace(std::string(key), std::vector<Watcher>()).first;
    keys_++;
    Count(1);
  } else if (std::any_of(it->second.begin(), it->second.end(), [&](const Watcher& x) { return x.state == w; })) {
    return false;
  }
  it->second.push_back({w, expired});
  return true;
}

void WatchTable::Remove(int db, std::string_view key, const WatchState* w) {
  if (keys_ == 0) return;
  Map& m = dbs_[static_cast<size_t>(db)];
  auto it = m.find(key);
  if (it == m.end()) return;
  std::vector<Watcher>& v = it->second;
  v.erase(std::remove_if(v.begin(), v.end(), [w](const Watcher& x) { return x.state.get() == w; }), v.end());
  if (v.empty()) {
    m.erase(it);
    keys_--;
    Count(-1);
  }
}

void WatchTable::TouchSlow(int db, std::string_view key, const Db& d, int64_t now_ms) {
  if (clients_ != nullptr && clients_->active()) clients_->Changed(key, /*by_command=*/true);
  if (!moving_.empty() && db == 0) [[unlikely]] {
    const uint32_t slot = SlotOf(key);
    for (MovingKeys* m : moving_)
      if (m->slots[slot]) m->changed.emplace(key);
  }
  if (keys_ == 0) return;
  Map& m = dbs_[static_cast<size_t>(db)];
  auto it = m.find(key);
  if (it == m.end()) return;
  std::vector<Watcher>& v = it->second;
  // Watched while expired: a key still missing or expired is no change
  // (Redis clears the flag once the expired key is deleted; whether it was
  // is read from the table here, so the flag stays).
  const Db::Entry* e = d.FindRaw(key);
  const bool absent = e == nullptr || Db::IsExpired(*e, now_ms);
  size_t keep = 0;
  for (size_t i = 0; i < v.size(); i++) {
    if (v[i].expired && absent) {
      v[keep++] = std::move(v[i]);
      continue;
    }
    // Dirty: its EXEC fails whatever happens next, so it need not be told
    // again (Redis unwatches all its keys here).
    v[i].state->MarkDirty();
  }
  v.resize(keep);
  if (v.empty()) {
    m.erase(it);
    keys_--;
    Count(-1);
  }
}

void WatchTable::TouchAll(int db, const Db& emptied, const Db* replaced_with, int64_t now_ms) {
  if (db == 0)
    for (MovingKeys* m : moving_) m->emptied = true;
  if (keys_ == 0) return;
  Map& m = dbs_[static_cast<size_t>(db)];
  for (auto it = m.begin(); it != m.end();) {
    const std::string& key = it->first;
    const bool in_emptied = emptied.FindRaw(key) != nullptr;
    const bool in_replacement = replaced_with != nullptr && replaced_with->FindRaw(key) != nullptr;
    if (!in_emptied && !in_replacement) {
      ++it;
      continue;
    }
    const bool expired_replacement = in_replacement && ExpiredIn(*replaced_with, key, now_ms);
    std::vector<Watcher>& v = it->second;
    size_t keep = 0;
    for (size_t i = 0; i < v.size(); i++) {
      Watcher& w = v[i];
      if (w.expired) {
        // An expired key deleted, or replaced with another expired one:
        // still no key.
        if (!in_replacement || expired_replacement) {
          w.expired = in_replacement;
          v[keep++] = std::move(w);
          continue;
        }
      } else if (!in_emptied && expired_replacement) {
        // A missing key replaced with an expired one: still none.
        w.expired = true;
        v[keep++] = std::move(w);
        continue;
      }
      w.state->MarkDirty();
    }
    v.resize(keep);
    if (v.empty()) {
      it = m.erase(it);
      keys_--;
      Count(-1);
    } else {
      ++it;
    }
  }
}

}  // namespace peregrine
