// libFuzzer target for the cluster bus codec (src/cluster/bus_message.h):
// the input is what a peer sends on a cluster bus link, a stream of
// messages. Each is decoded in turn, as the link reads them; a message
// refused with a known length is skipped (Redis drops it and reads on), any
// other refusal ends the stream. Every message read is written again and
// read back, and must come back the same (less the extensions this codec
// does not know, which it does not write); the bytes written must be what
// EncodedLength promised, and writing what came back gives the same bytes.
// A crash, a sanitizer report or a failed check (abort) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cluster/bus_message.h"

namespace {

using namespace peregrine::cluster;

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "cluster bus round trip: %s %s\n", what, detail.c_str());
  std::abort();
}

// Re-encodes a decoded message and checks that it reads back the same.
void CheckRoundTrip(const BusMessage& first) {
  std::string wire;
  Encode(first, &wire);
  if (wire.size() != EncodedLength(first)) Fail("EncodedLength differs from what Encode wrote");
  BusMessage second;
  size_t consumed = 0;
  std::string error;
  const DecodeStatus s = Decode(wire, &second, &consumed, &error);
  if (s != DecodeStatus::kOk) {
    // Only a message grown past the limit may be refused: string
    // extensions without their NUL gain one (and padding) when written.
    if (wire.size() > kMaxMessageLen) return;
    Fail("a written message was refused:", error);
  }
  if (consumed != wire.size()) Fail("a written message was not read whole");
  if (second.unknown_extensions != 0) Fail("unknown extensions were written");
  BusMessage expected = first;
  expected.unknown_extensions = 0;
  if (!(second == expected)) Fail("the message read back differs from the one written");
  std::string again;
  Encode(second, &again);
  if (again != wire) Fail("writing the message read back gives other bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  while (!in.empty()) {
    BusMessage m;
    size_t consumed = 0;
    std::string error;
    switch (Decode(in, &m, &consumed, &error)) {
      case DecodeStatus::kOk:
        if (consumed < kHeaderLen || consumed > in.size()) Fail("kOk with a bad length");
        CheckRoundTrip(m);
        break;
      case DecodeStatus::kNeedMore:
        if (consumed <= in.size()) Fail("kNeedMore for bytes that are there");
        return 0;
      case DecodeStatus::kBad:
        if (error.empty()) Fail("kBad without a reason");
        if (consumed == 0) return 0;  // the link is dropped
        if (consumed < kHeaderLen || consumed > in.size()) Fail("kBad with a bad length");
        break;
    }
    in.remove_prefix(consumed);
  }
  return 0;
}
