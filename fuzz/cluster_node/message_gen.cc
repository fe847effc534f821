// The cluster_node fuzzer's generator (message_gen.h): from the input's
// operations to cluster bus messages on the wire.
#include "cluster_node/message_gen.h"

#include <ctime>
#include <limits>

namespace cluster_node_fuzz {

using namespace peregrine::cluster;

namespace {

constexpr int kSlots = static_cast<int>(kSlotBytes * 8);

std::string Repeat(char c) { return std::string(kNameLen, c); }

// Ids no one knows at first: gossip may add them.
std::string PoolId(int i) { return std::string(kNameLen - 1, '1') + "0123456789ab"[i % 12]; }

// The addresses a message may give; 127.0.0.N is where nodes.conf puts
// the N-th node (the node under test is 127.0.0.1).
constexpr const char* kIps[] = {"", "127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6",
                                "10.0.0.9"};

// Hostnames and human nodenames: plain ones, and ones nodes.conf and
// CLUSTER NODES could not hold as they are.
constexpr const char* kTexts[] = {"host-b", "host-c.example", "h", "with space", "comma,here", "eq=sign",
                                  "line\nbreak", ",shard-id=zz", "\xff\xfe", "tab\there", "host-e"};

}  // namespace

const std::vector<std::string>& BaselineIds() {
  static const std::vector<std::string> ids = {Repeat('a'), Repeat('b'), Repeat('c'),
                                               Repeat('d'), Repeat('e'), Repeat('f')};
  return ids;
}

void Generator::Run() {
  while (!in_->done()) {
    const uint8_t op = in_->Byte();
    switch (op & 7) {
      case 6:
        stream_.append(in_->Bytes(size_t{in_->Byte()} + 1));
        break;
      case 7:
        Flush();
        break;
      default:
        Message(op);
        break;
    }
  }
  Flush();
}

void Generator::Flush() {
  if (stream_.empty()) return;
  feed_(stream_);
  stream_.clear();
  view_valid_ = false;
}

const View& Generator::view() {
  if (!view_valid_) {
    view_ = View{};
    refresh_(&view_);
    view_valid_ = true;
  }
  return view_;
}

std::string Generator::Name() {
  const uint8_t b = in_->Byte();
  if (b >= 0x80) {
    const View& v = view();
    return v.ids.empty() ? std::string() : v.ids[(b - 0x80u) % v.ids.size()];
  }
  const std::vector<std::string>& known = BaselineIds();
  const int k = b % 32;
  if (k < 6) return known[static_cast<size_t>(k)];
  if (k < 18) return PoolId(k - 6);
  switch (k) {
    case 18: return "";  // all zeros: no one
    case 19: return Repeat('X');  // capitals: not an id
    case 20: return std::string(kNameLen - 1, 'b');  // 39 bytes: a NUL at the end on the wire
    case 21: return Repeat(static_cast<char>('g' + in_->Byte() % 20));
    case 22: return std::string(kNameLen - 1, 'b') + 'c';
    case 23: return std::string(20, 'a') + '\0' + std::string(19, 'a');
    default: break;
  }
  // 24..31: the known nodes again, so that most names mean something.
  return known[static_cast<size_t>(k - 24) % known.size()];
}

uint64_t Generator::Epoch() {
  const uint8_t b = in_->Byte();
  // Mostly small, so that epochs meet and collide; a few huge.
  if (b < 0xf0) return b % 12;
  if (b == 0xfe) return std::numeric_limits<uint64_t>::max() - 1;
  if (b == 0xff) return std::numeric_limits<uint64_t>::max();
  return 1000u + b;
}

void Generator::Slots(SlotBitmap* out, const std::string& base_owner) {
  const uint8_t spec = in_->Byte();
  *out = SlotBitmap{};
  if (spec & 0x80) {
    const View& v = view();
    auto it = v.slots.find(base_owner);
    if (it != v.slots.end()) *out = it->second;
  }
  for (int r = spec & 3; r > 0; r--) {
    const uint8_t how = in_->Byte();
    const int first = in_->U16() % kSlots;
    const uint8_t len = in_->Byte();
    const int count = len < 200 ? len + 1 : 1 << std::min(len - 200, 14);
    for (int s = first; s < first + count && s < kSlots; s++) {
      if (how & 1)
        (*out)[static_cast<size_t>(s) >> 3] &= static_cast<uint8_t>(~(1u << (s & 7)));
      else
        SetSlotBit(*out, s);
    }
  }
}

void Generator::Address(std::string* ip, uint16_t* port, uint16_t* cport, uint16_t* pport) {
  const uint8_t a = in_->Byte();
  *ip = kIps[a & 7];
  *port = static_cast<uint16_t>(6999 + ((a >> 3) & 7));
  *cport = (a & 0x40) ? 0 : static_cast<uint16_t>(*port + 10000);
  *pport = (a & 0x80) ? static_cast<uint16_t>(*port + 100) : 0;
}

std::string Generator::Text() {
  const uint8_t t = in_->Byte();
  if (t < 0xe0) return kTexts[t % (sizeof(kTexts) / sizeof(kTexts[0]))];
  // Bytes of the input's (a NUL ends them on the wire).
  return std::string(in_->Bytes(t - 0xe0u + 1));
}

void Generator::Header(BusMessage* m) {
  m->sender = Name();
  m->current_epoch = Epoch();
  m->config_epoch = Epoch();
  const uint8_t f = in_->Byte();
  m->flags = static_cast<uint16_t>((f & 0x7f) | ((f & 0x80) ? kNodeNoFailover : 0));
  if (in_->Byte() >= 0x40) m->slaveof = Name();
  Slots(&m->myslots, m->sender);
  Address(&m->myip, &m->port, &m->cport, &m->pport);
  m->offset = in_->Byte();
  m->mflags[0] = in_->Byte() & (kMsgFlag0Paused | kMsgFlag0ForceAck);
  m->state = in_->Byte() & 1;
}

void Generator::PingBody(BusMessage* m) {
  const uint32_t now_s = static_cast<uint32_t>(std::time(nullptr));
  for (int n = in_->Byte() % 6; n > 0; n--) {
    Gossip g;
    g.name = Name();
    g.flags = in_->Byte();
    Address(&g.ip, &g.port, &g.cport, &g.pport);
    const uint8_t age = in_->Byte();
    g.pong_received = age == 0xff ? 0 : now_s - age;
    g.ping_sent = (age & 1) ? now_s : 0;
    m->gossip.push_back(std::move(g));
  }
  const uint8_t ext = in_->Byte();
  if (ext & 0x01) m->hostname = Text();
  if (ext & 0x02) m->human_nodename = Text();
  if (ext & 0x04) m->shard_id = Name();
  if (ext & 0x08) {
    for (int n = in_->Byte() % 3 + 1; n > 0; n--) {
      ForgottenNode f;
      f.name = Name();
      f.ttl_s = in_->Byte();
      m->forgotten.push_back(std::move(f));
    }
  }
}

void Generator::Message(uint8_t op) {
  BusMessage m;
  static constexpr MsgType kTypes[] = {MsgType::kPing, MsgType::kPong, MsgType::kMeet, MsgType::kFail,
                                       MsgType::kUpdate};
  const int kind = op & 7;
  if (kind < 5) {
    m.type = kTypes[kind];
  } else {
    static constexpr MsgType kOthers[] = {MsgType::kPublish,          MsgType::kPublishShard,
                                          MsgType::kFailoverAuthRequest, MsgType::kFailoverAuthAck,
                                          MsgType::kMfStart,          MsgType::kModule};
    const uint8_t t = in_->Byte();
    m.type = t % 8 < 6 ? kOthers[t % 8] : static_cast<MsgType>(kMsgTypeCount + t / 8);
  }
  Header(&m);
  switch (m.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      PingBody(&m);
      break;
    case MsgType::kFail:
      m.fail_about = Name();
      break;
    case MsgType::kUpdate:
      m.update_name = Name();
      m.update_config_epoch = Epoch();
      Slots(&m.update_slots, m.update_name);
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      m.channel = Text();
      m.message = Text();
      break;
    case MsgType::kModule:
      m.module_id = in_->Byte();
      m.module_type = in_->Byte();
      m.module_payload = Text();
      break;
    default:
      break;
  }
  m.extensions_on = !(op & 0x40);
  std::string wire;
  Encode(m, &wire);
  if (op & 0x08) {
    const size_t at = in_->U16() % wire.size();
    wire[at] = static_cast<char>(wire[at] ^ (in_->Byte() | 1));
  }
  if (op & 0x10) wire.resize(in_->U16() % wire.size());
  stream_ += wire;
  if (op & 0x80) stream_ += wire;
  if (op & 0x20) Flush();
}

}  // namespace cluster_node_fuzz
