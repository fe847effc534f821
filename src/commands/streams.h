// Helpers the stream commands share (streams.cc, stream_groups.cc).
#pragma once

#include <string_view>

#include "core/stream_object.h"
#include "server/command.h"

namespace peregrine {

// Redis's streamGenericParseIDOrReply without the reply: "-", "+" (unless
// strict), "<ms>", "<ms>-<seq>", and "<ms>-*" when seq_given is asked for
// (then false there). A missing sequence is `missing_seq`.
bool ParseStreamId(std::string_view arg, StreamID* id, uint64_t missing_seq, bool strict, bool* seq_given);
// The same, replying "Invalid stream ID ..." on failure.
bool ParseStreamIdOrReply(CommandContext& ctx, std::string_view arg, StreamID* id, uint64_t missing_seq,
                          bool strict, bool* seq_given);

void ReplyStreamId(CommandContext& ctx, StreamID id);
// An entry as [id, [field, value, ...]].
void ReplyStreamEntry(CommandContext& ctx, const StreamObject::EntryView& e);
// The entries of [start, end] (at most `count`; 0: all) as an array.
void ReplyStreamRange(CommandContext& ctx, const StreamObject& s, StreamID start, StreamID end, size_t count,
                      bool rev);

// stream-node-max-bytes and stream-node-max-entries.
StreamLimits StreamLimitsOf(const CommandContext& ctx);

}  // namespace peregrine
