// COMMAND's replies of key specs (key_specs.h), as Redis writes them: the
// specs in COMMAND INFO, a key's flags in COMMAND GETKEYSANDFLAGS.
#include <array>
#include <utility>

#include "protocol/reply.h"
#include "server/key_specs.h"

namespace peregrine {
namespace {

// A search Redis cannot describe (SORT's BY, GET and STORE keys).
void WriteUnknown(ReplyWriter& w) {
  w.Bulk("unknown");
  w.Bulk("spec");
  w.MapHeader(0);
}

// A find_keys of a known type: its three numbers.
void WriteFind(ReplyWriter& w, std::string_view type, const std::array<std::pair<std::string_view, int>, 3>& spec) {
  w.Bulk(type);
  w.Bulk("spec");
  w.MapHeader(spec.size());
  for (const auto& [name, value] : spec) {
    w.Bulk(name);
    w.Integer(value);
  }
}

void WriteKeySpec(ReplyWriter& w, const KeySpec& spec) {
  const bool notes = !spec.notes.empty();
  w.MapHeader(notes ? 4 : 3);
  if (notes) {
    w.Bulk("notes");
    w.Bulk(spec.notes);
  }
  w.Bulk("flags");
  WriteKeySpecFlags(w, spec.flags);
  w.Bulk("begin_search");
  w.MapHeader(2);
  w.Bulk("type");
  if (spec.begin.type == KeyBegin::kIndex) {
    w.Bulk("index");
    w.Bulk("spec");
    w.MapHeader(1);
    w.Bulk("index");
    w.Integer(spec.begin.pos);
  } else if (spec.begin.type == KeyBegin::kKeyword) {
    w.Bulk("keyword");
    w.Bulk("spec");
    w.MapHeader(2);
    w.Bulk("keyword");
    w.Bulk(spec.begin.keyword);
    w.Bulk("startfrom");
    w.Integer(spec.begin.pos);
  } else {
    WriteUnknown(w);
  }
  w.Bulk("find_keys");
  w.MapHeader(2);
  w.Bulk("type");
  const KeyFind& f = spec.find;
  if (f.type == KeyFind::kRange)
    WriteFind(w, "range", {{{"lastkey", f.lastkey}, {"keystep", f.keystep}, {"limit", f.limit}}});
  else if (f.type == KeyFind::kKeynum)
    WriteFind(w, "keynum", {{{"keynumidx", f.keynumidx}, {"firstkey", f.firstkey}, {"keystep", f.keystep}}});
  else
    WriteUnknown(w);
}

}  // namespace

void WriteKeySpecFlags(ReplyWriter& w, uint16_t flags) {
  const std::vector<std::string_view> names = KeySpecFlagNames(flags);
  w.SetHeader(names.size());
  for (std::string_view name : names) w.SimpleString(name);
}

void WriteKeySpecs(ReplyWriter& w, std::span<const KeySpec> specs) {
  w.SetHeader(specs.size());
  for (const KeySpec& spec : specs) WriteKeySpec(w, spec);
}

}  // namespace peregrine
