// Every command Peregrine serves (commands/all_commands.cc holds the one
// list of families; each family's Register*Commands is in
// commands/<family>_commands.cc).
#pragma once

#include "server/command.h"

namespace peregrine {

// A table with every family's commands registered, in the server's order.
CommandTable AllCommands();

}  // namespace peregrine
