// RDB serialization: CRC-64's reference value, the primitives' encodings,
// every value type and encoding round-tripped through a DUMP payload and
// compared with a plain model, the old packed forms (ziplist, zipmap,
// intset, listpack) built by hand and read back, and corrupt or truncated
// input refused without harm.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/numbers.h"
#include "core/stream_groups.h"
#include "persist/crc64.h"
#include "persist/rdb_blobs.h"
#include "persist/rdb_format.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_value.h"
#include "persist/rdb_writer.h"

namespace peregrine {
namespace {

TEST(Crc64, RedisReferenceValue) {
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
  // Pieces chain to the same result as the whole, whatever the split.
  const std::string text = "This is a test of the emergency broadcast system.";
  for (size_t cut = 0; cut <= text.size(); cut++)
    EXPECT_EQ(Crc64(Crc64(0, text.substr(0, cut)), text.substr(cut)), Crc64(0, text));
}

TEST(RdbPrimitives, LengthsRoundTrip) {
  const uint64_t values[] = {0, 1, 63, 64, 16383, 16384, 65535, UINT32_MAX, uint64_t{UINT32_MAX} + 1, UINT64_MAX - 1};
  RdbWriter w;
  for (uint64_t v : values) w.Len(v);
  const std::string bytes = w.buffer();
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0);
  RdbReader r(bytes);
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(r.Len(&got));
    EXPECT_EQ(got, v);
  }
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(RdbPrimitives, StringsPickRedisEncodings) {
  auto encode = [](std::string_view s, bool compress = true) {
    RdbWriter w(compress);
    w.String(s);
    return w.buffer();
  };
  EXPECT_EQ(encode("12"), std::string("\xC0\x0C", 2));
  EXPECT_EQ(encode("-300"), std::string("\xC1\xD4\xFE", 3));
  EXPECT_EQ(encode("70000"), std::string("\xC2\x70\x11\x01\x00", 5));
  // Not canonical integers, or too wide: plain strings.
  EXPECT_EQ(encode("012"), std::string("\x03" "012", 4));
  EXPECT_EQ(encode("4294967296"), std::string("\x0A" "4294967296", 11));
  const std::string run(100, 'a');
  EXPECT_EQ(static_cast<uint8_t>(encode(run)[0]), 0xC3);
  EXPECT_EQ(encode(run, false), std::string("\x40\x64", 2) + run);

  std::mt19937_64 rng(7);
  std::vector<std::string> samples = {"", "0", "-0", "2147483647", "-2147483648", "2147483648", run,
                                      std::string(70000, 'x')};
  std::string noise(5000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  samples.push_back(noise);
  RdbWriter w;
  for (const auto& s : samples) w.String(s);
  const std::string bytes = w.buffer();
  RdbReader r(bytes);
  for (const auto& s : samples) {
    std::string got;
    ASSERT_TRUE(r.String(&got)) << r.error();
    EXPECT_EQ(got, s);
  }
}

// --- Values through DUMP payloads ---

ContainerLimits DefaultLimits() { return ContainerLimits{}; }

std::string Dump(const Value& v) {
  RdbWriter w;
  w.Byte(RdbWriter::TypeOf(v));
  w.Object(v);
  return w.DumpPayload(RdbWriter::VersionFor(v));
}

// Loads a payload's value (the footer is checked by the caller of DUMP's
// RESTORE; here it is cut off).
RdbLoadStatus Load(const std::string& payload, Value* out, std::string* err = nullptr,
                   const ContainerLimits& limits = DefaultLimits(), int64_t now_ms = 1000) {
  RdbReader r(std::string_view(payload).substr(1, payload.size() - 11));
  const RdbLoadStatus st = LoadRdbObject(r, static_cast<uint8_t>(payload[0]), limits, now_ms, out);
  if (err) *err = r.error();
  if (st == RdbLoadStatus::kOk && r.remaining() != 0) {
    if (err) *err = "trailing bytes";
    return RdbLoadStatus::kError;
  }
  return st;
}

std::vector<std::string> ListItems(const ListObject& l) {
  std::vector<std::string> out;
  char scratch[32];
  for (ListObject::Pos p = l.First(); !l.AtEnd(p); p = l.Next(p)) out.emplace_back(l.View(p, scratch));
  return out;
}
std::set<std::string> SetItems(const SetObject& s) {
  std::set<std::string> out;
  s.ForEach([&](std::string_view m) { out.emplace(m); });
  return out;
}
std::map<std::string, double> ZSetItems(const ZSetObject& z) {
  std::map<std::string, double> out;
  z.ForEach([&](std::string_view m, double s) { out.emplace(m, s); });
  return out;
}
std::map<std::string, std::string> HashItems(const HashObject& h) {
  std::map<std::string, std::string> out;
  h.ForEach([&](std::string_view f, std::string_view v) { out.emplace(f, v); });
  return out;
}

TEST(RdbValues, StringsRoundTrip) {
  for (std::string s : {std::string(""), std::string("7"), std::string("-9223372036854775808"), std::string("hello"),
                        std::string(15, 'q'), std::string(1000, 'z')}) {
    Value v = Value::String(s), got;
    ASSERT_EQ(Load(Dump(v), &got), RdbLoadStatus::kOk);
    char scratch[32];
    EXPECT_EQ(got.str().View(scratch), s);
    EXPECT_EQ(got.EncodingName(), v.EncodingName());
  }
}

TEST(RdbValues, ListsRoundTripInEveryEncoding) {
  for (size_t n : {1, 5, 200, 5000}) {
    ListLimits limits;
    ListObject l;
    std::vector<std::string> model;
    for (size_t i = 0; i < n; i++) {
      std::string item = i % 3 == 0 ? std::to_string(i * 7919) : "item-" + std::to_string(i) + std::string(i % 50, 'x');
      l.Push(ListObject::End::kTail, item, limits);
      model.push_back(item);
    }
    Value v(std::move(l)), got;
    ASSERT_EQ(Load(Dump(v), &got), RdbLoadStatus::kOk);
    ASSERT_TRUE(got.is_list());
    EXPECT_EQ(ListItems(got.list()), model);
    EXPECT_EQ(got.EncodingName(), v.EncodingName());
  }
}

TEST(RdbValues, SetsRoundTripInEveryEncoding) {
  struct Case {
    size_t n;
    bool ints;
    const char* encoding;
  };
  for (const Case& c : {Case{10, true, "intset"}, Case{600, true, "hashtable"}, Case{10, false, "listpack"},
                        Case{1000, false, "hashtable"}, Case{300, true, "intset"}}) {
    SetLimits limits;
    std::set<std::string> model;
    std::optional<SetObject> s;
    for (size_t i = 0; i < c.n; i++) {
      std::string m = c.ints ? std::to_string(static_cast<int64_t>(i * 1000003) - 5000) : "m" + std::to_string(i);
      if (i == 7 && c.ints) m = "-9223372036854775808";
      if (!s) s.emplace(m, c.n, limits);
      s->Add(m, limits);
      model.insert(m);
    }
    Value v(std::move(*s)), got;
    EXPECT_EQ(v.EncodingName(), c.encoding);
    ASSERT_EQ(Load(Dump(v), &got), RdbLoadStatus::kOk);
    EXPECT_EQ(SetItems(got.set()), model);
    EXPECT_EQ(got.EncodingName(), c.encoding);
  }
}

TEST(RdbValues, SortedSetsRoundTripWithEveryScore) {
  for (size_t n : {3, 100, 1000}) {
    ZSetLimits limits;
    ZSetObject z = ZSetObject::Create(n, 4, limits);
    std::map<std::string, double> model;
    for (size_t i = 0; i < n; i++) {
      double score = static_cast<double>(i) * 1.5 - 20.25;
      if (i == 0) score = -INFINITY;
      if (i == 1) score = INFINITY;
      if (i == 2) score = 0.1;
      const std::string m = i % 4 == 0 ? std::to_string(i) : "member:" + std::to_string(i);
      double ns;
      z.Add(score, m, 0, limits, &ns);
      model[m] = score;
    }
    Value v(std::move(z)), got;
    ASSERT_EQ(Load(Dump(v), &got), RdbLoadStatus::kOk);
    EXPECT_EQ(ZSetItems(got.zset()), model);
    EXPECT_EQ(got.EncodingName(), v.EncodingName());
  }
}

TEST(RdbValues, HashesRoundTripWithFieldDeadlines) {
  for (size_t n : {4, 1000}) {
    HashLimits limits;
    HashObject h;
    std::map<std::string, std::string> model;
    for (size_t i = 0; i < n; i++) {
      const std::string f = "f" + std::to_string(i), val = i % 2 ? std::to_string(i) : "value " + std::to_string(i);
      h.Set(f, val, limits);
      model[f] = val;
    }
    {
      Value v(h.Clone()), got;
      EXPECT_EQ(RdbWriter::TypeOf(v), rdb::kTypeHash);
      ASSERT_EQ(Load(Dump(v), &got), RdbLoadStatus::kOk);
      EXPECT_EQ(HashItems(got.hash()), model);
      EXPECT_EQ(got.EncodingName(), v.EncodingName());
    }
    // Deadlines: one in the future survives, one already past is dropped.
    h.SetDeadline("f1", 5000);
    h.SetDeadline("f2", 900);
    h.MarkFieldExpiry();
    Value v(std::move(h)), got;
    EXPECT_EQ(RdbWriter::TypeOf(v), rdb::kTypeHashMetadata);
    EXPECT_EQ(RdbWriter::VersionFor(v), rdb::kVersionFieldTtl);
    ASSERT_EQ(Load(Dump(v), &got, nullptr, DefaultLimits(), /*now_ms=*/1000), RdbLoadStatus::kOk);
    model.erase("f2");
    EXPECT_EQ(HashItems(got.hash()), model);
    int64_t ms;
    ASSERT_TRUE(got.hash().GetDeadline("f1", &ms));
    EXPECT_EQ(ms, 5000);
    ASSERT_TRUE(got.hash().GetDeadline("f3", &ms));
    EXPECT_EQ(ms, HashObject::kNoDeadline);
  }
}

// --- The packed forms of older Redis versions, built here by hand ---

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string U16(uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), 2); }

// A ziplist of strings and small integers (Redis 3.2 - 6.2 wrote these).
std::string Ziplist(const std::vector<std::string>& items) {
  std::string body;
  size_t prev = 0, last = 10;
  for (const std::string& s : items) {
    std::string e;
    if (prev < 254)
      e.push_back(static_cast<char>(prev));
    else
      e += "\xFE" + U32(static_cast<uint32_t>(prev));
    int64_t v;
    if (ParseInt64(s, &v) && v >= 0 && v <= 12) {
      e.push_back(static_cast<char>(0xF1 + v));
    } else if (ParseInt64(s, &v) && v >= INT16_MIN && v <= INT16_MAX) {
      e.push_back(static_cast<char>(0xC0));
      e += U16(static_cast<uint16_t>(v));
    } else if (s.size() < 64) {
      e.push_back(static_cast<char>(s.size()));
      e += s;
    } else {
      e.push_back(static_cast<char>(0x40 | (s.size() >> 8)));
      e.push_back(static_cast<char>(s.size() & 0xFF));
      e += s;
    }
    last = 10 + body.size();
    body += e;
    prev = e.size();
  }
  return U32(static_cast<uint32_t>(11 + body.size())) + U32(static_cast<uint32_t>(last)) +
         U16(static_cast<uint16_t>(items.size())) + body + "\xFF";
}

// A listpack of strings and integers (Redis 7 writes these).
std::string Listpack(const std::vector<std::string>& items) {
  std::string body;
  for (const std::string& s : items) {
    std::string e;
    int64_t v;
    if (ParseInt64(s, &v) && v >= 0 && v <= 127) {
      e.push_back(static_cast<char>(v));
    } else if (ParseInt64(s, &v)) {
      e.push_back(static_cast<char>(0xF4));
      e.append(reinterpret_cast<const char*>(&v), 8);
    } else if (s.size() < 64) {
      e.push_back(static_cast<char>(0x80 | s.size()));
      e += s;
    } else {
      e.push_back(static_cast<char>(0xE0 | (s.size() >> 8)));
      e.push_back(static_cast<char>(s.size() & 0xFF));
      e += s;
    }
    uint8_t back[5];
    const size_t nb = rdb::EncodeBacklen(back, e.size());
    body += e + std::string(reinterpret_cast<const char*>(back), nb);
  }
  return U32(static_cast<uint32_t>(7 + body.size())) + U16(static_cast<uint16_t>(items.size())) + body + "\xFF";
}

// A payload: type, the blob as a string, a version 10 footer.
std::string BlobPayload(uint8_t type, const std::string& blob, const std::string& prefix = "") {
  RdbWriter w(/*compress=*/false);
  w.Byte(type);
  w.Raw(prefix);
  w.String(blob);
  return w.DumpPayload(rdb::kVersion);
}

TEST(RdbValues, OldPackedFormsLoad) {
  const std::vector<std::string> items = {"a", "12", "-5", "1000", std::string(100, 'L'), "", "x"};
  Value got;
  ASSERT_EQ(Load(BlobPayload(rdb::kTypeListZiplist, Ziplist(items)), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(ListItems(got.list()), items);

  // A quicklist of two ziplists, and a quicklist2 of a listpack and a
  // plain node.
  {
    RdbWriter w(false);
    w.Byte(rdb::kTypeListQuicklist);
    w.Len(2);
    w.String(Ziplist({"a", "b"}));
    w.String(Ziplist({"3"}));
    ASSERT_EQ(Load(w.DumpPayload(10), &got), RdbLoadStatus::kOk);
    EXPECT_EQ(ListItems(got.list()), (std::vector<std::string>{"a", "b", "3"}));
  }
  {
    RdbWriter w(false);
    w.Byte(rdb::kTypeListQuicklist2);
    w.Len(2);
    w.Len(rdb::kQuicklistPacked);
    w.String(Listpack({"p", "-70000", "9"}));
    w.Len(rdb::kQuicklistPlain);
    w.String(std::string(9000, 'B'));
    std::string err;
    ASSERT_EQ(Load(w.DumpPayload(10), &got, &err), RdbLoadStatus::kOk) << err;
    EXPECT_EQ(ListItems(got.list()), (std::vector<std::string>{"p", "-70000", "9", std::string(9000, 'B')}));
  }

  ASSERT_EQ(Load(BlobPayload(rdb::kTypeSetListpack, Listpack({"a", "b", "77"})), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(SetItems(got.set()), (std::set<std::string>{"a", "b", "77"}));

  std::string intset = U32(2) + U32(3) + U16(static_cast<uint16_t>(-4)) + U16(5) + U16(600);
  ASSERT_EQ(Load(BlobPayload(rdb::kTypeSetIntset, intset), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(SetItems(got.set()), (std::set<std::string>{"-4", "5", "600"}));
  EXPECT_EQ(got.EncodingName(), "intset");

  ASSERT_EQ(Load(BlobPayload(rdb::kTypeZSetZiplist, Ziplist({"a", "1", "b", "2.5"})), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(ZSetItems(got.zset()), (std::map<std::string, double>{{"a", 1}, {"b", 2.5}}));
  ASSERT_EQ(Load(BlobPayload(rdb::kTypeZSetListpack, Listpack({"a", "-1", "b", "inf"})), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(ZSetItems(got.zset()), (std::map<std::string, double>{{"a", -1}, {"b", INFINITY}}));

  ASSERT_EQ(Load(BlobPayload(rdb::kTypeHashZiplist, Ziplist({"f", "v", "n", "12"})), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(HashItems(got.hash()), (std::map<std::string, std::string>{{"f", "v"}, {"n", "12"}}));
  ASSERT_EQ(Load(BlobPayload(rdb::kTypeHashListpack, Listpack({"f", "v"})), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(HashItems(got.hash()), (std::map<std::string, std::string>{{"f", "v"}}));

  // Redis 7.4's listpack with deadlines: (field, value, deadline or 0).
  std::string min(8, '\0');
  ASSERT_EQ(Load(BlobPayload(rdb::kTypeHashListpackEx, Listpack({"f", "v", "0", "g", "w", "9000", "h", "x", "10"}), min),
                 &got),
            RdbLoadStatus::kOk);
  EXPECT_EQ(HashItems(got.hash()), (std::map<std::string, std::string>{{"f", "v"}, {"g", "w"}}));
  EXPECT_EQ(got.EncodingName(), "listpackex");

  // A zipmap (Redis 2.4): count, then len key len free value.
  const char kZipmap[] = "\x02\x03one\x01\x00" "1\x03two\x03\x02" "222ZZ\xFF";
  const std::string zipmap(kZipmap, sizeof(kZipmap) - 1);
  ASSERT_EQ(Load(BlobPayload(rdb::kTypeHashZipmap, zipmap), &got), RdbLoadStatus::kOk);
  EXPECT_EQ(HashItems(got.hash()), (std::map<std::string, std::string>{{"one", "1"}, {"two", "222"}}));
}

TEST(RdbValues, DuplicatesEmptinessAndUnknownTypesAreRefused) {
  Value got;
  std::string err;
  EXPECT_EQ(Load(BlobPayload(rdb::kTypeSetListpack, Listpack({"a", "a"})), &got, &err), RdbLoadStatus::kError);
  EXPECT_EQ(err, "Duplicate set members detected");
  EXPECT_EQ(Load(BlobPayload(rdb::kTypeHashListpack, Listpack({"f", "1", "f", "2"})), &got, &err),
            RdbLoadStatus::kError);
  EXPECT_EQ(Load(BlobPayload(rdb::kTypeZSetListpack, Listpack({"m", "1", "m", "2"})), &got, &err),
            RdbLoadStatus::kError);
  EXPECT_EQ(Load(BlobPayload(rdb::kTypeHashListpack, Listpack({"f", "1", "odd"})), &got, &err), RdbLoadStatus::kError);
  EXPECT_EQ(Load(BlobPayload(rdb::kTypeSetListpack, Listpack({})), &got, &err), RdbLoadStatus::kEmpty);
  {
    RdbWriter w;
    w.Byte(rdb::kTypeZSet2);
    w.Len(1);
    w.String("m");
    w.BinaryDouble(std::nan(""));
    EXPECT_EQ(Load(w.DumpPayload(10), &got, &err), RdbLoadStatus::kError);
    EXPECT_EQ(err, "Zset with NAN score detected");
  }
  {
    RdbWriter w;
    w.Byte(rdb::kTypeList);
    w.Len(0);
    EXPECT_EQ(Load(w.DumpPayload(10), &got, &err), RdbLoadStatus::kEmpty);
  }
  // Not ascending: a corrupt intset.
  std::string intset = U32(2) + U32(2) + U16(5) + U16(5);
  EXPECT_EQ(Load(BlobPayload(rdb::kTypeSetIntset, intset), &got, &err), RdbLoadStatus::kError);
  EXPECT_EQ(Load(BlobPayload(rdb::kTypeStreamListpacks2, "x"), &got, &err), RdbLoadStatus::kError);
  EXPECT_FALSE(err.empty()) << err;
  EXPECT_EQ(Load(BlobPayload(8, "x"), &got, &err), RdbLoadStatus::kError);
}

// A stream with a tombstone, fields unlike the master's and a group with a
// pending entry comes back whole (Redis's listpack node form, type 19).
TEST(RdbValues, StreamRoundTrip) {
  StreamObject s;
  StreamLimits limits;
  limits.node_max_entries = 3;
  for (uint64_t i = 1; i <= 10; i++) {
    const std::string v = std::to_string(i * 1000);
    const std::string_view same[] = {"f", v, "g", "text"};
    const std::string_view other[] = {"h", v};
    if (i % 4 == 0)
      s.Append({i, i % 2}, other, limits);
    else
      s.Append({i, i % 2}, same, limits);
  }
  ASSERT_TRUE(s.Delete({2, 0}));
  StreamGroup& g = *s.mutable_groups().Add("g", {5, 1}, 5);
  StreamConsumer* alice = g.AddConsumer("alice", 100);
  g.AddConsumer("idle", 50);
  StreamNack& nack = g.pel[{3, 1}];
  nack = StreamNack{200, 2, nullptr};
  g.MoveNack({3, 1}, nack, alice);
  const Value v{StreamValue(std::move(s))};
  RdbWriter w;
  w.Byte(RdbWriter::TypeOf(v));
  w.Object(v);
  Value got;
  std::string err;
  ASSERT_EQ(Load(w.DumpPayload(rdb::kVersion), &got, &err), RdbLoadStatus::kOk) << err;
  ASSERT_TRUE(got.is_stream());
  const StreamObject& a = v.stream();
  const StreamObject& b = got.stream();
  EXPECT_EQ(b.size(), 9u);
  EXPECT_EQ(b.last_id(), a.last_id());
  EXPECT_EQ(b.first_id(), a.first_id());
  EXPECT_EQ(b.max_deleted_id(), (StreamID{2, 0}));
  EXPECT_EQ(b.entries_added(), 10u);
  EXPECT_EQ(b.nodes(), a.nodes());
  std::vector<std::string> ea, eb;
  auto dump = [](const StreamObject& x, std::vector<std::string>* out) {
    x.Range({}, StreamID::Max(), false, [&](const StreamObject::EntryView& e) {
      std::string line = e.id().ToString();
      e.ForEach([&](std::string_view f, std::string_view val) { line += " " + std::string(f) + "=" + std::string(val); });
      out->push_back(line);
      return true;
    });
  };
  dump(a, &ea);
  dump(b, &eb);
  EXPECT_EQ(ea, eb);
  const StreamGroup* h = b.groups()->Find("g");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->last_id, (StreamID{5, 1}));
  EXPECT_EQ(h->entries_read, 5);
  ASSERT_EQ(h->pel.size(), 1u);
  EXPECT_EQ(h->pel.at({3, 1}).delivery_count, 2u);
  EXPECT_EQ(h->pel.at({3, 1}).consumer->name, "alice");
  EXPECT_NE(h->FindConsumer("idle"), nullptr);
}

// Every truncation and many random corruptions of valid payloads are
// refused or load something, and never read out of bounds (run under ASan).
TEST(RdbValues, CorruptPayloadsNeverCrash) {
  std::vector<std::string> payloads;
  {
    ListLimits ll;
    ListObject l;
    for (int i = 0; i < 300; i++) l.Push(ListObject::End::kTail, "e" + std::to_string(i), ll);
    payloads.push_back(Dump(Value(std::move(l))));
  }
  payloads.push_back(BlobPayload(rdb::kTypeListZiplist, Ziplist({"a", "12", std::string(300, 'x'), "-5"})));
  payloads.push_back(BlobPayload(rdb::kTypeHashListpack, Listpack({"f", "v", "g", "1234567"})));
  payloads.push_back(BlobPayload(rdb::kTypeSetIntset, U32(4) + U32(2) + U32(1) + U32(70000)));
  payloads.push_back(Dump(Value::String(std::string(500, 'r') + "tail")));
  std::mt19937_64 rng(42);
  for (const std::string& p : payloads) {
    for (size_t cut = 11; cut < p.size(); cut++) {
      Value got;
      std::string t = p.substr(0, cut) + p.substr(p.size() - 10);
      Load(t, &got);
    }
    for (int round = 0; round < 2000; round++) {
      std::string t = p;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; f++) t[1 + rng() % (t.size() - 11)] = static_cast<char>(rng());
      Value got;
      Load(t, &got);
    }
  }
}

}  // namespace
}  // namespace peregrine
