// A key as the commands that rebuild it (see aof_rewrite.h).
#include "persist/aof_rewrite.h"

#include <vector>

#include "core/numbers.h"
#include "core/packed_page.h"
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

void AppendKeyCommands(std::string* out, std::string_view key, const Value& v, int64_t expire_ms) {
  switch (v.type()) {
    case ValueType::kString: {
      char scratch[CompactString::kIntBufferSize];
      AppendRespCommand(out, {"SET", key, v.str().View(scratch)});
      break;
    }
    case ValueType::kList: {
      const ListObject& l = v.list();
      Batch b(out, "RPUSH", key);
      char scratch[packed::kScratchSize];
      for (ListObject::Pos p = l.First(); !l.AtEnd(p); p = l.Next(p)) {
        b.Add(l.View(p, scratch));
        b.Item();
      }
      b.Finish();
      l.DropCache();
      break;
    }
    case ValueType::kSet: {
      Batch b(out, "SADD", key);
      v.set().ForEach([&](std::string_view m) {
        b.Add(m);
        b.Item();
      });
      b.Finish();
      break;
    }
    case ValueType::kZSet: {
      Batch b(out, "ZADD", key);
      v.zset().ForEach([&](std::string_view m, double score) {
        char num[kMaxDoubleChars];
        b.Add(std::string_view(num, FormatDouble(score, num)));
        b.Add(m);
        b.Item();
      });
      b.Finish();
      break;
    }
    case ValueType::kHash: {
      const HashObject& h = v.hash();
      Batch b(out, "HMSET", key);
      std::vector<std::pair<std::string, int64_t>> deadlines;
      h.ForEachEntry([&](const uint8_t* e) {
        char s0[packed::kScratchSize], s1[packed::kScratchSize];
        const std::string_view f = packed::View(Page::ItemOf(e, 0), s0);
        b.Add(f);
        b.Add(packed::View(Page::ItemOf(e, 1), s1));
        b.Item();
        const int64_t d = Page::DeadlineOfEntry(e);
        if (d != Page::kNoDeadline) deadlines.emplace_back(f, d);
      });
      b.Finish();
      for (const auto& [field, ms] : deadlines) {
        const std::string t = std::to_string(ms);
        AppendRespCommand(out, {"HPEXPIREAT", key, t, "FIELDS", "1", field});
      }
      break;
    }
    case ValueType::kStream:
      break;
  }
  if (expire_ms >= 0) {
    const std::string t = std::to_string(expire_ms);
    AppendRespCommand(out, {"PEXPIREAT", key, t});
  }
}

}  // namespace peregrine
