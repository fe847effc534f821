// Helpers the stream commands share (stream_commands.cc, stream_group_commands.cc).
#pragma once

#include <string_view>

#include "core/stream_object.h"
#include "commands/common.h"
#include "server/command.h"

namespace peregrine {

struct StreamGroup;
struct StreamNack;

// Redis's streamGenericParseIDOrReply without the reply: "-", "+" (unless
// strict), "<ms>", "<ms>-<seq>", and "<ms>-*" when seq_given is asked for
// (then false there). A missing sequence is `missing_seq`.
bool ParseStreamId(std::string_view arg, StreamID* id, uint64_t missing_seq, bool strict, bool* seq_given);
// The same, replying "Invalid stream ID ..." on failure.
bool ParseStreamIdOrReply(CommandContext& ctx, std::string_view arg, StreamID* id, uint64_t missing_seq,
                          bool strict, bool* seq_given);

// A range bound of XRANGE / XREVRANGE / XPENDING / XAUTOCLAIM (Redis's
// streamParseIntervalIDOrReply, then the step past an exclusive "(" bound):
// a start's missing sequence is 0, an end's the largest. False after replying.
bool ParseStreamBound(CommandContext& ctx, std::string_view arg, bool start, StreamID* id);

// Logs the form Redis propagates for a pending entry claimed, delivered or
// dropped: XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID
// LASTID group-last-id.
void LogStreamClaim(CommandContext& ctx, std::string_view key, std::string_view group_name, const StreamGroup& g,
                    StreamID id, const StreamNack& nack);

// Redis compares "$" and ">" with strcmp: the argument up to a NUL.
inline bool IsStreamSpecial(std::string_view arg, char c) {
  const std::string_view a = UpToNul(arg);
  return a.size() == 1 && a[0] == c;
}

void ReplyStreamId(CommandContext& ctx, StreamID id);
// An entry as [id, [field, value, ...]].
void ReplyStreamEntry(CommandContext& ctx, const StreamObject::EntryView& e);
// The entries of [start, end] (at most `count`; 0: all) as an array.
void ReplyStreamRange(CommandContext& ctx, const StreamObject& s, StreamID start, StreamID end, size_t count,
                      bool rev);

// stream-node-max-bytes and stream-node-max-entries.
StreamLimits StreamLimitsOf(const CommandContext& ctx);

// The stream family's other parts, registered by RegisterStreamCommands
// after its own, in this order: the consumer group commands
// (stream_group_commands.cc), XREAD and XREADGROUP (stream_read_commands.cc),
// XINFO (stream_info_commands.cc).
void RegisterStreamGroupCommands(CommandTable& t);
void RegisterStreamReadCommands(CommandTable& t);
void RegisterStreamInfoCommands(CommandTable& t);

}  // namespace peregrine
