// The Redis Cluster bus's messages (Redis 7's binary format, protocol
// version 1), as values: what a node says to another over the cluster port.
// Encode writes the wire bytes; Decode reads one message and checks it as
// Redis's clusterIsValidPacket does, so a message Redis would drop is
// refused here too (and a hostile one never reads past its buffer). Pure
// functions of bytes: no sockets, no state (cluster_bus.h sends and reads
// them; cluster_state.h acts on them).
//
// The wire layout (all integers in network byte order, names NUL-padded to
// 40 bytes, an all-zero name meaning "none"):
//
//   offset  size  field
//        0     4  signature "RCmb"
//        4     4  totlen: the whole message's length
//        8     2  ver (1)
//       10     2  port: the sender's client port
//       12     2  type (MsgType)
//       14     2  count: gossip sections of a PING/PONG/MEET
//       16     8  currentEpoch
//       24     8  configEpoch (a replica's: its primary's)
//       32     8  offset (replication offset)
//       40    40  sender's node id
//       80  2048  the sender's slots (bit i of byte i/8, lowest bit first:
//                 slot s is byte s>>3, bit s&7)
//     2128    40  slaveof: the sender's primary, zeros if it is one
//     2168    46  myip: the sender's announced IP (NUL-terminated), or zeros
//     2214     2  extensions: ping extensions that follow the gossip
//     2216    30  reserved (zeros)
//     2246     2  pport: the other client port (TLS / plain)
//     2248     2  cport: the sender's bus port
//     2250     2  flags: the sender's node flags (kNode*)
//     2252     1  state: the cluster's state as the sender sees it (0 ok, 1 fail)
//     2253     3  mflags (kMsgFlag0*)
//     2256        the body, by type:
//   PING/PONG/MEET: `count` gossip sections of 104 bytes (name 40,
//     ping_sent 4, pong_received 4, ip 46, port 2, cport 2, flags 2, pport 2,
//     reserved 2), then `extensions` ping extensions, each: length 4 (all
//     of it, header included, a multiple of 8), type 2, reserved 2, data
//     NUL-padded to the length (hostname, human nodename: a string;
//     forgotten node: name 40 + ttl 8; shard id: 40).
//   FAIL: the failing node's name (40).
//   PUBLISH / PUBLISHSHARD: channel_len 4, message_len 4, the channel's
//     bytes then the message's (the body is 8 + channel_len + message_len:
//     Redis subtracts its struct's 8-byte placeholder again).
//   UPDATE: configEpoch 8, the owner's name 40, its slots 2048.
//   MODULE: module_id 8, len 4, type 1, then len bytes (Redis's struct
//     ends in a 3-byte placeholder it subtracts again: the body is 13 + len).
//   FAILOVER_AUTH_REQUEST / _ACK, MFSTART: no body.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine::cluster {

inline constexpr size_t kNameLen = 40;        // a node id: 40 hex characters
inline constexpr size_t kIpLen = 46;          // NET_IP_STR_LEN
inline constexpr size_t kSlotBytes = 16384 / 8;
inline constexpr size_t kHeaderLen = 2256;    // CLUSTERMSG_MIN_LEN
inline constexpr size_t kGossipLen = 104;
inline constexpr uint16_t kProtocolVersion = 1;
// A message longer than this is refused before it is read (Redis has no
// such bound; it keeps a link's buffer growing): the largest real one is a
// PING with gossip about every node of a 1000-node cluster, or a PUBLISH.
inline constexpr uint32_t kMaxMessageLen = 64u << 20;

enum class MsgType : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,
  kFail = 3,
  kPublish = 4,
  kFailoverAuthRequest = 5,
  kFailoverAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
};
inline constexpr int kMsgTypeCount = 11;
// Redis's names for the types (CLUSTER INFO's cluster_stats_messages_*):
// "ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack",
// "update", "mfstart", "module", "publishshard"; "unknown" past them.
std::string_view MsgTypeName(uint16_t type);

// A node's flags as the bus carries them (CLUSTER_NODE_*).
enum : uint16_t {
  kNodeMaster = 1,
  kNodeSlave = 2,
  kNodePfail = 4,
  kNodeFail = 8,
  kNodeMyself = 16,
  kNodeHandshake = 32,
  kNodeNoAddr = 64,
  kNodeMeet = 128,
  kNodeMigrateTo = 256,
  kNodeNoFailover = 512,
  kNodeExtensionsSupported = 1024,
};
// mflags[0]
enum : uint8_t {
  kMsgFlag0Paused = 1,    // a primary paused for a manual failover
  kMsgFlag0ForceAck = 2,  // vote even though the primary is up
  kMsgFlag0ExtData = 4,   // the message carries ping extensions
};
enum class PingExtType : uint16_t { kHostname = 0, kHumanNodename = 1, kForgottenNode = 2, kShardId = 3 };

using SlotBitmap = std::array<uint8_t, kSlotBytes>;
inline bool SlotBit(const SlotBitmap& b, int slot) { return (b[static_cast<size_t>(slot) >> 3] >> (slot & 7)) & 1; }
inline void SetSlotBit(SlotBitmap& b, int slot) { b[static_cast<size_t>(slot) >> 3] |= uint8_t(1u << (slot & 7)); }

// Node names and shard ids are 40 bytes on the wire; here, a std::string of
// exactly kNameLen characters, or empty for the all-zero name.
struct Gossip {
  std::string name;
  uint32_t ping_sent = 0;      // seconds (Redis sends ms / 1000)
  uint32_t pong_received = 0;  // seconds
  std::string ip;              // up to kIpLen - 1 characters
  uint16_t port = 0, cport = 0, flags = 0, pport = 0;
  bool operator==(const Gossip&) const = default;
};

struct ForgottenNode {
  std::string name;
  uint64_t ttl_s = 0;
  bool operator==(const ForgottenNode&) const = default;
};

struct BusMessage {
  MsgType type = MsgType::kPing;
  uint16_t port = 0;
  uint64_t current_epoch = 0, config_epoch = 0, offset = 0;
  std::string sender;  // kNameLen characters
  SlotBitmap myslots{};
  std::string slaveof;  // empty: the sender is a primary
  std::string myip;     // empty: all zeros (the receiver uses the link's address)
  uint16_t pport = 0, cport = 0, flags = 0;
  uint8_t state = 0;
  std::array<uint8_t, 3> mflags{};

  // PING / PONG / MEET
  std::vector<Gossip> gossip;
  // The ping extensions; on Encode, each non-empty one is sent (and
  // kMsgFlag0ExtData set) only if `extensions_on` (the sender supports
  // them, as Redis 7 always does). Unknown types are skipped on Decode and
  // counted in `unknown_extensions`.
  bool extensions_on = true;
  std::string hostname, human_nodename, shard_id;
  std::vector<ForgottenNode> forgotten;
  uint16_t unknown_extensions = 0;

  // FAIL: the node declared failed.
  std::string fail_about;
  // PUBLISH / PUBLISHSHARD
  std::string channel, message;
  // UPDATE: a node's slots and the epoch they are claimed with.
  uint64_t update_config_epoch = 0;
  std::string update_name;
  SlotBitmap update_slots{};
  // MODULE
  uint64_t module_id = 0;
  uint8_t module_type = 0;
  std::string module_payload;

  bool operator==(const BusMessage&) const = default;
};

// Appends the message's wire bytes to *out. The caller keeps the counts
// within 16 bits (gossip sections, extensions) and the whole within
// kMaxMessageLen; names are written as their first 40 bytes, NUL-padded.
void Encode(const BusMessage& m, std::string* out);

enum class DecodeStatus {
  kOk,        // one message read: its length is *consumed
  kNeedMore,  // not all of it is here yet (*consumed: the bytes needed, once known, else 8)
  kBad,       // refused: *error says why, as Redis logs it; the link should be dropped
              // (*consumed: the message's length when its signature and length
              // were sound, so a caller may skip it as Redis does; else 0)
};
// Reads the message at the start of `in`. Checks, as Redis does: the
// signature, the length (at least 8 bytes to know it; at least kHeaderLen,
// at most kMaxMessageLen), the version (another version is kBad with
// "protocol version"), and that the length is exactly what the type's body
// needs (a PING's gossip count and extensions; a PUBLISH's two lengths);
// an unknown type is kOk with only the header read. Names are taken as
// they are (40 bytes; all zeros → empty).
DecodeStatus Decode(std::string_view in, BusMessage* m, size_t* consumed, std::string* error);

// The length a message will have once encoded.
size_t EncodedLength(const BusMessage& m);

}  // namespace peregrine::cluster
