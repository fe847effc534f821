// Streams in RDB files and DUMP payloads (rdb_stream.cc).
#pragma once

#include "core/value.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_value.h"
#include "persist/rdb_writer.h"

namespace peregrine {

// Writes a stream's body (after its type byte) as RDB_TYPE_STREAM_LISTPACKS_2.
void WriteStream(RdbWriter& w, const StreamObject& s);

// Reads a stream of RDB type 15, 19 or 21.
RdbLoadStatus LoadStream(RdbReader& r, int type, Value* out);

}  // namespace peregrine
