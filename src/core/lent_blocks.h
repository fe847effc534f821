// Lent blocks: the heap blocks of large string values that replies still being
// written refer to. A reply sends a large value straight from its block
// (protocol/output_buffer.h, writev) instead of copying it into the reply
// buffer; the block must then stay allocated, its bytes unchanged, until the
// reply is out, even if the key is overwritten, deleted, expired or evicted
// meanwhile, or the value is changed in place (SETRANGE).
//
// Each thread keeps a table of the blocks its replies refer to (block →
// references, and whether its owner has let go of it). The owner of a block
// it has lent (a CompactString with its "lent" flag) asks the releasing
// thread's table when it frees or changes the block: a block still lent is
// handed over (orphaned) and freed by its last Return, and a change in place
// goes to a copy. No header in the block and no atomic count: a value keeps
// its exact size class, and a reference costs a lookup in a small table.
//
// Threading contract (why a per-thread table is enough): a thread lends only
// blocks of its own shard, to replies of its own clients, and takes every
// reference back (the replies copy the bytes, OutputBuffer::Flatten) before
// another thread may hold its shard (Worker::TryLend). So whoever releases a
// block — the shard's own thread, or a holder of the shard while no reply
// refers to any of its blocks — finds in its own table exactly the
// references there are.
//
// Keyspace accounting (core/memory.h): a block leaves the keyspace's count
// when its owner releases it, even if a reply keeps it a while longer.
#pragma once

#include <cstddef>

namespace peregrine::lent_blocks {

// A reply now refers to `block` (one more reference).
void Lend(const char* block);
// A reply no longer refers to `block`; the last reference to a block whose
// owner has released it frees it. A block this thread has not lent is left
// alone (a reply dropped on another thread at exit).
void Return(const char* block);
// Whether a reply of this thread refers to `block`.
bool IsLent(const char* block);
// The owner lets go of `block` (allocated by CountedAlloc): it leaves the
// keyspace count and is freed at once unless lent, then by the last Return.
void Release(char* block);
// Distinct blocks this thread has lent (orphaned ones included).
size_t LentCount();

}  // namespace peregrine::lent_blocks
