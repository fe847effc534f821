// The cluster bus's messages (see bus_message.h): Encode writes the wire
// layout one field at a time in network byte order; Decode reads it back
// only after the length checks Redis makes before it trusts a message, so
// every read it makes lies inside the message.
#include "cluster/bus_message.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <utility>

namespace peregrine::cluster {
namespace {

constexpr std::string_view kSignature = "RCmb";
// A ping extension's header: length 4, type 2, reserved 2.
constexpr size_t kExtHeaderLen = 8;
// The fixed data of two extension types: a forgotten node's name and TTL,
// and a shard id.
constexpr size_t kForgottenNodeDataLen = kNameLen + 8;
constexpr size_t kShardIdDataLen = kNameLen;
// The fixed parts of the bodies: PUBLISH's two lengths; MODULE's module id,
// length and type; UPDATE's config epoch, node name and slots.
constexpr size_t kPublishFixedLen = 8;
constexpr size_t kModuleFixedLen = 8 + 4 + 1;
constexpr size_t kUpdateLen = 8 + kNameLen + kSlotBytes;
// The header's unused bytes between `extensions` and `pport`.
constexpr size_t kHeaderReservedLen = 30;
constexpr size_t kGossipReservedLen = 2;

constexpr std::string_view kTypeNames[kMsgTypeCount] = {
    "ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard"};

bool IsPingType(MsgType t) { return t == MsgType::kPing || t == MsgType::kPong || t == MsgType::kMeet; }

size_t AlignTo8(size_t n) { return (n + 7) & ~size_t{7}; }

// A hostname or human nodename extension's whole length: the header, then
// the string and its NUL, padded to 8 bytes.
size_t StringExtLen(std::string_view s) { return kExtHeaderLen + AlignTo8(s.size() + 1); }

// The ping extensions Encode writes for `m`, in their order on the wire.
// Their count and total length; zero of each when `m` is no ping or does
// not send them.
struct ExtensionPlan {
  size_t count = 0;
  size_t bytes = 0;
};

ExtensionPlan PlanExtensions(const BusMessage& m) {
  ExtensionPlan plan;
  if (!IsPingType(m.type) || !m.extensions_on) return plan;
  if (!m.hostname.empty()) {
    plan.count++;
    plan.bytes += StringExtLen(m.hostname);
  }
  if (!m.human_nodename.empty()) {
    plan.count++;
    plan.bytes += StringExtLen(m.human_nodename);
  }
  plan.count += m.forgotten.size();
  plan.bytes += m.forgotten.size() * (kExtHeaderLen + kForgottenNodeDataLen);
  if (!m.shard_id.empty()) {
    plan.count++;
    plan.bytes += kExtHeaderLen + kShardIdDataLen;
  }
  return plan;
}

// Appends big-endian integers and fixed-width fields to a string.
class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U16(uint16_t v) {
    U8(static_cast<uint8_t>(v >> 8));
    U8(static_cast<uint8_t>(v));
  }
  void U32(uint32_t v) {
    U16(static_cast<uint16_t>(v >> 16));
    U16(static_cast<uint16_t>(v));
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v >> 32));
    U32(static_cast<uint32_t>(v));
  }
  void Bytes(std::string_view s) { out_->append(s.data(), s.size()); }
  void Zeros(size_t n) { out_->append(n, '\0'); }
  // The first `width` bytes of s, NUL-padded to `width` (an empty name
  // becomes the all-zero "none").
  void Fixed(std::string_view s, size_t width) {
    s = s.substr(0, width);
    Bytes(s);
    Zeros(width - s.size());
  }
  // An IP address field: at most kIpLen - 1 characters, so that a NUL
  // always ends it.
  void Ip(std::string_view ip) { Fixed(ip.substr(0, kIpLen - 1), kIpLen); }
  void Slots(const SlotBitmap& slots) {
    out_->append(reinterpret_cast<const char*>(slots.data()), slots.size());
  }
  void StringExt(PingExtType type, std::string_view s) {
    const size_t len = StringExtLen(s);
    U32(static_cast<uint32_t>(len));
    U16(static_cast<uint16_t>(type));
    U16(0);
    Bytes(s);
    Zeros(len - kExtHeaderLen - s.size());
  }

 private:
  std::string* out_;
};

// Reads big-endian integers and fixed-width fields from a message in order.
// Decode checks every length before it reads, so a read never runs past the
// end; should one try, it yields zeros (or a short view) instead of reading
// outside the buffer, and overran() says so.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  size_t pos() const { return pos_; }
  bool overran() const { return overran_; }

  uint8_t U8() {
    if (!Have(1)) return 0;
    return static_cast<uint8_t>(in_[pos_++]);
  }
  uint16_t U16() {
    const uint16_t hi = U8();
    return static_cast<uint16_t>(hi << 8 | U8());
  }
  uint32_t U32() {
    const uint32_t hi = U16();
    return hi << 16 | U16();
  }
  uint64_t U64() {
    const uint64_t hi = U32();
    return hi << 32 | U32();
  }
  std::string_view Bytes(size_t n) {
    if (!Have(n)) n = in_.size() - pos_;
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  void Skip(size_t n) { Bytes(n); }
  // A 40-byte name: all zeros is "none" (empty); otherwise all 40 bytes.
  std::string Name() {
    const std::string_view b = Bytes(kNameLen);
    for (char c : b)
      if (c != '\0') return std::string(b);
    return std::string();
  }
  // A 46-byte IP field: up to its first NUL, at most kIpLen - 1 characters
  // (Redis ends the copy it takes there too).
  std::string Ip() {
    std::string_view b = Bytes(kIpLen).substr(0, kIpLen - 1);
    return std::string(b.substr(0, b.find('\0')));
  }
  void Slots(SlotBitmap* slots) {
    const std::string_view b = Bytes(kSlotBytes);
    for (size_t i = 0; i < b.size(); i++) (*slots)[i] = static_cast<uint8_t>(b[i]);
  }

 private:
  bool Have(size_t n) {
    if (in_.size() - pos_ >= n) return true;
    overran_ = true;
    return false;
  }

  std::string_view in_;
  size_t pos_ = 0;
  bool overran_ = false;
};

std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* format, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof(buf), format, ap);
  va_end(ap);
  return buf;
}

// Redis's complaint about a length that is not what the type's body needs.
bool LengthMismatch(uint16_t type, uint64_t totlen, uint64_t explen, std::string* error) {
  *error = Printf("Received invalid %.*s packet of length %" PRIu64 " but expected length %" PRIu64,
                  static_cast<int>(MsgTypeName(type).size()), MsgTypeName(type).data(), totlen, explen);
  return false;
}

// A string extension's data: the string up to its NUL (all of it if the
// sender left the NUL out).
std::string ExtString(std::string_view data) { return std::string(data.substr(0, data.find('\0'))); }

// The body of a PING, PONG or MEET after the header: `count` gossip
// sections, then, when mflags[0] says so, `extensions` extensions. Redis
// 7.2 walks the extensions only when the flag is set while validating, but
// always when it processes them, so a message with extensions and no flag
// is one it would read past the end of: refused here.
bool DecodePingBody(Reader& r, uint32_t totlen, uint16_t count, uint16_t extensions, BusMessage* m,
                    std::string* error) {
  const uint16_t type = static_cast<uint16_t>(m->type);
  const std::string_view name = MsgTypeName(type);
  const int name_len = static_cast<int>(name.size());
  uint64_t explen = kHeaderLen + uint64_t{count} * kGossipLen;
  if (explen > totlen) return LengthMismatch(type, totlen, explen, error);
  m->gossip.resize(count);
  for (Gossip& g : m->gossip) {
    g.name = r.Name();
    g.ping_sent = r.U32();
    g.pong_received = r.U32();
    g.ip = r.Ip();
    g.port = r.U16();
    g.cport = r.U16();
    g.flags = r.U16();
    g.pport = r.U16();
    r.Skip(kGossipReservedLen);
  }
  m->extensions_on = (m->mflags[0] & kMsgFlag0ExtData) != 0;
  if (!m->extensions_on) {
    if (explen != totlen) return LengthMismatch(type, totlen, explen, error);
    if (extensions != 0) {
      *error = Printf("Received a %.*s packet with %u extensions but without the extension data flag", name_len,
                      name.data(), unsigned{extensions});
      return false;
    }
    return true;
  }
  const auto exceeds = [&] {
    *error = Printf("Received invalid %.*s packet with extension data that exceeds total packet length (%" PRIu32 ")",
                    name_len, name.data(), totlen);
    return false;
  };
  for (uint16_t i = 0; i < extensions; i++) {
    const uint64_t left = totlen - explen;
    // Redis compares the length to what is left after reading it; here the
    // header itself must be there to be read.
    if (left < kExtHeaderLen) return exceeds();
    // Redis checks only the low 16 bits of the length (but steps to the
    // next extension by all 32): here all 32 serve both.
    const uint32_t ext_len = r.U32();
    const uint16_t ext_type = r.U16();
    r.Skip(2);
    if (ext_len % 8 != 0) {
      *error = Printf("Received a %.*s packet without proper padding (%" PRIu32 " bytes)", name_len, name.data(),
                      ext_len);
      return false;
    }
    // Redis lets a 0-byte extension through (and reads the same one again
    // for each count, its data from past it): a length must at least cover
    // the extension's own header.
    if (ext_len < kExtHeaderLen) {
      *error = Printf("Received a %.*s packet with an extension of %" PRIu32 " bytes", name_len, name.data(), ext_len);
      return false;
    }
    if (ext_len > left) return exceeds();
    const std::string_view data = r.Bytes(ext_len - kExtHeaderLen);
    // Redis reads a forgotten node's or a shard id's fixed data without
    // checking that the extension holds it: one too short is refused.
    const auto too_short = [&](const char* what, size_t need) {
      *error = Printf("Received a %.*s packet with a %s extension of %" PRIu32 " bytes (needs %zu)", name_len,
                      name.data(), what, ext_len, kExtHeaderLen + need);
      return false;
    };
    switch (static_cast<PingExtType>(ext_type)) {
      case PingExtType::kHostname:
        m->hostname = ExtString(data);
        break;
      case PingExtType::kHumanNodename:
        m->human_nodename = ExtString(data);
        break;
      case PingExtType::kForgottenNode: {
        if (data.size() < kForgottenNodeDataLen) return too_short("forgotten node", kForgottenNodeDataLen);
        Reader d(data);
        ForgottenNode f;
        f.name = d.Name();
        f.ttl_s = d.U64();
        m->forgotten.push_back(std::move(f));
        break;
      }
      case PingExtType::kShardId: {
        if (data.size() < kShardIdDataLen) return too_short("shard id", kShardIdDataLen);
        m->shard_id = Reader(data).Name();
        break;
      }
      default:
        // Redis logs "Received unknown extension type" and goes on.
        m->unknown_extensions++;
        break;
    }
    explen += ext_len;
  }
  if (explen != totlen) return LengthMismatch(type, totlen, explen, error);
  return true;
}

// The body of any type but the ping types; `totlen` is at least kHeaderLen.
// Lengths are added in 64 bits: Redis adds PUBLISH's and MODULE's in 32,
// where lengths near 4 GB wrap around to a small total it then accepts.
bool DecodeOtherBody(Reader& r, uint32_t totlen, BusMessage* m, std::string* error) {
  const uint16_t type = static_cast<uint16_t>(m->type);
  uint64_t explen = kHeaderLen;
  switch (m->type) {
    case MsgType::kFail:
      explen += kNameLen;
      if (totlen != explen) return LengthMismatch(type, totlen, explen, error);
      m->fail_about = r.Name();
      return true;
    case MsgType::kPublish:
    case MsgType::kPublishShard: {
      // The two lengths must be there before they can be read.
      explen += kPublishFixedLen;
      if (totlen < explen) return LengthMismatch(type, totlen, explen, error);
      const uint32_t channel_len = r.U32();
      const uint32_t message_len = r.U32();
      explen += uint64_t{channel_len} + message_len;
      if (totlen != explen) return LengthMismatch(type, totlen, explen, error);
      m->channel = std::string(r.Bytes(channel_len));
      m->message = std::string(r.Bytes(message_len));
      return true;
    }
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      if (totlen != explen) return LengthMismatch(type, totlen, explen, error);
      return true;
    case MsgType::kUpdate:
      explen += kUpdateLen;
      if (totlen != explen) return LengthMismatch(type, totlen, explen, error);
      m->update_config_epoch = r.U64();
      m->update_name = r.Name();
      r.Slots(&m->update_slots);
      return true;
    case MsgType::kModule: {
      explen += kModuleFixedLen;
      if (totlen < explen) return LengthMismatch(type, totlen, explen, error);
      m->module_id = r.U64();
      const uint32_t len = r.U32();
      m->module_type = r.U8();
      explen += len;
      if (totlen != explen) return LengthMismatch(type, totlen, explen, error);
      m->module_payload = std::string(r.Bytes(len));
      return true;
    }
    default:
      // A type this version does not know: Redis takes its length on trust
      // and ignores its body.
      return true;
  }
}

}  // namespace

std::string_view MsgTypeName(uint16_t type) { return type < kMsgTypeCount ? kTypeNames[type] : "unknown"; }

size_t EncodedLength(const BusMessage& m) {
  switch (m.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      return kHeaderLen + m.gossip.size() * kGossipLen + PlanExtensions(m).bytes;
    case MsgType::kFail:
      return kHeaderLen + kNameLen;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      return kHeaderLen + kPublishFixedLen + m.channel.size() + m.message.size();
    case MsgType::kUpdate:
      return kHeaderLen + kUpdateLen;
    case MsgType::kModule:
      return kHeaderLen + kModuleFixedLen + m.module_payload.size();
    default:
      return kHeaderLen;
  }
}

void Encode(const BusMessage& m, std::string* out) {
  const size_t total = EncodedLength(m);
  const bool ping = IsPingType(m.type);
  const ExtensionPlan plan = PlanExtensions(m);
  out->reserve(out->size() + total);
  Writer w(out);

  w.Bytes(kSignature);
  w.U32(static_cast<uint32_t>(total));
  w.U16(kProtocolVersion);
  w.U16(m.port);
  w.U16(static_cast<uint16_t>(m.type));
  w.U16(ping ? static_cast<uint16_t>(m.gossip.size()) : 0);
  w.U64(m.current_epoch);
  w.U64(m.config_epoch);
  w.U64(m.offset);
  w.Fixed(m.sender, kNameLen);
  w.Slots(m.myslots);
  w.Fixed(m.slaveof, kNameLen);
  w.Ip(m.myip);
  w.U16(static_cast<uint16_t>(plan.count));
  w.Zeros(kHeaderReservedLen);
  w.U16(m.pport);
  w.U16(m.cport);
  w.U16(m.flags);
  w.U8(m.state);
  w.U8(plan.count > 0 ? static_cast<uint8_t>(m.mflags[0] | kMsgFlag0ExtData) : m.mflags[0]);
  w.U8(m.mflags[1]);
  w.U8(m.mflags[2]);

  switch (m.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      for (const Gossip& g : m.gossip) {
        w.Fixed(g.name, kNameLen);
        w.U32(g.ping_sent);
        w.U32(g.pong_received);
        w.Ip(g.ip);
        w.U16(g.port);
        w.U16(g.cport);
        w.U16(g.flags);
        w.U16(g.pport);
        w.Zeros(kGossipReservedLen);
      }
      if (plan.count == 0) break;
      if (!m.hostname.empty()) w.StringExt(PingExtType::kHostname, m.hostname);
      if (!m.human_nodename.empty()) w.StringExt(PingExtType::kHumanNodename, m.human_nodename);
      for (const ForgottenNode& f : m.forgotten) {
        w.U32(kExtHeaderLen + kForgottenNodeDataLen);
        w.U16(static_cast<uint16_t>(PingExtType::kForgottenNode));
        w.U16(0);
        w.Fixed(f.name, kNameLen);
        w.U64(f.ttl_s);
      }
      if (!m.shard_id.empty()) {
        w.U32(kExtHeaderLen + kShardIdDataLen);
        w.U16(static_cast<uint16_t>(PingExtType::kShardId));
        w.U16(0);
        w.Fixed(m.shard_id, kNameLen);
      }
      break;
    case MsgType::kFail:
      w.Fixed(m.fail_about, kNameLen);
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      w.U32(static_cast<uint32_t>(m.channel.size()));
      w.U32(static_cast<uint32_t>(m.message.size()));
      w.Bytes(m.channel);
      w.Bytes(m.message);
      break;
    case MsgType::kUpdate:
      w.U64(m.update_config_epoch);
      w.Fixed(m.update_name, kNameLen);
      w.Slots(m.update_slots);
      break;
    case MsgType::kModule:
      w.U64(m.module_id);
      w.U32(static_cast<uint32_t>(m.module_payload.size()));
      w.U8(m.module_type);
      w.Bytes(m.module_payload);
      break;
    default:
      break;
  }
}

DecodeStatus Decode(std::string_view in, BusMessage* m, size_t* consumed, std::string* error) {
  // As Redis reads a link: 8 bytes first (signature and length), checked
  // before the rest is waited for.
  if (in.size() < 8) {
    *consumed = 8;
    return DecodeStatus::kNeedMore;
  }
  Reader r(in);
  const std::string_view signature = r.Bytes(4);
  const uint32_t totlen = r.U32();
  if (signature != kSignature || totlen < kHeaderLen) {
    *consumed = 0;
    *error = "Bad message length or signature received on the Cluster bus.";
    return DecodeStatus::kBad;
  }
  if (totlen > kMaxMessageLen) {
    *consumed = 0;
    *error = Printf("Message length %" PRIu32 " over the limit of %" PRIu32 " bytes received on the Cluster bus.",
                    totlen, kMaxMessageLen);
    return DecodeStatus::kBad;
  }
  if (in.size() < totlen) {
    *consumed = totlen;
    return DecodeStatus::kNeedMore;
  }
  // From here on the message is framed: even a refused one has a known end.
  *consumed = totlen;
  r = Reader(in.substr(0, totlen));
  r.Skip(8);

  BusMessage msg;
  const uint16_t version = r.U16();
  msg.port = r.U16();
  const uint16_t type = r.U16();
  msg.type = static_cast<MsgType>(type);
  const uint16_t count = r.U16();
  msg.current_epoch = r.U64();
  msg.config_epoch = r.U64();
  msg.offset = r.U64();
  msg.sender = r.Name();
  r.Slots(&msg.myslots);
  msg.slaveof = r.Name();
  msg.myip = r.Ip();
  const uint16_t extensions = r.U16();
  r.Skip(kHeaderReservedLen);
  msg.pport = r.U16();
  msg.cport = r.U16();
  msg.flags = r.U16();
  msg.state = r.U8();
  for (uint8_t& f : msg.mflags) f = r.U8();

  if (version != kProtocolVersion) {
    *error = Printf("Can't handle messages of protocol version %u (this node speaks %u)", unsigned{version},
                    unsigned{kProtocolVersion});
    return DecodeStatus::kBad;
  }
  const bool ok = IsPingType(msg.type) ? DecodePingBody(r, totlen, count, extensions, &msg, error)
                                       : DecodeOtherBody(r, totlen, &msg, error);
  if (!ok) return DecodeStatus::kBad;
  if (r.overran()) {
    // Unreachable: every length was checked before its field was read.
    *error = "Internal error: a cluster bus message was read past its end";
    return DecodeStatus::kBad;
  }
  *m = std::move(msg);
  return DecodeStatus::kOk;
}

}  // namespace peregrine::cluster
