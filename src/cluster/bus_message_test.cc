// The cluster bus codec: every type written and read back, the bytes at
// the header comment's offsets, the exact lengths, and each way Decode
// refuses a message (as Redis drops it, or where Redis would read past it).
#include "cluster/bus_message.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace peregrine::cluster {
namespace {

std::string NameOf(char c) { return std::string(kNameLen, c); }

uint64_t GetBE(const std::string& b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v = v << 8 | static_cast<uint8_t>(b.at(off + i));
  return v;
}

void PutBE(std::string* b, size_t off, size_t n, uint64_t v) {
  for (size_t i = n; i-- > 0;) {
    (*b).at(off + i) = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

// The header fields every message below carries, each a distinct value.
BusMessage Base(MsgType type) {
  BusMessage m;
  m.type = type;
  m.port = 7000;
  m.current_epoch = 0x0102030405060708ull;
  m.config_epoch = 0x1112131415161718ull;
  m.offset = 0x2122232425262728ull;
  m.sender = NameOf('a');
  SetSlotBit(m.myslots, 0);
  SetSlotBit(m.myslots, 9);
  SetSlotBit(m.myslots, 16383);
  m.slaveof = NameOf('b');
  m.myip = "10.0.0.1";
  m.pport = 7001;
  m.cport = 17000;
  m.flags = kNodeMaster | kNodeMyself;
  m.state = 1;
  m.mflags = {kMsgFlag0Paused, 0, 0};
  return m;
}

BusMessage FullPing(MsgType type = MsgType::kPing) {
  BusMessage m = Base(type);
  Gossip g;
  g.name = NameOf('c');
  g.ping_sent = 0xA1A2A3A4;
  g.pong_received = 0xB1B2B3B4;
  g.ip = "::1";
  g.port = 7002;
  g.cport = 17002;
  g.flags = kNodeSlave | kNodePfail;
  g.pport = 7003;
  m.gossip.push_back(g);
  g.name = NameOf('d');
  g.ip = "192.168.100.200";
  m.gossip.push_back(g);
  m.hostname = "host.example";       // 12 + NUL -> 16: extension 24
  m.human_nodename = "node-1";       // 6 + NUL -> 8: extension 16
  m.forgotten.push_back({NameOf('e'), 60});
  m.forgotten.push_back({NameOf('f'), 1});
  m.shard_id = NameOf('9');
  return m;
}

// Encodes m, checks the length, decodes it and returns what came back.
BusMessage RoundTrip(const BusMessage& m, size_t want_len) {
  std::string wire;
  Encode(m, &wire);
  EXPECT_EQ(wire.size(), want_len);
  EXPECT_EQ(EncodedLength(m), want_len);
  EXPECT_EQ(GetBE(wire, 4, 4), want_len);
  BusMessage back;
  size_t consumed = 0;
  std::string error;
  EXPECT_EQ(Decode(wire, &back, &consumed, &error), DecodeStatus::kOk) << error;
  EXPECT_EQ(consumed, want_len);
  return back;
}

// Decodes `wire`, expecting a refusal whose text contains `want`.
void ExpectBad(const std::string& wire, const std::string& want) {
  BusMessage m;
  size_t consumed = 12345;
  std::string error;
  ASSERT_EQ(Decode(wire, &m, &consumed, &error), DecodeStatus::kBad) << "expected: " << want;
  EXPECT_NE(error.find(want), std::string::npos) << error;
  EXPECT_TRUE(consumed == 0 || consumed == GetBE(wire, 4, 4));
}

std::string Wire(const BusMessage& m) {
  std::string s;
  Encode(m, &s);
  return s;
}

TEST(BusMessage, TypeNamesAreRedis) {
  const char* want[] = {"ping",    "pong",   "meet",    "fail",   "publish", "auth-req",
                        "auth-ack", "update", "mfstart", "module", "publishshard"};
  for (int i = 0; i < kMsgTypeCount; i++) EXPECT_EQ(MsgTypeName(uint16_t(i)), want[i]);
  EXPECT_EQ(MsgTypeName(11), "unknown");
  EXPECT_EQ(MsgTypeName(65535), "unknown");
}

TEST(BusMessage, HeaderAndPingBytesAtTheirOffsets) {
  const BusMessage m = FullPing();
  const std::string w = Wire(m);
  const size_t want = kHeaderLen + 2 * kGossipLen + 24 + 16 + 2 * 56 + 48;
  ASSERT_EQ(w.size(), want);
  EXPECT_EQ(w.substr(0, 4), "RCmb");
  EXPECT_EQ(GetBE(w, 4, 4), want);
  EXPECT_EQ(GetBE(w, 8, 2), 1u);
  EXPECT_EQ(GetBE(w, 10, 2), 7000u);
  EXPECT_EQ(GetBE(w, 12, 2), 0u);
  EXPECT_EQ(GetBE(w, 14, 2), 2u);
  EXPECT_EQ(GetBE(w, 16, 8), 0x0102030405060708ull);
  EXPECT_EQ(GetBE(w, 24, 8), 0x1112131415161718ull);
  EXPECT_EQ(GetBE(w, 32, 8), 0x2122232425262728ull);
  EXPECT_EQ(w.substr(40, 40), NameOf('a'));
  // Slots 0 and 9 (byte 1, bit 1) and 16383 (byte 2047, bit 7).
  EXPECT_EQ(uint8_t(w[80]), 0x01);
  EXPECT_EQ(uint8_t(w[81]), 0x02);
  EXPECT_EQ(uint8_t(w[80 + 2047]), 0x80);
  EXPECT_EQ(w.substr(2128, 40), NameOf('b'));
  EXPECT_EQ(w.substr(2168, 46), std::string("10.0.0.1") + std::string(38, '\0'));
  EXPECT_EQ(GetBE(w, 2214, 2), 5u);  // hostname, nodename, 2 forgotten, shard id
  EXPECT_EQ(w.substr(2216, 30), std::string(30, '\0'));
  EXPECT_EQ(GetBE(w, 2246, 2), 7001u);
  EXPECT_EQ(GetBE(w, 2248, 2), 17000u);
  EXPECT_EQ(GetBE(w, 2250, 2), uint64_t{kNodeMaster | kNodeMyself});
  EXPECT_EQ(uint8_t(w[2252]), 1);
  EXPECT_EQ(uint8_t(w[2253]), kMsgFlag0Paused | kMsgFlag0ExtData);
  EXPECT_EQ(uint8_t(w[2254]), 0);
  EXPECT_EQ(uint8_t(w[2255]), 0);
  // The first gossip section.
  size_t g = 2256;
  EXPECT_EQ(w.substr(g, 40), NameOf('c'));
  EXPECT_EQ(GetBE(w, g + 40, 4), 0xA1A2A3A4u);
  EXPECT_EQ(GetBE(w, g + 44, 4), 0xB1B2B3B4u);
  EXPECT_EQ(w.substr(g + 48, 46), std::string("::1") + std::string(43, '\0'));
  EXPECT_EQ(GetBE(w, g + 94, 2), 7002u);
  EXPECT_EQ(GetBE(w, g + 96, 2), 17002u);
  EXPECT_EQ(GetBE(w, g + 98, 2), uint64_t{kNodeSlave | kNodePfail});
  EXPECT_EQ(GetBE(w, g + 100, 2), 7003u);
  EXPECT_EQ(GetBE(w, g + 102, 2), 0u);
  EXPECT_EQ(w.substr(g + kGossipLen, 40), NameOf('d'));
  // The extensions, in order: hostname, human nodename, forgotten nodes,
  // shard id; each length counts its header and is a multiple of 8.
  size_t e = 2256 + 2 * kGossipLen;
  EXPECT_EQ(GetBE(w, e, 4), 24u);
  EXPECT_EQ(GetBE(w, e + 4, 2), 0u);
  EXPECT_EQ(GetBE(w, e + 6, 2), 0u);
  EXPECT_EQ(w.substr(e + 8, 16), std::string("host.example") + std::string(4, '\0'));
  e += 24;
  EXPECT_EQ(GetBE(w, e, 4), 16u);
  EXPECT_EQ(GetBE(w, e + 4, 2), 1u);
  EXPECT_EQ(w.substr(e + 8, 8), std::string("node-1\0\0", 8));
  e += 16;
  EXPECT_EQ(GetBE(w, e, 4), 56u);
  EXPECT_EQ(GetBE(w, e + 4, 2), 2u);
  EXPECT_EQ(w.substr(e + 8, 40), NameOf('e'));
  EXPECT_EQ(GetBE(w, e + 48, 8), 60u);
  e += 56;
  EXPECT_EQ(w.substr(e + 8, 40), NameOf('f'));
  e += 56;
  EXPECT_EQ(GetBE(w, e, 4), 48u);
  EXPECT_EQ(GetBE(w, e + 4, 2), 3u);
  EXPECT_EQ(w.substr(e + 8, 40), NameOf('9'));
  EXPECT_EQ(e + 48, w.size());
}

TEST(BusMessage, StringExtensionsAreNulTerminatedAndPaddedTo8) {
  for (size_t len : {1, 6, 7, 8, 9, 15, 16, 100}) {
    BusMessage m = Base(MsgType::kPing);
    m.hostname = std::string(len, 'h');
    const std::string w = Wire(m);
    const size_t ext = 8 + (len + 1 + 7) / 8 * 8;
    ASSERT_EQ(w.size(), kHeaderLen + ext) << len;
    EXPECT_EQ(GetBE(w, kHeaderLen, 4), ext);
    EXPECT_EQ(w.substr(kHeaderLen + 8 + len), std::string(ext - 8 - len, '\0'));
    EXPECT_EQ(RoundTrip(m, kHeaderLen + ext).hostname, m.hostname);
  }
}

TEST(BusMessage, PingPongMeetRoundTrip) {
  for (MsgType t : {MsgType::kPing, MsgType::kPong, MsgType::kMeet}) {
    const BusMessage m = FullPing(t);
    BusMessage back = RoundTrip(m, kHeaderLen + 2 * kGossipLen + 24 + 16 + 2 * 56 + 48);
    EXPECT_EQ(back.type, t);
    EXPECT_EQ(back.gossip, m.gossip);
    EXPECT_EQ(back.hostname, "host.example");
    EXPECT_EQ(back.human_nodename, "node-1");
    EXPECT_EQ(back.forgotten, m.forgotten);
    EXPECT_EQ(back.shard_id, m.shard_id);
    EXPECT_EQ(back.unknown_extensions, 0);
    EXPECT_TRUE(back.extensions_on);
    // The flag Encode adds comes back in mflags; otherwise all is equal.
    EXPECT_EQ(back.mflags[0], kMsgFlag0Paused | kMsgFlag0ExtData);
    back.mflags[0] = kMsgFlag0Paused;
    EXPECT_TRUE(back == m);
  }
}

TEST(BusMessage, PingWithoutExtensions) {
  // Nothing to send: no extensions, no flag.
  BusMessage m = Base(MsgType::kPong);
  BusMessage back = RoundTrip(m, kHeaderLen);
  EXPECT_FALSE(back.extensions_on);
  EXPECT_EQ(back.mflags[0], kMsgFlag0Paused);
  // extensions_on off: the strings stay home.
  m = FullPing();
  m.extensions_on = false;
  const std::string w = Wire(m);
  EXPECT_EQ(w.size(), kHeaderLen + 2 * kGossipLen);
  EXPECT_EQ(GetBE(w, 2214, 2), 0u);
  EXPECT_EQ(uint8_t(w[2253]), kMsgFlag0Paused);
  back = RoundTrip(m, kHeaderLen + 2 * kGossipLen);
  EXPECT_EQ(back.gossip, m.gossip);
  EXPECT_TRUE(back.hostname.empty());
  EXPECT_TRUE(back.forgotten.empty());
  EXPECT_TRUE(back.shard_id.empty());
}

TEST(BusMessage, OtherTypesRoundTrip) {
  BusMessage m = Base(MsgType::kFail);
  m.fail_about = NameOf('x');
  std::string w = Wire(m);
  EXPECT_EQ(w.substr(2256, 40), NameOf('x'));
  EXPECT_TRUE(RoundTrip(m, kHeaderLen + 40) == m);

  for (MsgType t : {MsgType::kPublish, MsgType::kPublishShard}) {
    m = Base(t);
    m.channel = "news";
    m.message = std::string("he\0llo", 6);
    w = Wire(m);
    EXPECT_EQ(GetBE(w, 2256, 4), 4u);
    EXPECT_EQ(GetBE(w, 2260, 4), 6u);
    EXPECT_EQ(w.substr(2264), std::string("newshe\0llo", 10));
    EXPECT_TRUE(RoundTrip(m, kHeaderLen + 8 + 10) == m);
    m.channel.clear();
    m.message.clear();
    EXPECT_TRUE(RoundTrip(m, kHeaderLen + 8) == m);
  }

  m = Base(MsgType::kUpdate);
  m.update_config_epoch = 0x3132333435363738ull;
  m.update_name = NameOf('u');
  SetSlotBit(m.update_slots, 100);
  SetSlotBit(m.update_slots, 16000);
  w = Wire(m);
  EXPECT_EQ(GetBE(w, 2256, 8), 0x3132333435363738ull);
  EXPECT_EQ(w.substr(2264, 40), NameOf('u'));
  EXPECT_EQ(uint8_t(w[2304 + 100 / 8]), 1u << (100 % 8));
  BusMessage back = RoundTrip(m, kHeaderLen + 8 + 40 + 2048);
  EXPECT_TRUE(SlotBit(back.update_slots, 16000));
  EXPECT_FALSE(SlotBit(back.update_slots, 16001));
  EXPECT_TRUE(back == m);

  m = Base(MsgType::kModule);
  m.module_id = 0x4142434445464748ull;
  m.module_type = 7;
  m.module_payload = "payload";
  w = Wire(m);
  EXPECT_EQ(GetBE(w, 2256, 8), 0x4142434445464748ull);
  EXPECT_EQ(GetBE(w, 2264, 4), 7u);
  EXPECT_EQ(uint8_t(w[2268]), 7);
  EXPECT_EQ(w.substr(2269), "payload");
  EXPECT_TRUE(RoundTrip(m, kHeaderLen + 13 + 7) == m);
  m.module_payload.clear();
  EXPECT_TRUE(RoundTrip(m, kHeaderLen + 13) == m);

  for (MsgType t : {MsgType::kFailoverAuthRequest, MsgType::kFailoverAuthAck, MsgType::kMfStart}) {
    m = Base(t);
    EXPECT_TRUE(RoundTrip(m, kHeaderLen) == m);
  }
}

TEST(BusMessage, NamesAndAddresses) {
  BusMessage m = Base(MsgType::kFail);
  m.sender.clear();
  m.slaveof.clear();
  m.myip.clear();
  std::string w = Wire(m);
  EXPECT_EQ(w.substr(40, 40), std::string(40, '\0'));
  EXPECT_EQ(w.substr(2168, 46), std::string(46, '\0'));
  BusMessage back = RoundTrip(m, kHeaderLen + 40);
  EXPECT_TRUE(back.sender.empty());
  EXPECT_TRUE(back.slaveof.empty());
  EXPECT_TRUE(back.myip.empty());
  // A name with a NUL inside is still a name (only all zeros is none).
  w[40] = 'z';
  size_t consumed;
  std::string error;
  ASSERT_EQ(Decode(w, &back, &consumed, &error), DecodeStatus::kOk);
  EXPECT_EQ(back.sender, std::string("z") + std::string(39, '\0'));
  // An IP is cut at kIpLen - 1 characters both ways.
  m.myip = std::string(60, '1');
  w = Wire(m);
  EXPECT_EQ(w.substr(2168, 46), std::string(45, '1') + '\0');
  EXPECT_EQ(RoundTrip(m, kHeaderLen + 40).myip, std::string(45, '1'));
  std::fill(w.begin() + 2168, w.begin() + 2214, '2');
  ASSERT_EQ(Decode(w, &back, &consumed, &error), DecodeStatus::kOk);
  EXPECT_EQ(back.myip, std::string(45, '2'));
}

TEST(BusMessage, EveryPrefixNeedsMore) {
  const std::string w = Wire(FullPing());
  for (size_t n = 0; n <= w.size(); n++) {
    BusMessage m;
    size_t consumed = 0;
    std::string error;
    const DecodeStatus s = Decode(std::string_view(w).substr(0, n), &m, &consumed, &error);
    if (n == w.size()) {
      EXPECT_EQ(s, DecodeStatus::kOk) << error;
      EXPECT_EQ(consumed, w.size());
    } else {
      ASSERT_EQ(s, DecodeStatus::kNeedMore) << n;
      EXPECT_EQ(consumed, n < 8 ? 8 : w.size()) << n;
    }
  }
}

TEST(BusMessage, AStreamOfMessagesOneAtATime) {
  std::string stream = Wire(FullPing());
  BusMessage fail = Base(MsgType::kFail);
  fail.fail_about = NameOf('x');
  Encode(fail, &stream);
  Encode(Base(MsgType::kMfStart), &stream);
  std::vector<MsgType> got;
  std::string_view rest = stream;
  BusMessage m;
  size_t consumed;
  std::string error;
  while (Decode(rest, &m, &consumed, &error) == DecodeStatus::kOk) {
    got.push_back(m.type);
    rest.remove_prefix(consumed);
  }
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(consumed, 8u);
  EXPECT_EQ(got, (std::vector<MsgType>{MsgType::kPing, MsgType::kFail, MsgType::kMfStart}));
}

TEST(BusMessage, RefusesBadSignatureLengthAndVersion) {
  const std::string good = Wire(Base(MsgType::kMfStart));
  std::string w = good;
  w[3] = 'x';
  ExpectBad(w, "Bad message length or signature");
  // Known bad from the first 8 bytes, as Redis checks them.
  ExpectBad(w.substr(0, 8), "Bad message length or signature");
  w = good;
  PutBE(&w, 4, 4, kHeaderLen - 1);
  ExpectBad(w, "Bad message length or signature");
  PutBE(&w, 4, 4, 16);
  ExpectBad(w, "Bad message length or signature");
  PutBE(&w, 4, 4, uint64_t{kMaxMessageLen} + 1);
  ExpectBad(w.substr(0, 8), "over the limit");
  w = good;
  PutBE(&w, 8, 2, 2);
  ExpectBad(w, "protocol version");
  PutBE(&w, 8, 2, 0);
  ExpectBad(w, "protocol version");
  // A refused message that is whole gives its length, to be skipped.
  BusMessage m;
  size_t consumed = 0;
  std::string error;
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kBad);
  EXPECT_EQ(consumed, kHeaderLen);
}

TEST(BusMessage, LengthMustBeExactlyWhatTheTypeNeeds) {
  // One byte more than the body needs (the length field says so too).
  const auto longer = [](BusMessage m) {
    std::string w = Wire(m);
    w.push_back('\0');
    PutBE(&w, 4, 4, w.size());
    return w;
  };
  BusMessage fail = Base(MsgType::kFail);
  ExpectBad(longer(fail), "Received invalid fail packet of length 2297 but expected length 2296");
  ExpectBad(longer(Base(MsgType::kFailoverAuthRequest)), "invalid auth-req packet");
  ExpectBad(longer(Base(MsgType::kFailoverAuthAck)), "invalid auth-ack packet");
  ExpectBad(longer(Base(MsgType::kMfStart)), "invalid mfstart packet");
  ExpectBad(longer(Base(MsgType::kUpdate)), "invalid update packet of length 4353 but expected length 4352");
  BusMessage pub = Base(MsgType::kPublish);
  pub.channel = "c";
  ExpectBad(longer(pub), "invalid publish packet of length 2266 but expected length 2265");
  pub.type = MsgType::kPublishShard;
  ExpectBad(longer(pub), "invalid publishshard packet");
  BusMessage mod = Base(MsgType::kModule);
  ExpectBad(longer(mod), "invalid module packet of length 2270 but expected length 2269");
  ExpectBad(longer(Base(MsgType::kPing)), "invalid ping packet of length 2257 but expected length 2256");
  ExpectBad(longer(FullPing(MsgType::kMeet)), "invalid meet packet");

  // A body too short for the fixed fields it must hold.
  std::string w = Wire(Base(MsgType::kMfStart));
  PutBE(&w, 12, 2, uint16_t(MsgType::kFail));
  ExpectBad(w, "invalid fail packet of length 2256 but expected length 2296");
  PutBE(&w, 12, 2, uint16_t(MsgType::kPublish));
  ExpectBad(w, "invalid publish packet of length 2256 but expected length 2264");
  PutBE(&w, 12, 2, uint16_t(MsgType::kModule));
  ExpectBad(w, "invalid module packet of length 2256 but expected length 2269");
  PutBE(&w, 12, 2, uint16_t(MsgType::kUpdate));
  ExpectBad(w, "invalid update packet");

  // PUBLISH's lengths past the message, and wrapping 32 bits (Redis adds
  // them in 32 bits: 0xFFFFFFFF + 1 would be 0 there).
  w = Wire(pub);
  PutBE(&w, 2256, 4, 2);
  ExpectBad(w, "expected length 2266");
  PutBE(&w, 2256, 4, 0xFFFFFFFF);
  PutBE(&w, 2260, 4, 2);
  ExpectBad(w, "expected length 4294969561");
  // MODULE's likewise.
  mod.module_payload = "abc";
  w = Wire(mod);
  PutBE(&w, 2264, 4, 0xFFFFFFFE);
  ExpectBad(w, "expected length 4294969563");
}

TEST(BusMessage, GossipCountMustFitTheLength) {
  std::string w = Wire(FullPing());
  PutBE(&w, 14, 2, 100);
  ExpectBad(w, "Received invalid ping packet of length 2664 but expected length 12656");
  w = Wire(FullPing());
  // A count that still fits: the extensions are read as gossip, and the
  // bytes after as extension headers, which do not add up.
  PutBE(&w, 14, 2, 3);
  ExpectBad(w, "Received a ping packet without proper padding");
  PutBE(&w, 14, 2, 1);
  ExpectBad(w, "Received a ping packet without proper padding");
}

// A PING with one hostname extension "abc" (length 16) at kHeaderLen.
std::string PingWithHostname() {
  BusMessage m = Base(MsgType::kPing);
  m.hostname = "abc";
  return Wire(m);
}

TEST(BusMessage, RefusesBadExtensions) {
  std::string w = PingWithHostname();
  ASSERT_EQ(w.size(), kHeaderLen + 16);
  PutBE(&w, kHeaderLen, 4, 12);
  ExpectBad(w, "Received a ping packet without proper padding (12 bytes)");
  PutBE(&w, kHeaderLen, 4, 0);
  ExpectBad(w, "Received a ping packet with an extension of 0 bytes");
  PutBE(&w, kHeaderLen, 4, 24);
  ExpectBad(w, "Received invalid ping packet with extension data that exceeds total packet length (2272)");
  PutBE(&w, kHeaderLen, 4, 0x10010);  // Redis reads 16 bits of it: 16
  ExpectBad(w, "exceeds total packet length");
  PutBE(&w, kHeaderLen, 4, 8);  // fits, but leaves 8 bytes unaccounted for
  ExpectBad(w, "invalid ping packet of length 2272 but expected length 2264");
  // More extensions counted than there are.
  w = PingWithHostname();
  PutBE(&w, 2214, 2, 2);
  ExpectBad(w, "exceeds total packet length (2272)");
  // Fewer: the rest is unaccounted for.
  PutBE(&w, 2214, 2, 0);
  ExpectBad(w, "of length 2272 but expected length 2256");
  // Fixed-size extensions too short for their data.
  w = PingWithHostname();
  PutBE(&w, kHeaderLen + 4, 2, uint16_t(PingExtType::kForgottenNode));
  ExpectBad(w, "forgotten node extension of 16 bytes (needs 56)");
  PutBE(&w, kHeaderLen + 4, 2, uint16_t(PingExtType::kShardId));
  ExpectBad(w, "shard id extension of 16 bytes (needs 48)");
}

TEST(BusMessage, ExtensionsOnlyWithTheFlag) {
  // Without kMsgFlag0ExtData the extensions are not part of the length.
  std::string w = PingWithHostname();
  w[2253] = 0;
  ExpectBad(w, "of length 2272 but expected length 2256");
  // ... and an `extensions` count without the flag would send Redis past
  // the message's end.
  w.resize(kHeaderLen);
  PutBE(&w, 4, 4, kHeaderLen);
  ExpectBad(w, "with 1 extensions but without the extension data flag");
  PutBE(&w, 2214, 2, 0);
  BusMessage m;
  size_t consumed;
  std::string error;
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kOk) << error;
  EXPECT_FALSE(m.extensions_on);
  // The flag with no extensions is fine.
  w[2253] = kMsgFlag0ExtData;
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kOk) << error;
  EXPECT_TRUE(m.extensions_on);
}

TEST(BusMessage, UnknownExtensionsAreSkippedAndCounted) {
  BusMessage full = FullPing();
  std::string w = Wire(full);
  // Make the hostname (the first) and the shard id (the last) unknown.
  const size_t first = kHeaderLen + 2 * kGossipLen;
  PutBE(&w, first + 4, 2, 77);
  PutBE(&w, w.size() - 48 + 4, 2, 4);
  BusMessage m;
  size_t consumed;
  std::string error;
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kOk) << error;
  EXPECT_EQ(m.unknown_extensions, 2);
  EXPECT_TRUE(m.hostname.empty());
  EXPECT_TRUE(m.shard_id.empty());
  EXPECT_EQ(m.human_nodename, "node-1");
  EXPECT_EQ(m.forgotten, full.forgotten);
  // A string extension without its NUL, and an empty one.
  w = PingWithHostname();
  w.replace(kHeaderLen + 8, 8, "12345678");
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kOk) << error;
  EXPECT_EQ(m.hostname, "12345678");
  w = PingWithHostname();
  w.resize(kHeaderLen + 8);
  PutBE(&w, 4, 4, w.size());
  PutBE(&w, kHeaderLen, 4, 8);
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kOk) << error;
  EXPECT_TRUE(m.hostname.empty());
}

TEST(BusMessage, UnknownTypeIsOnlyItsHeader) {
  std::string w = Wire(Base(MsgType::kMfStart));
  PutBE(&w, 12, 2, 42);
  w += "any body at all";
  PutBE(&w, 4, 4, w.size());
  BusMessage m;
  size_t consumed;
  std::string error;
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kOk) << error;
  EXPECT_EQ(consumed, w.size());
  EXPECT_EQ(uint16_t(m.type), 42);
  EXPECT_EQ(m.sender, NameOf('a'));
  EXPECT_EQ(MsgTypeName(uint16_t(m.type)), "unknown");
  // Written back: the header alone.
  EXPECT_EQ(EncodedLength(m), kHeaderLen);
  EXPECT_TRUE(RoundTrip(m, kHeaderLen) == m);
}

TEST(BusMessage, RefusalLeavesTheMessageAlone) {
  BusMessage m = Base(MsgType::kFail);
  m.fail_about = NameOf('q');
  const BusMessage before = m;
  std::string w = Wire(FullPing());
  PutBE(&w, kHeaderLen + 2 * kGossipLen, 4, 12);
  size_t consumed;
  std::string error;
  ASSERT_EQ(Decode(w, &m, &consumed, &error), DecodeStatus::kBad);
  EXPECT_TRUE(m == before);
}

}  // namespace
}  // namespace peregrine::cluster
