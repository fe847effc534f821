// MEMORY DOCTOR (memory_doctor.cc).
#pragma once

namespace peregrine {

struct CommandContext;

// Holding every shard: a report on what the memory figures suggest.
void MemoryDoctorCommand(CommandContext& ctx);

}  // namespace peregrine
