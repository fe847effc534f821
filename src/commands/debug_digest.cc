// DEBUG DIGEST and DEBUG DIGEST-VALUE (Redis's computeDatasetDigest and
// xorObjectDigest, debug.c): a SHA1-based digest of the dataset, or of
// keys' values, the same for the same data whatever its encoding, so that a
// test can tell whether a reload, a replica or a migration kept it.
//
// A key's digest mixes (in order) its name, its type and its value, and
// xors in a marker if it has a deadline; a list's items are mixed in order,
// a set's members xored (order-free), a sorted set's and a hash's entries
// each digested alone (member then score, field then value) and xored.
// a stream's entries mixed in order (not its consumer groups). Every step is
// Redis's, so the digests are Redis's. The dataset's digest xors every
// key's, each database's id mixed in first.
// Keys whose deadline has passed are left out (they are gone).
#include "commands/debug_digest.h"

#include <arpa/inet.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>
#include <string>

#include "commands/common.h"
#include "core/numbers.h"
#include "core/packed_page.h"
#include "server/server_state.h"

namespace peregrine {

namespace {

using Digest = std::array<unsigned char, 20>;

// digest ^= SHA1(data)
void XorDigest(Digest& d, const void* data, size_t len) {
  unsigned char h[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data, len, h, &n, EVP_sha1(), nullptr);
  for (size_t i = 0; i < d.size(); i++) d[i] ^= h[i];
}
void XorDigest(Digest& d, std::string_view s) { XorDigest(d, s.data(), s.size()); }

// digest = SHA1(digest ^ SHA1(data)): order matters.
void MixDigest(Digest& d, const void* data, size_t len) {
  XorDigest(d, data, len);
  unsigned char h[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(d.data(), d.size(), h, &n, EVP_sha1(), nullptr);
  std::memcpy(d.data(), h, d.size());
}
void MixDigest(Digest& d, std::string_view s) { MixDigest(d, s.data(), s.size()); }

// Redis's type numbers (OBJ_STRING ... OBJ_STREAM).
uint32_t RedisType(ValueType t) {
  switch (t) {
    case ValueType::kString: return 0;
    case ValueType::kList: return 1;
    case ValueType::kSet: return 2;
    case ValueType::kZSet: return 3;
    case ValueType::kHash: return 4;
    case ValueType::kStream: return 6;
  }
  return 0;
}

void ValueDigest(Digest& d, const Value& v, int64_t expire_ms) {
  const uint32_t aux = htonl(RedisType(v.type()));
  MixDigest(d, &aux, sizeof(aux));
  switch (v.type()) {
    case ValueType::kString: {
      char scratch[CompactString::kIntBufferSize];
      MixDigest(d, v.str().View(scratch));
      break;
    }
    case ValueType::kList: {
      const ListObject& l = v.list();
      char scratch[packed::kScratchSize];
      for (ListObject::Pos p = l.size() ? l.First() : l.EndPos(); !l.AtEnd(p); p = l.Next(p))
        MixDigest(d, l.View(p, scratch));
      l.DropCache();
      break;
    }
    case ValueType::kSet:
      v.set().ForEach([&](std::string_view m) { XorDigest(d, m); });
      break;
    case ValueType::kZSet:
      v.zset().ForEach([&](std::string_view m, double score) {
        Digest e{};
        MixDigest(e, m);
        char num[kMaxDoubleChars];
        MixDigest(e, std::string_view(num, FormatDouble(score, num)));
        XorDigest(d, e.data(), e.size());
      });
      break;
    case ValueType::kHash:
      v.hash().ForEachEntry([&](const uint8_t* entry) {
        char s0[packed::kScratchSize], s1[packed::kScratchSize];
        Digest e{};
        MixDigest(e, packed::View(Page::ItemOf(entry, 0), s0));
        MixDigest(e, packed::View(Page::ItemOf(entry, 1), s1));
        // (A field's deadline, as Redis 7.4's hash-field expiry marks it.)
        if (Page::DeadlineOfEntry(entry) != Page::kNoDeadline) XorDigest(e, std::string_view("!!hexpire!!"));
        XorDigest(d, e.data(), e.size());
      });
      break;
    case ValueType::kStream:
      // (Its entries only, as Redis's: "ms.seq", then each field and value.)
      v.stream().Range(StreamID{}, StreamID::Max(), false, [&](const StreamObject::EntryView& e) {
        MixDigest(d, std::to_string(e.id().ms) + "." + std::to_string(e.id().seq));
        e.ForEach([&](std::string_view f, std::string_view val) {
          MixDigest(d, f);
          MixDigest(d, val);
        });
        return true;
      });
      break;
  }
  if (expire_ms != Db::kNoExpire) XorDigest(d, std::string_view("!!expire!!"));
}

void ReplyDigest(CommandContext& ctx, const Digest& d) { ctx.reply.SimpleString(HexOf(d.data(), d.size())); }

}  // namespace

void DebugDigest(CommandContext& ctx) {
  Digest final{};
  const int dbs = ctx.server.config().databases;
  for (int j = 0; j < dbs; j++) {
    bool any = false;
    for (size_t s = 0; s < ctx.server.num_shards() && !any; s++) any = ctx.server.shard(s).db(j).size() > 0;
    if (!any) continue;
    const uint32_t aux = htonl(static_cast<uint32_t>(j));
    MixDigest(final, &aux, sizeof(aux));
    for (size_t s = 0; s < ctx.server.num_shards(); s++) {
      ctx.server.shard(s).db(j).ForEach([&](const Db::Entry& e) {
        if (Db::IsExpired(e, ctx.now_ms)) return;
        Digest d{};
        char scratch[CompactKey::kScratchSize];
        MixDigest(d, e.key(scratch));
        ValueDigest(d, e.value, e.expire_ms());
        XorDigest(final, d.data(), d.size());
      });
    }
  }
  ReplyDigest(ctx, final);
}

void DebugDigestValue(CommandContext& ctx) {
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    Digest d{};
    const Db::Entry* e = ctx.DbOf(ctx.args[i]).FindRaw(ctx.args[i]);
    if (e != nullptr && !Db::IsExpired(*e, ctx.now_ms)) ValueDigest(d, e->value, e->expire_ms());
    ReplyDigest(ctx, d);
  }
}

}  // namespace peregrine
