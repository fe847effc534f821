// The cluster_node fuzzer's input language (cluster_node_fuzzer.cc): a
// program of small operations, each a few bytes, that builds cluster bus
// messages with cluster::Encode (so that most inputs get past the codec's
// checks and reach what a message does), cuts them, corrupts them, mixes in
// raw bytes, and groups them into links. The fuzzer mutates the program;
// the generator makes it valid wire bytes.
//
// An input: a header byte (see kHeader* in cluster_node_fuzzer.cc), then
// operations, each an opcode byte and the fields it reads. Bytes past the
// end read as zero, so every input is a program.
//
// Opcode: the low 3 bits are the operation:
//   0 PING, 1 PONG, 2 MEET, 3 FAIL, 4 UPDATE: a message of that type;
//   5 another type (PUBLISH, PUBLISHSHARD, FAILOVER_AUTH_REQUEST/ACK,
//     MFSTART, MODULE, or one no version knows);
//   6 raw bytes: a length byte, then that many bytes (1-256), as they are;
//   7 the end of a link: what was built so far is fed as one inbound link.
// For a message, the high bits modify it:
//   0x08 one byte of it changed (offset 2 bytes, xor mask 1 byte)
//   0x10 cut short (new length: 2 bytes, modulo its length)
//   0x20 the link ends after it
//   0x40 no ping extensions (mflags[0] without the extension flag)
//   0x80 sent twice
//
// A message's fields, in the order read (PING, PONG, MEET; the others read
// the header fields and then their own):
//   sender (name byte), currentEpoch (epoch byte), configEpoch (epoch
//   byte), flags (byte; 0x80 adds nofailover), slaveof (byte: < 0x40 none,
//   else a name byte follows), slots (slot spec), address (byte), offset
//   (byte), mflags[0] (byte), state (byte);
//   gossip count (byte, modulo 6), each: name, flags, address, pong age
//   (bytes); extensions (byte: 0x01 hostname, 0x02 human nodename, 0x04
//   shard id, 0x08 forgotten nodes; each reads its fields).
//   FAIL: the node (name byte). UPDATE: the node (name byte), its epoch
//   (epoch byte), its slots (slot spec, based on the node's).
//
// Name byte: < 0x80 picks one of 32 names: this node, the five other
// nodes nodes.conf lists, twelve more valid ids no one knows at first (gossip
// may add them), the all-zero name, invalid ones (capitals, a NUL inside),
// one made of a byte that follows, variants of known ids; >= 0x80 picks
// the n-th node of CLUSTER NODES as it is now (handshake nodes and the
// nodes gossip added included), so a program can name nodes it did not
// know the names of.
//
// Slot spec: a byte: 0x80 starts from the slots the node owns now (from
// CLUSTER NODES), else from none; its low 2 bits are how many ranges
// follow, each: a byte (bit 0: remove rather than add), the first slot (2
// bytes, modulo 16384), a length byte (< 200: that plus one; else 2 to the
// power of byte - 200, at most all of them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/bus_message.h"

namespace cluster_node_fuzz {

using peregrine::cluster::BusMessage;
using peregrine::cluster::SlotBitmap;

// The input, read front to back; zeros once it runs out.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t U16() {
    const uint16_t hi = Byte();
    return static_cast<uint16_t>(hi << 8 | Byte());
  }
  std::string_view Bytes(size_t n) {
    const size_t take = std::min(n, size_ - std::min(pos_, size_));
    std::string_view s(reinterpret_cast<const char*>(data_) + pos_, take);
    pos_ += take;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// What the generator knows of the node under test: CLUSTER NODES's ids in
// order and the slots each owns (refreshed before each message).
struct View {
  std::vector<std::string> ids;
  std::map<std::string, SlotBitmap> slots;
};

// The nodes of the fuzzer's nodes.conf (the first is the node under test).
const std::vector<std::string>& BaselineIds();

// Builds the wire bytes of one input's operations. `feed` is called with
// each link's bytes; `refresh` fills a View from the node as it is now.
class Generator {
 public:
  Generator(Reader* in, std::function<void(std::string_view)> feed, std::function<void(View*)> refresh)
      : in_(in), feed_(std::move(feed)), refresh_(std::move(refresh)) {}

  // Runs the program to its end (the last link fed too).
  void Run();

 private:
  void Message(uint8_t op);
  void Flush();
  // The node as it is now, read once per link (nothing changes it before
  // the link is fed).
  const View& view();
  std::string Name();
  uint64_t Epoch();
  void Slots(SlotBitmap* out, const std::string& base_owner);
  void Address(std::string* ip, uint16_t* port, uint16_t* cport, uint16_t* pport);
  void Header(BusMessage* m);
  void PingBody(BusMessage* m);
  std::string Text();

  Reader* in_;
  std::function<void(std::string_view)> feed_;
  std::function<void(View*)> refresh_;
  View view_;
  bool view_valid_ = false;
  std::string stream_;  // the current link's bytes
};

}  // namespace cluster_node_fuzz
