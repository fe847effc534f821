// HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST on string
// values in Redis's representation (core/hyperloglog.h), with Redis 7.2's
// replies and error texts (hyperloglog.c). PFCOUNT and PFMERGE take keys on
// any shard (the command holds them all).
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "commands/common.h"
#include "core/hyperloglog.h"

namespace peregrine {
namespace {

constexpr std::string_view kErrNotHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
constexpr std::string_view kErrCorrupt = "INVALIDOBJ Corrupted HLL object detected";

// A string value as an hll::Buffer: its bytes, writable (a block a reply
// still sends is copied first), growing and shrinking in place.
class ValueBuffer : public hll::Buffer {
 public:
  explicit ValueBuffer(CompactString& s) : s_(s), data_(reinterpret_cast<uint8_t*>(s.MutableBytes(s.size()))) {}
  uint8_t* data() override { return data_; }
  size_t size() const override { return s_.size(); }
  uint8_t* Resize(size_t size) override { return data_ = reinterpret_cast<uint8_t*>(s_.Resize(size)); }

 private:
  CompactString& s_;
  uint8_t* data_;
};

size_t SparseMax(const CommandContext& ctx) { return ctx.server.config().hll_sparse_max_bytes; }

// Redis's isHLLObjectOrReply: false after replying WRONGTYPE for another
// type or for a string that is not an HLL (an integer never is one).
bool CheckHll(CommandContext& ctx, const Db::Entry* e) {
  if (e->value.type() != ValueType::kString) {
    ctx.reply.Error(kErrWrongType);
    return false;
  }
  const CompactString& s = e->value.str();
  char scratch[CompactString::kIntBufferSize];
  if (s.is_int() || !hll::LooksValid(s.View(scratch))) {
    ctx.reply.Error(kErrNotHll);
    return false;
  }
  return true;
}

// The HLL at `key`: false after replying; *e null for a missing key.
bool LookupHll(CommandContext& ctx, std::string_view key, Db::Entry** e, bool write) {
  *e = write ? LookupWrite(ctx, key) : LookupRead(ctx, key);
  return *e == nullptr || CheckHll(ctx, *e);
}

std::string_view BytesOf(const Db::Entry* e) {
  char scratch[CompactString::kIntBufferSize];  // (never used: an HLL is not an integer)
  return e->value.str().View(scratch);
}

// PFADD key [element ...]
void PfaddCommand(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupHll(ctx, key, &e, /*write=*/true)) return;
  int updated = 0;
  if (e == nullptr) {
    e = InsertKey(ctx, ctx.DbOf(key), key, Value(CompactString(hll::NewSparse())));
    updated++;
  }
  ValueBuffer b(e->value.mutable_str());
  const size_t sparse_max = SparseMax(ctx);
  for (size_t j = 2; j < ctx.args.size(); j++) {
    const int r = hll::Add(b, ctx.args[j], sparse_max);
    if (r < 0) {
      ctx.reply.Error(kErrCorrupt);
      return;
    }
    updated += r;
  }
  if (updated > 0) {
    hll::InvalidateCache(b.data());
    SignalModifiedKey(ctx, key);
    Notify(ctx, notify::kString, "pfadd", key);
  }
  ctx.reply.Integer(updated > 0 ? 1 : 0);
}

// PFCOUNT key [key ...]
void PfcountCommand(CommandContext& ctx) {
  if (ctx.args.size() > 2) {
    // The union's cardinality: the registers' maxima, one byte each (16 KB
    // on the stack, as Redis).
    uint8_t max[hll::kRegisters] = {};
    for (size_t j = 1; j < ctx.args.size(); j++) {
      Db::Entry* e;
      if (!LookupHll(ctx, ctx.args[j], &e, false)) return;
      if (e == nullptr) continue;
      if (!hll::MergeInto(max, BytesOf(e))) {
        ctx.reply.Error(kErrCorrupt);
        return;
      }
    }
    ctx.reply.Integer(static_cast<int64_t>(hll::CountRaw(max)));
    return;
  }
  Db::Entry* e;
  if (!LookupHll(ctx, ctx.args[1], &e, false)) return;
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  uint64_t card;
  const std::string_view bytes = BytesOf(e);
  if (!hll::CachedCardinality(reinterpret_cast<const uint8_t*>(bytes.data()), &card)) {
    bool invalid = false;
    card = hll::Count(bytes, &invalid);
    if (invalid) {
      ctx.reply.Error(kErrCorrupt);
      return;
    }
    // The cache is part of the string: a change Redis propagates (and
    // counts), and a watcher of the key sees.
    CompactString& s = e->value.mutable_str();
    hll::SetCachedCardinality(reinterpret_cast<uint8_t*>(s.MutableBytes(s.size())), card);
    SignalModifiedKey(ctx, ctx.args[1]);
  }
  ctx.reply.Integer(static_cast<int64_t>(card));
}

// PFMERGE destkey [sourcekey ...]
void PfmergeCommand(CommandContext& ctx) {
  uint8_t max[hll::kRegisters] = {};
  bool dense = false;
  // The destination counts as a source (Redis reads argv[1..]).
  for (size_t j = 1; j < ctx.args.size(); j++) {
    Db::Entry* e;
    if (!LookupHll(ctx, ctx.args[j], &e, false)) return;
    if (e == nullptr) continue;
    const std::string_view bytes = BytesOf(e);
    if (hll::Encoding(reinterpret_cast<const uint8_t*>(bytes.data())) == hll::kDense) dense = true;
    if (!hll::MergeInto(max, bytes)) {
      ctx.reply.Error(kErrCorrupt);
      return;
    }
  }
  const std::string_view dest = ctx.args[1];
  Db::Entry* d = LookupWrite(ctx, dest);
  if (d == nullptr) d = InsertKey(ctx, ctx.DbOf(dest), dest, Value(CompactString(hll::NewSparse())));
  ValueBuffer b(d->value.mutable_str());
  if (dense && !hll::SparseToDense(b)) {
    ctx.reply.Error(kErrCorrupt);
    return;
  }
  const size_t sparse_max = SparseMax(ctx);
  for (uint32_t i = 0; i < hll::kRegisters; i++)
    if (max[i] != 0) hll::Set(b, i, max[i], sparse_max);
  hll::InvalidateCache(b.data());
  SignalModifiedKey(ctx, dest);
  Notify(ctx, notify::kString, "pfadd", dest);  // (Redis: a merge is a mass PFADD)
  ctx.reply.Ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
void PfdebugCommand(CommandContext& ctx) {
  const std::string_view sub = ctx.args[1], key = ctx.args[2];
  Db::Entry* e = LookupWrite(ctx, key);
  if (e == nullptr) {
    ctx.reply.Error("ERR The specified key does not exist");
    return;
  }
  if (!CheckHll(ctx, e)) return;
  ValueBuffer b(e->value.mutable_str());
  const bool sparse = hll::Encoding(b.data()) == hll::kSparse;
  if (EqualsIgnoreCase(sub, "getreg") || EqualsIgnoreCase(sub, "todense")) {
    if (sparse) {
      if (!hll::SparseToDense(b)) {
        ctx.reply.Error(kErrCorrupt);
        return;
      }
      SignalModifiedKey(ctx, key);  // an encoding change: propagated, as Redis
    }
    if (EqualsIgnoreCase(sub, "todense")) {
      ctx.reply.Integer(sparse ? 1 : 0);
      return;
    }
    ctx.reply.ArrayHeader(hll::kRegisters);
    for (uint32_t i = 0; i < hll::kRegisters; i++) ctx.reply.Integer(hll::DenseGet(b.data() + hll::kHeaderSize, i));
  } else if (EqualsIgnoreCase(sub, "decode")) {
    if (!sparse) {
      ctx.reply.Error("ERR HLL encoding is not sparse");
      return;
    }
    ctx.reply.Bulk(hll::DecodeSparse(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())));
  } else if (EqualsIgnoreCase(sub, "encoding")) {
    ctx.reply.SimpleString(sparse ? "sparse" : "dense");
  } else {
    ctx.reply.Error("ERR Unknown PFDEBUG subcommand '" + AsCString(sub) + "'");
  }
}

// PFSELFTEST: Redis's self-test of the registers and the estimator.
void PfselftestCommand(CommandContext& ctx) {
  std::mt19937_64 rng(std::random_device{}());
  // 1: registers keep their values and leave their neighbours alone.
  std::vector<uint8_t> regs(hll::kDenseSize - hll::kHeaderSize + 1), model(hll::kRegisters);
  for (int round = 0; round < 1000; round++) {
    for (uint32_t i = 0; i < hll::kRegisters; i++) {
      model[i] = static_cast<uint8_t>(rng() & 63);
      hll::DenseSet(regs.data(), i, model[i]);
    }
    for (uint32_t i = 0; i < hll::kRegisters; i++) {
      const uint8_t v = hll::DenseGet(regs.data(), i);
      if (v != model[i]) {
        ctx.reply.Error("TESTFAILED Register " + std::to_string(i) + " should be " + std::to_string(model[i]) +
                        " but is " + std::to_string(v));
        return;
      }
    }
  }
  // 2: the estimate stays within the standard error, dense and sparse
  // agreeing, sparse used while small.
  hll::StringBuffer dense(hll::NewSparse()), sparse(hll::NewSparse());
  hll::SparseToDense(dense);
  const size_t sparse_max = SparseMax(ctx);
  const double relerr = 1.04 / std::sqrt(double{hll::kRegisters});
  const uint64_t seed = rng();
  int64_t checkpoint = 1;
  for (int64_t j = 1; j <= 10000000; j++) {
    const uint64_t ele = static_cast<uint64_t>(j) ^ seed;
    const std::string_view bytes(reinterpret_cast<const char*>(&ele), sizeof(ele));
    hll::Add(dense, bytes, sparse_max);
    hll::Add(sparse, bytes, sparse_max);
    if (j != checkpoint) continue;
    if (static_cast<uint64_t>(j) < sparse_max / 2 && hll::Encoding(sparse.data()) != hll::kSparse) {
      ctx.reply.Error("TESTFAILED sparse encoding not used");
      return;
    }
    const std::string_view d(reinterpret_cast<const char*>(dense.data()), dense.size());
    const std::string_view s(reinterpret_cast<const char*>(sparse.data()), sparse.size());
    const uint64_t count = hll::Count(d, nullptr);
    if (count != hll::Count(s, nullptr)) {
      ctx.reply.Error("TESTFAILED dense/sparse disagree");
      return;
    }
    const int64_t abserr = std::llabs(checkpoint - static_cast<int64_t>(count));
    const int64_t maxerr = j == 10 ? 1 : static_cast<int64_t>(std::ceil(relerr * 6 * double(checkpoint)));
    if (abserr > maxerr) {
      ctx.reply.Error("TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
                      " abserr:" + std::to_string(abserr));
      return;
    }
    checkpoint *= 10;
  }
  ctx.reply.Ok();
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable& t) {
  CommandFamily f(t, kAclHyperLogLog, "hyperloglog");
  f.Add({.name = "pfadd", .arity = -2, .flags = kCmdWrite | kCmdDenyOom | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", .since = "2.8.9",
         .complexity = "O(1) to add every element.", .handler = PfaddCommand});
  f.Add({.name = "pfcount", .arity = -2, .flags = kCmdReadonly | kCmdMayReplicate, .first_key = 1, .last_key = -1,
         .summary = "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
         .since = "2.8.9",
         .complexity = "O(1) with a very small average constant time when called with a single key. O(N) with N being "
                       "the number of keys, and much bigger constant times, when called with multiple keys.",
         .handler = PfcountCommand});
  f.Add({.name = "pfmerge", .arity = -2, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1, .last_key = -1,
         .summary = "Merges one or more HyperLogLog values into a single key.", .since = "2.8.9",
         .complexity = "O(N) to merge N HyperLogLogs, but with high constant times.", .handler = PfmergeCommand});
  f.Add({.name = "pfdebug", .arity = 3, .flags = kCmdWrite | kCmdDenyOom | kCmdAdmin, .first_key = 2, .last_key = 2,
         .summary = "Internal commands for debugging HyperLogLog values.", .since = "2.8.9", .complexity = "N/A",
         .handler = PfdebugCommand});
  f.Add({.name = "pfselftest", .arity = 1, .flags = kCmdAdmin,
         .summary = "An internal command for testing HyperLogLog values.", .since = "2.8.9", .complexity = "N/A",
         .handler = PfselftestCommand});
}

}  // namespace peregrine
