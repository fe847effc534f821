// Value holding containers: type tags, moves, deep copies, the access byte
// and freeing (the keyspace's byte count returns to where it was).
#include "core/value.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/lazy_free.h"
#include "core/memory.h"

namespace peregrine {
namespace {

SetObject MakeSet(int n, const std::string& prefix) {
  SetLimits limits;
  SetObject s(prefix + "0", static_cast<size_t>(n), limits);
  for (int i = 0; i < n; ++i) s.Add(prefix + std::to_string(i), limits);
  return s;
}

HashObject MakeHash(int n) {
  HashObject h;
  HashLimits limits;
  for (int i = 0; i < n; ++i) h.Set("f" + std::to_string(i), "v" + std::to_string(i), limits);
  return h;
}

std::set<std::string> Members(const SetObject& s) {
  std::set<std::string> out;
  s.ForEach([&](std::string_view m) { out.emplace(m); });
  return out;
}

TEST(ValueContainers, TypesAndEncodings) {
  Value str = Value::String("abc");
  EXPECT_TRUE(str.is_string());
  EXPECT_EQ(str.type(), ValueType::kString);

  Value ints(MakeSet(10, ""));
  EXPECT_FALSE(ints.is_string());
  EXPECT_TRUE(ints.is_set());
  EXPECT_FALSE(ints.is_hash());
  EXPECT_EQ(ints.type(), ValueType::kSet);
  EXPECT_EQ(ints.EncodingName(), "intset");

  Value strs(MakeSet(10, "m"));
  EXPECT_EQ(strs.EncodingName(), "listpack");
  Value big(MakeSet(1000, "m"));
  EXPECT_EQ(big.EncodingName(), "hashtable");
  EXPECT_EQ(big.set().size(), 1000u);

  Value h(MakeHash(5));
  EXPECT_TRUE(h.is_hash());
  EXPECT_FALSE(h.is_set());
  EXPECT_EQ(h.type(), ValueType::kHash);
  EXPECT_EQ(h.EncodingName(), "listpack");
  Value bigh(MakeHash(600));
  EXPECT_EQ(bigh.EncodingName(), "hashtable");
  EXPECT_GT(bigh.HeapBytes(), 600u * 8);
}

TEST(ValueContainers, MoveKeepsAccessByteAndEmptiesSource) {
  Value a(MakeSet(300, "m"));
  a.set_access(77);
  Value b = Value::String("x");
  b.set_access(5);
  b = std::move(a);
  EXPECT_EQ(b.access(), 5);  // assignment keeps the destination's byte
  EXPECT_TRUE(b.is_set());
  EXPECT_EQ(b.set().size(), 300u);
  EXPECT_TRUE(a.is_string());
  EXPECT_EQ(a.str().size(), 0u);

  Value c(std::move(b));
  EXPECT_EQ(c.access(), 5);  // construction takes the source's
  EXPECT_TRUE(c.is_set());
  EXPECT_TRUE(b.is_string());
}

TEST(ValueContainers, CopyIsDeep) {
  Value a(MakeSet(300, "m"));
  a.set_access(9);
  Value b(a);
  EXPECT_EQ(b.access(), 9);
  EXPECT_EQ(Members(a.set()), Members(b.set()));
  SetLimits limits;
  b.mutable_set().Add("new", limits);
  b.mutable_set().Remove("m1");
  EXPECT_TRUE(a.set().Contains("m1"));
  EXPECT_FALSE(a.set().Contains("new"));

  Value h(MakeHash(200));
  Value h2 = Value::String("s");
  h2 = h;
  char scratch[packed::kScratchSize];
  std::string_view v;
  ASSERT_TRUE(h2.hash().Get("f7", &v, scratch));
  EXPECT_EQ(v, "v7");
  h2.mutable_hash().Delete("f7");
  EXPECT_TRUE(h.hash().Get("f7", &v, scratch));
}

TEST(ValueContainers, FreeingReturnsEveryByte) {
  while (lazy_free::RunSlice(1000)) {  // what earlier tests left queued
  }
  const int64_t before = KeyspaceBytes();
  {
    Value a(MakeSet(5000, "member:"));
    Value b(MakeHash(3000));
    Value c(MakeSet(100, ""));
    Value d = a;
    EXPECT_GT(KeyspaceBytes(), before);
    d = std::move(b);      // frees d's set
    c = Value::String(std::string(100, 'x'));  // frees the intset
  }
  // The 5000-member tables went to the lazy-free list: counted until freed.
  EXPECT_GT(lazy_free::Pending(), 0u);
  EXPECT_GT(KeyspaceBytes(), before);
  while (lazy_free::RunSlice(1000)) {
  }
  EXPECT_EQ(lazy_free::Pending(), 0u);
  EXPECT_EQ(KeyspaceBytes(), before);
}

}  // namespace
}  // namespace peregrine
