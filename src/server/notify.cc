// Keyspace notifications' flags and channels (see notify.h).
#include "server/notify.h"

namespace peregrine {

thread_local KeyspaceEvents* KeyspaceEvents::current_ = nullptr;

namespace notify {

std::optional<uint32_t> ParseFlags(std::string_view classes) {
  uint32_t flags = 0;
  for (char c : classes) {
    switch (c) {
      case 'A': flags |= kAll; break;
      case 'g': flags |= kGeneric; break;
      case '$': flags |= kString; break;
      case 'l': flags |= kList; break;
      case 's': flags |= kSet; break;
      case 'h': flags |= kHash; break;
      case 'z': flags |= kZset; break;
      case 'x': flags |= kExpired; break;
      case 'e': flags |= kEvicted; break;
      case 'K': flags |= kKeyspace; break;
      case 'E': flags |= kKeyevent; break;
      case 't': flags |= kStream; break;
      case 'm': flags |= kKeyMiss; break;
      case 'd': flags |= kModule; break;
      case 'n': flags |= kNew; break;
      default: return std::nullopt;
    }
  }
  return flags;
}

std::string FormatFlags(uint32_t flags) {
  std::string s;
  if ((flags & kAll) == kAll) {
    s += 'A';
  } else {
    static constexpr struct {
      uint32_t bit;
      char letter;
    } kLetters[] = {{kGeneric, 'g'}, {kString, '$'}, {kList, 'l'},    {kSet, 's'},    {kHash, 'h'}, {kZset, 'z'},
                    {kExpired, 'x'}, {kEvicted, 'e'}, {kStream, 't'}, {kModule, 'd'}, {kNew, 'n'}};
    for (const auto& l : kLetters)
      if (flags & l.bit) s += l.letter;
  }
  // (Redis leaves 'n' out after 'A'; so do we: "An" reads back as "A".)
  if (flags & kKeyspace) s += 'K';
  if (flags & kKeyevent) s += 'E';
  if (flags & kKeyMiss) s += 'm';
  return s;
}

}  // namespace notify

std::string KeyspaceEvents::Channel(const KeyspaceEvent& e, bool keyspace) {
  std::string ch = keyspace ? "__keyspace@" : "__keyevent@";
  ch += std::to_string(e.db);
  ch += "__:";
  ch += keyspace ? e.key : e.event;
  return ch;
}

}  // namespace peregrine
