// A key as the commands that rebuild it (see aof_rewrite.h).
#include "persist/aof_rewrite.h"

#include <algorithm>
#include <vector>

#include "core/numbers.h"
#include "core/packed_page.h"
#include "core/stream_groups.h"
#include "persist/aof_format.h"

namespace peregrine {
namespace {

// Gathers one command's arguments (the command's name and key first),
// owning the bytes of those that are not views into the value.
class Batch {
 public:
  Batch(std::string* out, std::string_view name, std::string_view key) : out_(out), name_(name), key_(key) {
    Start();
  }
  void Add(std::string_view a) { args_.push_back(Keep(a)); }
  // Counts an item (one or more arguments) and sends the command when full.
  void Item() {
    if (++items_ == kAofItemsPerCommand) Send();
  }
  void Finish() {
    if (items_ > 0) Send();
  }

 private:
  std::string_view Keep(std::string_view a) {
    owned_.emplace_back(a);
    return owned_.back();
  }
  void Start() {
    args_.assign({name_, key_});
    owned_.clear();
    owned_.reserve(kAofItemsPerCommand * 2);
    items_ = 0;
  }
  void Send() {
    AppendRespCommand(out_, args_);
    Start();
  }

  std::string* out_;
  std::string_view name_, key_;
  std::vector<std::string_view> args_;
  std::vector<std::string> owned_;  // reserved: views into it stay valid
  size_t items_ = 0;
};

}  // namespace

namespace {

// Redis's rewriteStreamObject: XADD for each entry (an empty stream as
// XADD MAXLEN 0 of a dummy entry), XSETID for the metadata, then each
// group (XGROUP CREATE ... ENTRIESREAD), its pending entries (XCLAIM ...
// JUSTID FORCE, with their delivery time and count) and its consumers
// without any (XGROUP CREATECONSUMER).
void AppendStreamCommands(std::string* out, std::string_view key, const StreamObject& s) {
  if (s.size() > 0) {
    std::vector<std::string_view> args;
    s.Range({}, StreamID::Max(), false, [&](const StreamObject::EntryView& e) {
      const std::string id = e.id().ToString();
      args.assign({"XADD", key, id});
      std::vector<std::string> owned;  // the views ForEach gives live for its call only
      owned.reserve(e.pairs() * 2);
      e.ForEach([&](std::string_view f, std::string_view v) {
        owned.emplace_back(f);
        owned.emplace_back(v);
      });
      for (const std::string& x : owned) args.push_back(x);
      AppendRespCommand(out, args);
      return true;
    });
  } else {
    AppendRespCommand(out, {"XADD", key, "MAXLEN", "0", "0-1", "x", "y"});
  }
  const std::string last = s.last_id().ToString(), added = std::to_string(s.entries_added()),
                    maxdel = s.max_deleted_id().ToString();
  AppendRespCommand(out, {"XSETID", key, last, "ENTRIESADDED", added, "MAXDELETEDID", maxdel});
  if (s.groups() == nullptr) return;
  for (const auto& [name, g] : s.groups()->all()) {
    const std::string gid = g->last_id.ToString(), read = std::to_string(g->entries_read);
    AppendRespCommand(out, {"XGROUP", "CREATE", key, name, gid, "ENTRIESREAD", read});
    for (const auto& [cname, c] : g->consumers) {
      if (c->pending.empty()) {
        AppendRespCommand(out, {"XGROUP", "CREATECONSUMER", key, name, cname});
        continue;
      }
      for (const StreamID& id : c->pending) {
        const StreamNack& nack = g->pel.at(id);
        const std::string sid = id.ToString(), time = std::to_string(nack.delivery_time),
                          count = std::to_string(nack.delivery_count);
        AppendRespCommand(out, {"XCLAIM", key, name, cname, "0", sid, "TIME", time, "RETRYCOUNT", count, "JUSTID",
                                "FORCE"});
      }
    }
  }
}

}  // namespace

void AppendKeyCommands(std::string* out, std::string_view key, const Value& v, int64_t expire_ms) {
  bool done = false;
  AppendKeyCommandsPart(out, key, v, expire_ms, 0, SIZE_MAX, &done);
}

size_t KeyItems(const Value& v) {
  switch (v.type()) {
    case ValueType::kString: return v.str().size();
    case ValueType::kList: return v.list().size();
    case ValueType::kSet: return v.set().size();
    case ValueType::kZSet: return v.zset().size();
    case ValueType::kHash: return v.hash().size();
    case ValueType::kStream: return 1;
  }
  return 1;
}

size_t AppendKeyCommandsPart(std::string* out, std::string_view key, const Value& v, int64_t expire_ms, size_t from,
                             size_t max, bool* done, uint64_t* scan) {
  const size_t total = KeyItems(v);
  size_t end = max >= total - std::min(from, total) ? total : from + max;
  bool whole = end >= total;
  // (A table's part by its SCAN cursor: the items visited, about `max`.)
  auto by_cursor = [&](auto&& scan_from) {
    size_t visited = 0;
    *scan = scan_from(*scan, max, visited);
    end = from + visited;
    whole = *scan == 0;
  };
  switch (v.type()) {
    case ValueType::kString: {
      char scratch[CompactString::kIntBufferSize];
      const std::string_view all = v.str().View(scratch);
      const std::string_view piece = all.substr(from, end - from);
      AppendRespCommand(out, {from == 0 ? std::string_view("SET") : std::string_view("APPEND"), key, piece});
      break;
    }
    case ValueType::kList: {
      const ListObject& l = v.list();
      Batch b(out, "RPUSH", key);
      char scratch[packed::kScratchSize];
      if (from < end) {
        size_t at = from;
        for (ListObject::Pos p = l.Seek(from); !l.AtEnd(p) && at < end; p = l.Next(p), at++) {
          b.Add(l.View(p, scratch));
          b.Item();
        }
      }
      b.Finish();
      l.DropCache();
      break;
    }
    case ValueType::kSet: {
      Batch b(out, "SADD", key);
      auto add = [&](std::string_view m) {
        b.Add(m);
        b.Item();
      };
      const SetObject& set = v.set();
      if (scan != nullptr && set.encoding() == SetObject::Encoding::kHashtable) {
        by_cursor([&](uint64_t c, size_t n, size_t& visited) {
          return set.Scan(c, n, [&](std::string_view m) {
            add(m);
            visited++;
          });
        });
      } else {
        // (Items before `from` passed over: the small encodings, or no cursor.)
        size_t at = 0;
        set.ForEach([&](std::string_view m) {
          if (at >= from && at < end) add(m);
          at++;
        });
      }
      b.Finish();
      break;
    }
    case ValueType::kZSet: {
      const ZSetObject& z = v.zset();
      Batch b(out, "ZADD", key);
      char scratch[packed::kScratchSize];
      if (from < end) {
        ZSetObject::Pos p = z.AtRank(from);
        size_t at = from;
        do {
          char num[kMaxDoubleChars];
          b.Add(std::string_view(num, FormatDouble(ZSetObject::ScoreAt(p), num)));
          b.Add(ZSetObject::MemberAt(p, scratch));
          b.Item();
        } while (++at < end && z.Next(&p));
      }
      b.Finish();
      break;
    }
    case ValueType::kHash: {
      Batch b(out, "HMSET", key);
      std::vector<std::pair<std::string, int64_t>> deadlines;
      auto add = [&](const uint8_t* e) {
        char s0[packed::kScratchSize], s1[packed::kScratchSize];
        const std::string_view f = packed::View(Page::ItemOf(e, 0), s0);
        b.Add(f);
        b.Add(packed::View(Page::ItemOf(e, 1), s1));
        b.Item();
        const int64_t d = Page::DeadlineOfEntry(e);
        if (d != Page::kNoDeadline) deadlines.emplace_back(f, d);
      };
      const HashObject& h = v.hash();
      if (scan != nullptr && h.encoding() == HashObject::Encoding::kHashtable) {
        by_cursor([&](uint64_t c, size_t n, size_t& visited) {
          return h.ScanEntries(c, n, [&](const uint8_t* e) {
            add(e);
            visited++;
          });
        });
      } else {
        size_t at = 0;
        h.ForEachEntry([&](const uint8_t* e) {
          if (at >= from && at < end) add(e);
          at++;
        });
      }
      b.Finish();
      for (const auto& [field, ms] : deadlines) {
        const std::string t = std::to_string(ms);
        AppendRespCommand(out, {"HPEXPIREAT", key, t, "FIELDS", "1", field});
      }
      break;
    }
    case ValueType::kStream:
      AppendStreamCommands(out, key, v.stream());
      end = total;
      whole = true;
      break;
  }
  *done = whole;
  if (*done && expire_ms >= 0) {
    const std::string t = std::to_string(expire_ms);
    AppendRespCommand(out, {"PEXPIREAT", key, t});
  }
  return end - from;
}

}  // namespace peregrine
