// Unit tests of the command table's declaration: what CommandFamily::Add
// fills in (group, categories, key step), containers included.
#include "server/command.h"

#include <gtest/gtest.h>

#include <string>

namespace peregrine {
namespace {

void Nop(CommandContext&) {}

TEST(CommandFamily, FillsInGroupCategoryAndKeyStep) {
  CommandTable t;
  CommandFamily f(t, kAclString, "string");
  f.Add({.name = "get", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "s", .handler = Nop});
  f.Add({.name = "mset", .arity = -3, .flags = kCmdWrite, .first_key = 1, .last_key = -1, .key_step = 2,
         .handler = Nop});
  f.Add({.name = "own", .arity = 1, .acl = kAclDangerous, .group = "server", .handler = Nop});
  const CommandSpec* get = t.Find("GET");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->group, "string");
  EXPECT_EQ(get->acl, kAclString);
  EXPECT_EQ(get->key_step, 1);
  EXPECT_EQ(t.Find("mset")->key_step, 2);  // as declared
  const CommandSpec* own = t.Find("own");
  EXPECT_EQ(own->group, "server");                  // as declared
  EXPECT_EQ(own->acl, kAclString | kAclDangerous);  // joined to the family's
  EXPECT_EQ(own->key_step, 0);                      // no keys
  EXPECT_EQ(t.all().size(), 3u);
  EXPECT_EQ(t.all()[0]->name, "get");  // the order added
  EXPECT_EQ(t.all()[2]->name, "own");
}

TEST(CommandTable, RenameChangesOnlyTheNamesClientsUse) {
  CommandTable t;
  CommandFamily f(t, kAclString, "string");
  for (const char* name : {"get", "set", "flushall"}) f.Add({.name = name, .arity = -1, .handler = Nop});
  const CommandSpec* set = t.Find("set");
  const CommandSpec* flushall = t.Find("flushall");
  std::string err;
  ASSERT_TRUE(t.Rename("SET", "Put", &err));
  ASSERT_TRUE(t.Rename("flushall", "", &err));
  EXPECT_EQ(t.Find("set"), nullptr);
  EXPECT_EQ(t.Find("PUT"), set);
  EXPECT_EQ(t.Find("flushall"), nullptr);
  // The server's own lookups still find every command by its own name.
  EXPECT_EQ(t.FindAny("set"), set);
  EXPECT_EQ(t.FindAny("put"), set);
  EXPECT_EQ(t.FindAny("flushall"), flushall);
  EXPECT_TRUE(t.Listed(*set));
  EXPECT_FALSE(t.Listed(*flushall));
  // Redis's refusals: an unknown name, a name taken.
  EXPECT_FALSE(t.Rename("set", "x", &err));
  EXPECT_EQ(err, "No such command in rename-command");
  EXPECT_FALSE(t.Rename("put", "get", &err));
  EXPECT_EQ(err, "Target command name already exists");
  // Renamed twice, and back to its own name.
  ASSERT_TRUE(t.Rename("put", "set", &err));
  EXPECT_EQ(t.Find("set"), set);
  EXPECT_EQ(t.Find("put"), nullptr);
}

TEST(CommandFamily, ContainerGivesItsCategoryToSubcommands) {
  CommandTable t;
  CommandFamily f(t, kAclKeyspace, "generic");
  f.Add({.name = "object",
         .arity = -2,
         .subcommands = {{.name = "encoding", .arity = 3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
                          .handler = Nop},
                         {.name = "help", .arity = 2, .handler = Nop}}});
  const CommandSpec* object = t.Find("object");
  ASSERT_NE(object, nullptr);
  EXPECT_EQ(object->acl, 0u);  // as in Redis: a container is @slow only
  EXPECT_EQ(object->AclCategories(), kAclSlow);
  EXPECT_EQ(object->group, "generic");
  const CommandSpec* enc = CommandTable::FindSubcommand(*object, "ENCODING");
  ASSERT_NE(enc, nullptr);
  EXPECT_EQ(enc->acl, kAclKeyspace);
  EXPECT_EQ(enc->group, "generic");
  EXPECT_EQ(enc->key_step, 1);
  EXPECT_EQ(enc->fullname, "object|encoding");
  EXPECT_EQ(CommandTable::FindSubcommand(*object, "help")->key_step, 0);
}

}  // namespace
}  // namespace peregrine
