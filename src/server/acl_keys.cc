// The access each command needs to its keys, for the ACL check: Redis 7.2's
// key specs reduced to what ACL looks at (read for ACCESS, write for INSERT,
// DELETE or UPDATE; neither for a command that only looks at a key's
// existence or metadata). A command's first key and its other keys (a
// destination and its sources, SORT's and GEORADIUS's STORE keys) may
// differ. SET and BITFIELD depend on their arguments (Redis's VARIABLE_FLAGS).
#include <unordered_map>

#include "server/acl.h"
#include "server/command.h"

namespace peregrine {
namespace {

struct AccessGroup {
  uint8_t first;
  uint8_t others;
  const char* names;  // space-separated ACL names ("xinfo|stream")
};

constexpr AccessGroup kGroups[] = {
    {kKeyRead, kKeyRead,
     "bitcount bitfield_ro bitpos dump eval_ro evalsha_ro expiretime fcall_ro geodist geohash geopos "
     "georadius_ro georadiusbymember_ro geosearch get getbit getrange hexpiretime hget hgetall hkeys hmget "
     "hpexpiretime hpttl hrandfield hscan httl hvals lcs lindex lpos lrange mget pexpiretime pfcount pfdebug "
     "pttl sdiff sinter sintercard smembers smismember sort_ro srandmember sscan substr sunion ttl "
     "xinfo|consumers xinfo|groups xinfo|stream xpending xrange xread xreadgroup xrevrange zcount zdiff zinter "
     "zintercard zlexcount zmscore zrandmember zrange zrangebylex zrangebyscore zrank zrevrange zrevrangebylex "
     "zrevrangebyscore zrevrank zscan zscore zunion"},
    {kKeyWrite, kKeyWrite,
     "append del expire expireat geoadd hdel hexpire hexpireat hmset hpersist hpexpire hpexpireat hset hsetex "
     "hsetnx linsert lpush lpushx lrem lset ltrim mset msetnx persist pexpire pexpireat pfadd psetex restore "
     "restore-asking rpush rpushx sadd setex setnx setrange srem unlink xack xadd xautoclaim xclaim xdel xgroup|create "
     "xgroup|createconsumer xgroup|delconsumer xgroup|destroy xgroup|setid xsetid xtrim zadd zrem "
     "zremrangebylex zremrangebyrank zremrangebyscore"},
    {kKeyReadWrite, kKeyReadWrite,
     "bitfield blmpop blpop brpop bzmpop bzpopmax bzpopmin decr decrby eval evalsha fcall getdel getex getset "
     "hgetdel hgetex hincrby hincrbyfloat incr incrby incrbyfloat lmpop lpop migrate move rpop set setbit spop zincrby "
     "zmpop zpopmax zpopmin"},
    {kKeyNone, kKeyNone,
     "exists hexists hlen hstrlen llen memory|usage object|encoding object|freq object|idletime object|refcount "
     "scard sismember strlen touch type watch xlen zcard"},
    {kKeyWrite, kKeyRead,
     "bitop geosearchstore sdiffstore sinterstore sunionstore zdiffstore zinterstore zrangestore zunionstore"},
    {kKeyReadWrite, kKeyWrite,
     "blmove brpoplpush lmove rename renamenx rpoplpush smove"},
    {kKeyRead, kKeyWrite,
     "copy georadius georadiusbymember sort"},
    {kKeyReadWrite, kKeyRead,
     "pfmerge"},
};

struct Access {
  uint8_t first, others;
};

const std::unordered_map<std::string_view, Access>& AccessByName() {
  static const std::unordered_map<std::string_view, Access> map = [] {
    std::unordered_map<std::string_view, Access> m;
    for (const AccessGroup& g : kGroups) {
      std::string_view names = g.names;
      while (!names.empty()) {
        const size_t sp = names.find(' ');
        m.emplace(names.substr(0, sp), Access{g.first, g.others});
        names = sp == std::string_view::npos ? std::string_view() : names.substr(sp + 1);
      }
    }
    return m;
  }();
  return map;
}

}  // namespace

AclKeySpec AclKeySpecOf(const CommandSpec& cmd) {
  AclKeySpec spec;
  const std::string_view n = cmd.fullname;
  if (n == "publish" || n == "spublish") spec.channels = AclKeySpec::kPublish;
  if (n == "subscribe" || n == "ssubscribe") spec.channels = AclKeySpec::kSubscribe;
  if (n == "psubscribe") spec.channels = AclKeySpec::kPSubscribe;
  auto it = AccessByName().find(cmd.fullname);
  if (it == AccessByName().end()) return spec;
  spec.first = it->second.first;
  spec.others = it->second.others;
  spec.known = true;
  if (cmd.fullname == "set") spec.variable = AclKeySpec::kSet;
  if (cmd.fullname == "bitfield") spec.variable = AclKeySpec::kBitfield;
  return spec;
}

namespace {

// SET reads its key only with GET; BITFIELD writes only with SET or INCRBY
// (or anything it cannot parse), as Redis's setGetKeys / bitfieldGetKeys.
uint8_t VariableAccess(const AclKeySpec& spec, std::span<const std::string_view> args) {
  if (spec.variable == AclKeySpec::kSet) {
    for (size_t i = 3; i < args.size(); i++)
      if (EqualsIgnoreCase(args[i], "get")) return kKeyReadWrite;
    return kKeyWrite;
  }
  for (size_t i = 2; i < args.size(); i++) {
    const size_t more = args.size() - i - 1;
    if (EqualsIgnoreCase(args[i], "get") && more >= 2) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "overflow") && more >= 1) {
      i += 1;
    } else {
      return kKeyReadWrite;
    }
  }
  return kKeyRead;
}

}  // namespace

bool AclCommandKeys(const CommandSpec& cmd, const AclKeySpec& spec, std::span<const std::string_view> args,
                    std::vector<size_t>* keys, std::vector<uint8_t>* access) {
  access->clear();
  if (!cmd.KeyPositions(args, keys)) return false;
  for (size_t j = 0; j < keys->size(); j++) {
    if (j > 0)
      access->push_back(spec.others);
    else
      access->push_back(spec.variable == AclKeySpec::kFixed ? spec.first : VariableAccess(spec, args));
  }
  return true;
}

}  // namespace peregrine
