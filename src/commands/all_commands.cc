// The one list of command families, in the server's order (COMMAND lists
// them so). main() and the fuzzers give the table to the Server; the server
// layer itself knows no family.
#include "commands/all_commands.h"

namespace peregrine {

// Each family's registration (commands/<family>_commands.cc).
void RegisterConnectionCommands(CommandTable& table);
void RegisterStringCommands(CommandTable& table);
void RegisterBitmapCommands(CommandTable& table);
void RegisterHyperLogLogCommands(CommandTable& table);
void RegisterSortCommands(CommandTable& table);
void RegisterStreamCommands(CommandTable& table);
void RegisterKeyCommands(CommandTable& table);
void RegisterServerCommands(CommandTable& table);
void RegisterSlowlogCommands(CommandTable& table);
void RegisterLatencyCommands(CommandTable& table);
void RegisterDebugCommands(CommandTable& table);
void RegisterLolwutCommands(CommandTable& table);
void RegisterModuleCommands(CommandTable& table);
void RegisterClusterCommands(CommandTable& table);
void RegisterPubSubCommands(CommandTable& table);
void RegisterHashCommands(CommandTable& table);
void RegisterSetCommands(CommandTable& table);
void RegisterListCommands(CommandTable& table);
void RegisterZSetCommands(CommandTable& table);
void RegisterGeoCommands(CommandTable& table);
void RegisterTransactionCommands(CommandTable& table);
void RegisterScriptingCommands(CommandTable& table);
void RegisterDumpCommands(CommandTable& table);
void RegisterMigrateCommands(CommandTable& table);
void RegisterPersistenceCommands(CommandTable& table);
void RegisterAclCommands(CommandTable& table);
void RegisterReplicationCommands(CommandTable& table);

CommandTable AllCommands() {
  CommandTable table;
  RegisterConnectionCommands(table);
  RegisterStringCommands(table);
  RegisterBitmapCommands(table);
  RegisterHyperLogLogCommands(table);
  RegisterSortCommands(table);
  RegisterStreamCommands(table);
  RegisterKeyCommands(table);
  RegisterServerCommands(table);
  RegisterSlowlogCommands(table);
  RegisterLatencyCommands(table);
  RegisterDebugCommands(table);
  RegisterLolwutCommands(table);
  RegisterModuleCommands(table);
  RegisterClusterCommands(table);
  RegisterPubSubCommands(table);
  RegisterHashCommands(table);
  RegisterSetCommands(table);
  RegisterListCommands(table);
  RegisterZSetCommands(table);
  RegisterGeoCommands(table);
  RegisterTransactionCommands(table);
  RegisterScriptingCommands(table);
  RegisterDumpCommands(table);
  RegisterMigrateCommands(table);
  RegisterPersistenceCommands(table);
  RegisterAclCommands(table);
  RegisterReplicationCommands(table);
  return table;
}

}  // namespace peregrine
