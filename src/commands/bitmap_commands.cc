// Bitmaps: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO,
// bit operations on string values (core/bits.h) with Redis 7.2's ranges,
// limits and error texts (bitops.c). A bitmap is a string: GET, SET, DUMP
// and RDB see the same bytes as Redis's.
#include <cstring>
#include <string>
#include <vector>

#include "commands/common.h"
#include "core/bits.h"
#include "core/numbers.h"

namespace peregrine {
namespace {

constexpr std::string_view kErrBitOffset = "ERR bit offset is not an integer or out of range";
constexpr std::string_view kErrBitValue = "ERR bit is not an integer or out of range";

// Redis's getBitOffsetFromArgument: a bit offset within proto-max-bulk-len
// bytes; with `width` (BITFIELD), "#n" is the n-th field of that width.
bool ParseBitOffset(CommandContext& ctx, std::string_view arg, int width, uint64_t* out) {
  const bool fields = width > 0 && !arg.empty() && arg[0] == '#';
  int64_t v;
  if (!ParseInt64(fields ? arg.substr(1) : arg, &v) || (fields && __builtin_mul_overflow(v, width, &v)) || v < 0 ||
      (static_cast<uint64_t>(v) >> 3) >= ctx.server.config().proto_max_bulk_len) {
    ctx.reply.Error(kErrBitOffset);
    return false;
  }
  *out = static_cast<uint64_t>(v);
  return true;
}

// A string value's bytes (an integer's decimal form in `scratch`).
struct Bytes {
  char scratch[CompactString::kIntBufferSize];
  std::string_view view;
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(view.data()); }
  uint64_t size() const { return view.size(); }
};

// The string at args[1] for a read into *b; a missing key is answered
// `missing` (a run of zero bits to the command), a key of another type
// WRONGTYPE: false then.
bool ReadBits(CommandContext& ctx, Bytes* b, int64_t missing) {
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kString, &e)) return false;
  if (e == nullptr) {
    ctx.reply.Integer(missing);
    return false;
  }
  b->view = e->value.str().View(b->scratch);
  return true;
}

// The string at `key` for a bit write reaching bit `max_bit` (Redis's
// lookupStringForBitCommand): created, or zero-padded to hold it. Null
// after replying WRONGTYPE. *grew: created, or longer than it was.
CompactString* StringForBits(CommandContext& ctx, std::string_view key, uint64_t max_bit, uint8_t** bytes,
                             bool* grew) {
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kString, &e, /*write=*/true)) return nullptr;
  const size_t need = static_cast<size_t>(max_bit >> 3) + 1;
  if (e == nullptr) {
    e = InsertKey(ctx, ctx.DbOf(key), key, Value(CompactString()));
    *grew = true;
  } else {
    *grew = e->value.str().size() < need;
  }
  CompactString& s = e->value.mutable_str();
  *bytes = reinterpret_cast<uint8_t*>(s.MutableBytes(need));
  return &s;
}

// SETBIT key offset value
void SetbitCommand(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffset(ctx, ctx.args[2], 0, &offset)) return;
  int64_t on;
  if (!ParseIntArg(ctx, ctx.args[3], &on, kErrBitValue)) return;
  if (on & ~int64_t{1}) {
    ctx.reply.Error(kErrBitValue);
    return;
  }
  uint8_t* p;
  bool grew;
  if (StringForBits(ctx, ctx.args[1], offset, &p, &grew) == nullptr) return;
  const bool old = bits::Get(p, offset);
  if (grew || old != (on == 1)) {
    bits::Set(p, offset, on == 1);
    SignalModifiedKey(ctx, ctx.args[1]);
    Notify(ctx, notify::kString, "setbit", ctx.args[1]);
  }
  ctx.reply.Integer(old ? 1 : 0);
}

// GETBIT key offset
void GetbitCommand(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffset(ctx, ctx.args[2], 0, &offset)) return;
  Bytes b;
  if (!ReadBits(ctx, &b, 0)) return;
  ctx.reply.Integer((offset >> 3) < b.size() && bits::Get(b.data(), offset) ? 1 : 0);
}

// BITCOUNT / BITPOS's unit at args[at], if given: BIT, or BYTE (the
// default). False after replying a syntax error.
bool ParseBitUnit(CommandContext& ctx, size_t at, bool* isbit) {
  *isbit = false;
  if (at >= ctx.args.size() || EqualsIgnoreCase(ctx.args[at], "byte")) return true;
  if (EqualsIgnoreCase(ctx.args[at], "bit")) {
    *isbit = true;
    return true;
  }
  ctx.reply.Error(kErrSyntax);
  return false;
}

// BITCOUNT / BITPOS's range: [start, end] in bytes or bits, negative from
// the end, clamped to a string of `len` bytes (Redis's rules), as bits
// [*first, *last]. False if the range is empty.
bool BitRange(int64_t start, int64_t end, bool isbit, uint64_t len, uint64_t* first, uint64_t* last) {
  const int64_t total = static_cast<int64_t>(isbit ? len * 8 : len);
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  if (start > end) return false;
  *first = isbit ? static_cast<uint64_t>(start) : static_cast<uint64_t>(start) * 8;
  *last = isbit ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
  return true;
}

// BITCOUNT key [start end [BYTE|BIT]]
void BitcountCommand(CommandContext& ctx) {
  // As Redis: the key first (a missing one counts 0 whatever follows).
  Bytes b;
  if (!ReadBits(ctx, &b, 0)) return;
  const size_t argc = ctx.args.size();
  uint64_t first = 0, last = 0;
  if (argc == 4 || argc == 5) {
    int64_t start, end;
    if (!ParseIntArg(ctx, ctx.args[2], &start) || !ParseIntArg(ctx, ctx.args[3], &end)) return;
    if (start < 0 && end < 0 && start > end) {
      ctx.reply.Integer(0);
      return;
    }
    bool isbit;
    if (!ParseBitUnit(ctx, 4, &isbit)) return;
    if (!BitRange(start, end, isbit, b.size(), &first, &last)) {
      ctx.reply.Integer(0);
      return;
    }
  } else if (argc == 2) {
    if (b.size() == 0) {
      ctx.reply.Integer(0);
      return;
    }
    last = b.size() * 8 - 1;
  } else {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(bits::Count(b.data(), first, last)));
}

// BITPOS key bit [start [end [BYTE|BIT]]]
void BitposCommand(CommandContext& ctx) {
  int64_t bit;
  if (!ParseIntArg(ctx, ctx.args[2], &bit)) return;
  if (bit != 0 && bit != 1) {
    ctx.reply.Error("ERR The bit argument must be 1 or 0.");
    return;
  }
  // A missing key is an endless run of zeros.
  Bytes b;
  if (!ReadBits(ctx, &b, bit ? -1 : 0)) return;
  const size_t argc = ctx.args.size();
  uint64_t first = 0, last = 0;
  bool end_given = false;
  if (argc >= 4 && argc <= 6) {
    int64_t start, end = 0;
    if (!ParseIntArg(ctx, ctx.args[3], &start)) return;
    // (The unit is looked at before the end, as Redis does.)
    bool isbit;
    if (!ParseBitUnit(ctx, 5, &isbit)) return;
    if (argc >= 5) {
      if (!ParseIntArg(ctx, ctx.args[4], &end)) return;
      end_given = true;
    } else {
      end = static_cast<int64_t>(b.size()) - 1;
    }
    if (!BitRange(start, end, isbit, b.size(), &first, &last)) {
      ctx.reply.Integer(-1);  // an empty range holds neither bit
      return;
    }
  } else if (argc == 3) {
    if (b.size() == 0) {
      ctx.reply.Integer(-1);
      return;
    }
    last = b.size() * 8 - 1;
  } else {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  const int64_t pos = bits::Find(b.data(), first, last, bit == 1);
  if (pos >= 0 || bit == 1 || end_given) {
    ctx.reply.Integer(pos);
    return;
  }
  // Looking for a clear bit with no end given: the string reads as padded
  // with zeros, so the first one is just past its last byte.
  ctx.reply.Integer(static_cast<int64_t>((last / 8 + 1) * 8));
}

// BITOP AND|OR|XOR|NOT destkey key [key ...] (the keys may live on
// different shards: the command holds them all).
void BitopCommand(CommandContext& ctx) {
  const std::string_view name = ctx.args[1];
  bits::Op op;
  if (EqualsIgnoreCase(name, "and")) op = bits::Op::kAnd;
  else if (EqualsIgnoreCase(name, "or")) op = bits::Op::kOr;
  else if (EqualsIgnoreCase(name, "xor")) op = bits::Op::kXor;
  else if (EqualsIgnoreCase(name, "not")) op = bits::Op::kNot;
  else {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  if (op == bits::Op::kNot && ctx.args.size() != 4) {
    ctx.reply.Error("ERR BITOP NOT must be called with a single source key.");
    return;
  }
  const auto keys = ctx.args.subspan(3);
  std::vector<Bytes> sources(keys.size());
  std::vector<std::string_view> views(keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    Db::Entry* e;
    if (!LookupTyped(ctx, keys[i], ValueType::kString, &e)) return;
    if (e != nullptr) sources[i].view = e->value.str().View(sources[i].scratch);
    views[i] = sources[i].view;
  }
  std::string result = bits::Combine(op, views);
  const std::string_view dest = ctx.args[2];
  const int64_t len = static_cast<int64_t>(result.size());
  Db::Entry* d = LookupWrite(ctx, dest);
  if (len > 0) {
    // A "raw" string, as Redis's (OBJECT ENCODING says so).
    CompactString value;
    std::memcpy(value.MutableBytes(result.size()), result.data(), result.size());
    // As SET without options: whatever was there goes, and its deadline.
    if (d == nullptr) {
      InsertKey(ctx, ctx.DbOf(dest), dest, Value(std::move(value)));
    } else {
      d->value = Value(std::move(value));
      ctx.DbOf(dest).SetExpire(d, Db::kNoExpire);
    }
    SignalModifiedKey(ctx, dest);
    Notify(ctx, notify::kString, "set", dest);
  } else if (d != nullptr) {
    ctx.DbOf(dest).Erase(dest);
    SignalModifiedKey(ctx, dest);
    Notify(ctx, notify::kGeneric, "del", dest);
  }
  ctx.reply.Integer(len);
}

// BITFIELD's operations, parsed before any runs (Redis's bitfieldGeneric).
struct FieldOp {
  enum Kind : uint8_t { kGet, kSet, kIncrBy } kind;
  bits::Overflow overflow;
  bool sign;
  int width;
  uint64_t offset;
  int64_t value;  // SET's value or INCRBY's increment
};

// "i<bits>" (1..64) or "u<bits>" (1..63).
bool ParseFieldType(CommandContext& ctx, std::string_view arg, bool* sign, int* width) {
  const std::string_view a = UpToNul(arg);
  int64_t w;
  if (a.empty() || (a[0] != 'i' && a[0] != 'u') || !ParseInt64(a.substr(1), &w) || w < 1 ||
      w > (a[0] == 'i' ? 64 : 63)) {
    ctx.reply.Error("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    return false;
  }
  *sign = a[0] == 'i';
  *width = static_cast<int>(w);
  return true;
}

void BitfieldGeneric(CommandContext& ctx, bool ro_command) {
  std::vector<FieldOp> ops;
  bits::Overflow overflow = bits::Overflow::kWrap;
  bool readonly = true;
  uint64_t highest = 0;  // the last bit a write reaches
  const size_t argc = ctx.args.size();
  for (size_t j = 2; j < argc; j++) {
    const size_t rem = argc - j - 1;
    const std::string_view sub = ctx.args[j];
    FieldOp op{};
    if (EqualsIgnoreCase(sub, "get") && rem >= 2) {
      op.kind = FieldOp::kGet;
    } else if (EqualsIgnoreCase(sub, "set") && rem >= 3) {
      op.kind = FieldOp::kSet;
    } else if (EqualsIgnoreCase(sub, "incrby") && rem >= 3) {
      op.kind = FieldOp::kIncrBy;
    } else if (EqualsIgnoreCase(sub, "overflow") && rem >= 1) {
      const std::string_view t = ctx.args[++j];
      if (EqualsIgnoreCase(t, "wrap")) overflow = bits::Overflow::kWrap;
      else if (EqualsIgnoreCase(t, "sat")) overflow = bits::Overflow::kSat;
      else if (EqualsIgnoreCase(t, "fail")) overflow = bits::Overflow::kFail;
      else {
        ctx.reply.Error("ERR Invalid OVERFLOW type specified");
        return;
      }
      continue;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
    if (!ParseFieldType(ctx, ctx.args[j + 1], &op.sign, &op.width)) return;
    if (!ParseBitOffset(ctx, ctx.args[j + 2], op.width, &op.offset)) return;
    if (op.kind != FieldOp::kGet) {
      readonly = false;
      highest = std::max(highest, op.offset + static_cast<uint64_t>(op.width) - 1);
      if (!ParseIntArg(ctx, ctx.args[j + 3], &op.value)) return;
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.kind == FieldOp::kGet ? 2 : 3;
  }
  Bytes b;
  uint8_t* p = nullptr;  // the string's bytes, when the command writes
  CompactString* s = nullptr;
  bool grew = false;
  if (readonly) {
    Db::Entry* e;
    if (!LookupTyped(ctx, ctx.args[1], ValueType::kString, &e)) return;
    if (e != nullptr) b.view = e->value.str().View(b.scratch);
  } else {
    if (ro_command) {
      ctx.reply.Error("ERR BITFIELD_RO only supports the GET subcommand");
      return;
    }
    s = StringForBits(ctx, ctx.args[1], highest, &p, &grew);
    if (s == nullptr) return;
  }
  ctx.reply.ArrayHeader(ops.size());
  bool changed = false;
  for (const FieldOp& op : ops) {
    if (op.kind == FieldOp::kGet) {
      // Read through a zero-padded copy of the nine bytes a field can
      // span, so that a field past the end reads as zeros.
      // (With writes in the command, the string as they left it.)
      uint8_t buf[9] = {};
      const uint64_t byte = op.offset >> 3;
      const uint8_t* src = p != nullptr ? p : b.data();
      const uint64_t size = s != nullptr ? s->size() : b.size();
      for (uint64_t i = 0; i < 9 && byte + i < size; i++) buf[i] = src[byte + i];
      const uint64_t at = op.offset - byte * 8;
      if (op.sign)
        ctx.reply.Integer(bits::GetSigned(buf, at, op.width));
      else
        ctx.reply.Integer(static_cast<int64_t>(bits::GetUnsigned(buf, at, op.width)));
      continue;
    }
    bool fail = false;
    if (op.sign) {
      const int64_t old = bits::GetSigned(p, op.offset, op.width);
      int64_t wrapped = 0, next, ret;
      int of;
      if (op.kind == FieldOp::kIncrBy) {
        of = bits::CheckSigned(old, op.value, op.width, op.overflow, &wrapped);
        next = of ? wrapped : static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(op.value));
        ret = next;
      } else {
        next = op.value;
        of = bits::CheckSigned(next, 0, op.width, op.overflow, &wrapped);
        if (of) next = wrapped;
        ret = old;
      }
      fail = of && op.overflow == bits::Overflow::kFail;
      if (!fail) {
        ctx.reply.Integer(ret);
        bits::SetUnsigned(p, op.offset, op.width, static_cast<uint64_t>(next));
        changed = changed || grew || old != next;
      }
    } else {
      const uint64_t old = bits::GetUnsigned(p, op.offset, op.width);
      uint64_t wrapped = 0, next, ret;
      int of;
      if (op.kind == FieldOp::kIncrBy) {
        next = old + static_cast<uint64_t>(op.value);
        of = bits::CheckUnsigned(old, op.value, op.width, op.overflow, &wrapped);
        if (of) next = wrapped;
        ret = next;
      } else {
        next = static_cast<uint64_t>(op.value);
        of = bits::CheckUnsigned(next, 0, op.width, op.overflow, &wrapped);
        if (of) next = wrapped;
        ret = old;
      }
      fail = of && op.overflow == bits::Overflow::kFail;
      if (!fail) {
        ctx.reply.Integer(static_cast<int64_t>(ret));
        bits::SetUnsigned(p, op.offset, op.width, next);
        changed = changed || grew || old != next;
      }
    }
    if (fail) ctx.reply.Null();
  }
  if (changed) {
    SignalModifiedKey(ctx, ctx.args[1]);
    Notify(ctx, notify::kString, "setbit", ctx.args[1]);
  }
}

void BitfieldCommand(CommandContext& ctx) { BitfieldGeneric(ctx, false); }
void BitfieldRoCommand(CommandContext& ctx) { BitfieldGeneric(ctx, true); }

}  // namespace

void RegisterBitmapCommands(CommandTable& t) {
  CommandFamily f(t, kAclBitmap, "bitmap");
  const uint32_t write = kCmdWrite | kCmdDenyOom;
  f.Add({.name = "setbit", .arity = 4, .flags = write, .first_key = 1, .last_key = 1,
         .summary = "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.",
         .since = "2.2.0", .complexity = "O(1)", .handler = SetbitCommand});
  f.Add({.name = "getbit", .arity = 3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns a bit value by offset.", .since = "2.2.0", .complexity = "O(1)",
         .handler = GetbitCommand});
  f.Add({.name = "bitcount", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Counts the number of set bits (population counting) in a string.", .since = "2.6.0",
         .complexity = "O(N)", .handler = BitcountCommand});
  f.Add({.name = "bitpos", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Finds the first set (1) or clear (0) bit in a string.", .since = "2.8.7", .complexity = "O(N)",
         .handler = BitposCommand});
  f.Add({.name = "bitop", .arity = -4, .flags = write, .first_key = 2, .last_key = -1,
         .summary = "Performs bitwise operations on multiple strings, and stores the result.", .since = "2.6.0",
         .complexity = "O(N)", .handler = BitopCommand});
  f.Add({.name = "bitfield", .arity = -2, .flags = write, .first_key = 1, .last_key = 1,
         .summary = "Performs arbitrary bitfield integer operations on strings.", .since = "3.2.0",
         .complexity = "O(1) for each subcommand specified", .handler = BitfieldCommand});
  f.Add({.name = "bitfield_ro", .arity = -2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Performs arbitrary read-only bitfield integer operations on strings.", .since = "6.0.0",
         .complexity = "O(1) for each subcommand specified", .handler = BitfieldRoCommand});
}

}  // namespace peregrine
