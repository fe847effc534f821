// CompactString with a lent heap block (core/lent_blocks.h): a reply holding
// a reference keeps seeing the bytes as they were when the string is
// overwritten, destroyed, changed in place (MutableBytes) or grown (Append),
// and a block no longer lent is changed in place again. Under ASan a block
// freed under a reference is reported.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "core/compact_string.h"
#include "core/lent_blocks.h"
#include "core/memory.h"

namespace peregrine {
namespace {

std::string Str(const CompactString& s) {
  char scratch[CompactString::kIntBufferSize];
  return std::string(s.View(scratch));
}

// A reply's reference: the block and the bytes it will send.
struct Reference {
  explicit Reference(CompactString& s) {
    char scratch[CompactString::kIntBufferSize];
    bytes = s.View(scratch);
    block = s.LendBlock();
    lent_blocks::Lend(block);
  }
  void Return() { lent_blocks::Return(block); }
  std::string_view bytes;
  const char* block;
};

TEST(CompactStringLent, HeapOnly) {
  EXPECT_FALSE(CompactString("short").is_heap());
  EXPECT_EQ(CompactString("short").heap_size_or_zero(), 0u);
  EXPECT_FALSE(CompactString::FromInt(12345).is_heap());
  CompactString big(std::string(3000, 'b'));
  EXPECT_TRUE(big.is_heap());
  EXPECT_EQ(big.heap_size_or_zero(), 3000u);
}

TEST(CompactStringLent, DestroyedWhileLent) {
  const int64_t base = KeyspaceBytes();
  Reference* ref;
  {
    CompactString s(std::string(5000, 'v'));
    ref = new Reference(s);
    EXPECT_TRUE(lent_blocks::IsLent(ref->block));
  }
  // The string is gone: the keyspace no longer counts it, the reply still
  // reads it.
  EXPECT_EQ(KeyspaceBytes(), base);
  EXPECT_EQ(ref->bytes, std::string(5000, 'v'));
  ref->Return();
  EXPECT_FALSE(lent_blocks::IsLent(ref->block));
  delete ref;
}

TEST(CompactStringLent, OverwrittenWhileLent) {
  CompactString s(std::string(2000, 'a'));
  Reference ref(s);
  s = CompactString(std::string(2000, 'b'));  // SET over it
  EXPECT_EQ(ref.bytes, std::string(2000, 'a'));
  EXPECT_EQ(Str(s), std::string(2000, 'b'));
  ref.Return();
}

TEST(CompactStringLent, MovedStringKeepsTheFlagCopyDoesNot) {
  CompactString s(std::string(1500, 'm'));
  Reference ref(s);
  CompactString moved(std::move(s));  // RENAME moves values
  CompactString copy(moved);          // COPY copies them
  EXPECT_NE(copy.View(nullptr).data(), ref.block);
  moved = CompactString("x");  // releases the lent block: handed over
  EXPECT_EQ(ref.bytes, std::string(1500, 'm'));
  ref.Return();
  EXPECT_EQ(Str(copy), std::string(1500, 'm'));
}

TEST(CompactStringLent, MutableBytesCopiesALentBlock) {
  const int64_t base = KeyspaceBytes();
  {
    CompactString s(std::string(4000, 'o'));
    Reference ref(s);
    char* p = s.MutableBytes(4000);  // SETRANGE within the value
    EXPECT_NE(p, ref.block);
    p[0] = 'N';
    EXPECT_EQ(ref.bytes, std::string(4000, 'o'));  // the reply sends the old value
    EXPECT_EQ(Str(s), "N" + std::string(3999, 'o'));
    ref.Return();  // frees the old block
    // Not lent any more: changed in place.
    char* q = s.MutableBytes(4000);
    EXPECT_EQ(q, p);
    q[1] = 'M';
    EXPECT_EQ(Str(s), "NM" + std::string(3998, 'o'));
  }
  EXPECT_EQ(KeyspaceBytes(), base);
}

TEST(CompactStringLent, AppendLeavesTheLentBytesAlone) {
  const int64_t base = KeyspaceBytes();
  {
    CompactString s(std::string(1200, 'p'));
    s.Append("q");  // raw now, with spare room: later appends may stay in place
    Reference ref(s);
    std::string want(1200, 'p');
    want += 'q';
    for (int i = 0; i < 2000; i++) s.Append("0123456789");  // in place, then moved
    EXPECT_EQ(ref.bytes, want);
    EXPECT_EQ(Str(s).size(), 1201u + 20000);
    EXPECT_EQ(Str(s).substr(0, 1201), want);
    ref.Return();
  }
  EXPECT_EQ(KeyspaceBytes(), base);
}

TEST(CompactStringLent, SeveralReferencesToOneBlock) {
  CompactString s(std::string(3000, 'r'));
  Reference a(s), b(s);
  EXPECT_EQ(a.block, b.block);
  s = CompactString("gone");
  a.Return();
  EXPECT_EQ(b.bytes, std::string(3000, 'r'));  // still there for the second reply
  b.Return();
  EXPECT_FALSE(lent_blocks::IsLent(a.block));
}

TEST(CompactStringLent, AssignInPlaceReusesAFittingBlock) {
  const int64_t base = KeyspaceBytes();
  {
    CompactString s(std::string(2048, 'a'));
    const char* block = s.View(nullptr).data();
    const int64_t counted = KeyspaceBytes();
    ASSERT_TRUE(s.AssignInPlace(std::string(2040, 'b')));
    EXPECT_EQ(s.View(nullptr).data(), block);
    EXPECT_EQ(Str(s), std::string(2040, 'b'));
    EXPECT_EQ(KeyspaceBytes(), counted);
    EXPECT_EQ(s.encoding(), CompactString::Encoding::kRaw);
    // Too large, or so much smaller that the block would waste memory: no.
    EXPECT_FALSE(s.AssignInPlace(std::string(3000, 'c')));
    EXPECT_FALSE(s.AssignInPlace(std::string(1000, 'c')));
    EXPECT_EQ(Str(s), std::string(2040, 'b'));
    // Short strings are inline, integers not heap: never in place.
    CompactString small("abc");
    EXPECT_FALSE(small.AssignInPlace(std::string(20, 'x')));
    CompactString n = CompactString::FromInt(7);
    EXPECT_FALSE(n.AssignInPlace(std::string(20, 'x')));
    // A raw string (APPEND) becomes a plain one again: embstr when short.
    CompactString r(std::string(30, 'r'));
    r.Append("s");
    EXPECT_EQ(r.encoding(), CompactString::Encoding::kRaw);
    if (r.AssignInPlace(std::string(31, 't'))) {
      EXPECT_EQ(r.encoding(), CompactString::Encoding::kEmbstr);
      EXPECT_EQ(Str(r), std::string(31, 't'));
    }
  }
  EXPECT_EQ(KeyspaceBytes(), base);
}

TEST(CompactStringLent, AssignInPlaceLeavesALentBlockAlone) {
  CompactString s(std::string(4096, 'l'));
  Reference ref(s);
  EXPECT_FALSE(s.AssignInPlace(std::string(4090, 'm')));
  EXPECT_EQ(ref.bytes, std::string(4096, 'l'));
  ref.Return();
  // Returned: the flag is stale, the block is free to reuse.
  EXPECT_TRUE(s.AssignInPlace(std::string(4090, 'm')));
  EXPECT_EQ(Str(s), std::string(4090, 'm'));
}

TEST(CompactStringLent, AdoptedBlockIsCounted) {
  const int64_t base = KeyspaceBytes();
  char* block = static_cast<char*>(std::malloc(40000));
  std::memset(block, 'k', 40000);
  {
    CompactString s = CompactString::AdoptBlock(block, 40000);
    EXPECT_EQ(KeyspaceBytes() - base, static_cast<int64_t>(CountedUsableSize(block)));
    EXPECT_EQ(Str(s), std::string(40000, 'k'));
    EXPECT_EQ(s.encoding(), CompactString::Encoding::kRaw);
  }
  EXPECT_EQ(KeyspaceBytes(), base);
}

}  // namespace
}  // namespace peregrine
