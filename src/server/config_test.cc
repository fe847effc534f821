// Unit tests for configuration: config-file text, command-line arguments,
// applying directives, CONFIG GET and CONFIG SET.
#include "server/config.h"

#include <gtest/gtest.h>

#include <climits>
#include <set>
#include <string>
#include <vector>

namespace peregrine {
namespace {

using Strings = std::vector<std::string>;

std::vector<Directive> ParseText(std::string_view text) {
  std::vector<Directive> out;
  std::string err;
  EXPECT_TRUE(ParseConfigText(text, &out, &err)) << err;
  return out;
}

// argv-style parsing: the strings are copied into mutable char arrays, as the
// real argv is.
std::vector<Directive> ParseArgs(const Strings& args) {
  std::vector<std::vector<char>> storage;
  for (const std::string& a : args) {
    storage.emplace_back(a.begin(), a.end());
    storage.back().push_back('\0');
  }
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  std::vector<Directive> out;
  ParseConfigArgs(std::span<char* const>(argv.data(), argv.size()), &out);
  return out;
}

Directive D(std::string name, Strings args) {
  Directive d;
  d.name = std::move(name);
  d.args = std::move(args);
  return d;
}

// Applies directives to a default Config; returns "" or the error.
std::string Apply(Config* config, const std::vector<Directive>& ds,
                  const Directive** failed = nullptr) {
  std::string err;
  const Directive* culprit = nullptr;
  bool ok = ApplyDirectives(config, ds, &err, &culprit);
  if (failed != nullptr) *failed = culprit;
  if (ok) {
    EXPECT_TRUE(err.empty()) << err;
    return "";
  }
  EXPECT_FALSE(err.empty());
  EXPECT_NE(culprit, nullptr);
  return err;
}

std::string ApplyOne(Config* config, std::string name, Strings args) {
  return Apply(config, {D(std::move(name), std::move(args))});
}

// CONFIG SET with views of `name_values`; returns "" on success or the error reply.
std::string Set(Config* config, const Strings& name_values) {
  std::vector<std::string_view> views(name_values.begin(), name_values.end());
  std::string err;
  bool ok = ConfigSet(config, views, &err);
  if (ok) return "";
  EXPECT_FALSE(err.empty());
  return err;
}

std::vector<std::pair<std::string, std::string>> Get(const Config& config,
                                                     const Strings& patterns) {
  std::vector<std::string_view> views(patterns.begin(), patterns.end());
  return ConfigGet(config, views);
}

std::string GetOne(const Config& config, const std::string& name) {
  auto pairs = Get(config, {name});
  EXPECT_EQ(pairs.size(), 1u) << name;
  return pairs.empty() ? "<missing>" : pairs[0].second;
}

TEST(ParseConfigText, CommentsQuotesAndBlankLines) {
  const std::string text =
      "# Peregrine test config\n"
      "port 7000\n"
      "\n"
      "   bind 127.0.0.1 \"::1\"   \n"
      "  # an indented comment\n"
      "\t\n"
      "save \"\"\n"
      "logfile \"/tmp/a b.log\"\n"
      "loglevel 'verbose'\n"
      "pidfile \"/tmp/\\x41.pid\"";  // last line without a newline
  std::vector<Directive> ds = ParseText(text);
  ASSERT_EQ(ds.size(), 6u);
  EXPECT_EQ(ds[0].name, "port");
  EXPECT_EQ(ds[0].args, (Strings{"7000"}));
  EXPECT_EQ(ds[0].origin, "line 2");
  EXPECT_EQ(ds[1].name, "bind");
  EXPECT_EQ(ds[1].args, (Strings{"127.0.0.1", "::1"}));
  EXPECT_EQ(ds[1].origin, "line 4");
  EXPECT_EQ(ds[2].name, "save");
  EXPECT_EQ(ds[2].args, (Strings{""}));
  EXPECT_EQ(ds[3].args, (Strings{"/tmp/a b.log"}));
  EXPECT_EQ(ds[4].args, (Strings{"verbose"}));
  EXPECT_EQ(ds[5].name, "pidfile");
  EXPECT_EQ(ds[5].args, (Strings{"/tmp/A.pid"}));
  EXPECT_EQ(ds[5].origin, "line 10");

  Config config;
  EXPECT_EQ(Apply(&config, ds), "");
  EXPECT_EQ(config.port, 7000);
  EXPECT_EQ(config.bind, (Strings{"127.0.0.1", "::1"}));
  EXPECT_TRUE(config.save_params.empty());
  EXPECT_EQ(config.logfile, "/tmp/a b.log");
  EXPECT_EQ(config.loglevel, "verbose");
  EXPECT_EQ(config.pidfile, "/tmp/A.pid");
}

TEST(ParseConfigText, CrlfLineEndingsAndEmptyText) {
  std::vector<Directive> ds = ParseText("port 7001\r\ntimeout 5\r\n\r\n");
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].args, (Strings{"7001"}));
  EXPECT_EQ(ds[1].name, "timeout");
  EXPECT_EQ(ds[1].args, (Strings{"5"}));
  EXPECT_TRUE(ParseText("").empty());
  EXPECT_TRUE(ParseText("\n\n# only comments\n   \n").empty());
}

TEST(ParseConfigText, DirectiveWithoutArguments) {
  std::vector<Directive> ds = ParseText("daemonize\n");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].name, "daemonize");
  EXPECT_TRUE(ds[0].args.empty());
  Config config;
  EXPECT_EQ(Apply(&config, ds), "Bad directive or wrong number of arguments");
}

TEST(ParseConfigText, UnbalancedQuotes) {
  std::vector<Directive> out;
  std::string err;
  EXPECT_FALSE(ParseConfigText("port 6379\nlogfile \"/tmp/x.log\n", &out, &err));
  EXPECT_NE(err.find("Unbalanced quotes"), std::string::npos) << err;
  EXPECT_NE(err.find("2"), std::string::npos) << "the error should name line 2: " << err;
  out.clear();
  err.clear();
  EXPECT_FALSE(ParseConfigText("logfile 'a'b\n", &out, &err));
  EXPECT_NE(err.find("Unbalanced quotes"), std::string::npos) << err;
}

TEST(ParseConfigArgs, DirectivesWithValues) {
  std::vector<Directive> ds = ParseArgs({"--port", "7000", "--bind", "a", "b", "--save", ""});
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].name, "port");
  EXPECT_EQ(ds[0].args, (Strings{"7000"}));
  EXPECT_EQ(ds[1].name, "bind");
  EXPECT_EQ(ds[1].args, (Strings{"a", "b"}));
  EXPECT_EQ(ds[2].name, "save");
  EXPECT_EQ(ds[2].args, (Strings{""}));

  Config config;
  EXPECT_EQ(Apply(&config, ds), "");
  EXPECT_EQ(config.port, 7000);
  EXPECT_EQ(config.bind, (Strings{"a", "b"}));
  EXPECT_TRUE(config.save_params.empty());
}

TEST(ParseConfigArgs, ValuesAreTakenVerbatim) {
  std::vector<Directive> ds =
      ParseArgs({"--logfile", "/tmp/with space \"q\".log", "--loglevel", "warning"});
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].args, (Strings{"/tmp/with space \"q\".log"}));
  Config config;
  EXPECT_EQ(Apply(&config, ds), "");
  EXPECT_EQ(config.logfile, "/tmp/with space \"q\".log");
  EXPECT_EQ(config.loglevel, "warning");
}

TEST(ParseConfigArgs, NegativeNumberIsAValue) {
  // "-1" is not "--": it is the value of the preceding directive.
  std::vector<Directive> ds = ParseArgs({"--timeout", "-1"});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].args, (Strings{"-1"}));
  Config config;
  EXPECT_EQ(Apply(&config, ds), "argument must be between 0 and 2147483647 inclusive");
}

TEST(ParseConfigArgs, Empty) { EXPECT_TRUE(ParseArgs({}).empty()); }

TEST(ParseConfigArgs, ValueWithoutDirectiveIsRejected) {
  std::vector<Directive> ds = ParseArgs({"stray", "--port", "1"});
  Config config;
  const Directive* failed = nullptr;
  EXPECT_EQ(Apply(&config, ds, &failed), "Bad directive or wrong number of arguments");
  ASSERT_NE(failed, nullptr);
  EXPECT_NE(failed->text.find("stray"), std::string::npos);
}

// redis-server 7.x: "--save" with no value (followed by another option, or
// last) means save "" (server.c main(), the special case kept for scripts that
// build the command line from an empty array).
TEST(ParseConfigArgs, SaveWithoutValueMeansEmpty) {
  for (const Strings& argv :
       {Strings{"--save", "--port", "7000"}, Strings{"--port", "7000", "--save"}}) {
    Config config;
    EXPECT_EQ(Apply(&config, ParseArgs(argv)), "");
    EXPECT_EQ(config.port, 7000);
    EXPECT_TRUE(config.save_params.empty());
  }
}

// redis-server 7.x also accepts an option name and its value in one argument
// ("--port 6380"): the option string is re-split as a config line.
TEST(ParseConfigArgs, NameAndValueInOneArgument) {
  Config config;
  EXPECT_EQ(Apply(&config, ParseArgs({"--port 6380", "--bind", "127.0.0.1"})), "");
  EXPECT_EQ(config.port, 6380);
  EXPECT_EQ(config.bind, (Strings{"127.0.0.1"}));
}

TEST(ApplyDirectives, Defaults) {
  Config config;
  EXPECT_EQ(Apply(&config, {}), "");
  EXPECT_EQ(config.port, 6379);
  EXPECT_EQ(config.databases, 16);
  EXPECT_EQ(config.proto_max_bulk_len, 512ULL * 1024 * 1024);
}

TEST(ApplyDirectives, BadDirectiveOrWrongNumberOfArguments) {
  Config config;
  EXPECT_EQ(ApplyOne(&config, "no-such-directive", {"1"}),
            "Bad directive or wrong number of arguments");
  EXPECT_EQ(ApplyOne(&config, "port", {}), "Bad directive or wrong number of arguments");
  EXPECT_EQ(ApplyOne(&config, "port", {"1", "2"}), "Bad directive or wrong number of arguments");
  EXPECT_EQ(ApplyOne(&config, "bind", {}), "Bad directive or wrong number of arguments");
}

TEST(ApplyDirectives, ReportsTheFailingDirective) {
  Config config;
  std::vector<Directive> ds = ParseText("port 7000\nhz abc\ntimeout 3\n");
  const Directive* failed = nullptr;
  EXPECT_EQ(Apply(&config, ds, &failed), "argument couldn't be parsed into an integer");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed, &ds[1]);
  EXPECT_EQ(failed->origin, "line 2");
  EXPECT_EQ(failed->text, "hz abc");
}

TEST(ApplyDirectives, IntegerParsingAndRanges) {
  Config config;
  EXPECT_EQ(ApplyOne(&config, "port", {"abc"}), "argument couldn't be parsed into an integer");
  EXPECT_EQ(ApplyOne(&config, "port", {"1.5"}), "argument couldn't be parsed into an integer");
  EXPECT_EQ(ApplyOne(&config, "port", {"+5"}), "argument couldn't be parsed into an integer");
  EXPECT_EQ(ApplyOne(&config, "port", {""}), "argument couldn't be parsed into an integer");
  EXPECT_EQ(ApplyOne(&config, "port", {"70000"}), "argument must be between 0 and 65535 inclusive");
  EXPECT_EQ(ApplyOne(&config, "port", {"-1"}), "argument must be between 0 and 65535 inclusive");
  EXPECT_EQ(ApplyOne(&config, "databases", {"0"}),
            "argument must be between 1 and 2147483647 inclusive");
  EXPECT_EQ(ApplyOne(&config, "databases", {"2147483648"}),
            "argument must be between 1 and 2147483647 inclusive");
  EXPECT_EQ(ApplyOne(&config, "timeout", {"-1"}),
            "argument must be between 0 and 2147483647 inclusive");
  EXPECT_EQ(config.port, 6379) << "failed directives change nothing";
  EXPECT_EQ(config.databases, 16);

  EXPECT_EQ(ApplyOne(&config, "port", {"0"}), "");
  EXPECT_EQ(config.port, 0);
  EXPECT_EQ(ApplyOne(&config, "port", {"65535"}), "");
  EXPECT_EQ(config.port, 65535);
  EXPECT_EQ(ApplyOne(&config, "databases", {"1"}), "");
  EXPECT_EQ(config.databases, 1);
  EXPECT_EQ(ApplyOne(&config, "tcp-backlog", {"1024"}), "");
  EXPECT_EQ(config.tcp_backlog, 1024);
  EXPECT_EQ(ApplyOne(&config, "tcp-keepalive", {"0"}), "");
  EXPECT_EQ(config.tcp_keepalive, 0);
  EXPECT_EQ(ApplyOne(&config, "maxclients", {"5"}), "");
  EXPECT_EQ(config.maxclients, 5);
}

TEST(ApplyDirectives, NamesAreCaseInsensitiveAndLaterWins) {
  Config config;
  EXPECT_EQ(Apply(&config, ParseText("PORT 7000\nPort 7001\nTimeOut 9\n")), "");
  EXPECT_EQ(config.port, 7001);
  EXPECT_EQ(config.timeout, 9);
}

TEST(ApplyDirectives, BoolsAndEnums) {
  Config config;
  EXPECT_EQ(ApplyOne(&config, "daemonize", {"yes"}), "");
  EXPECT_TRUE(config.daemonize);
  EXPECT_EQ(ApplyOne(&config, "daemonize", {"NO"}), "");
  EXPECT_FALSE(config.daemonize);
  EXPECT_EQ(ApplyOne(&config, "daemonize", {"maybe"}), "argument must be 'yes' or 'no'");
  EXPECT_EQ(ApplyOne(&config, "daemonize", {"1"}), "argument must be 'yes' or 'no'");

  EXPECT_EQ(ApplyOne(&config, "loglevel", {"WARNING"}), "");
  EXPECT_EQ(config.loglevel, "warning");
  EXPECT_EQ(ApplyOne(&config, "loglevel", {"loud"}),
            "argument(s) must be one of the following: debug, verbose, notice, warning, nothing");
  EXPECT_EQ(config.loglevel, "warning");
}

TEST(ApplyDirectives, MemoryUnits) {
  Config config;
  EXPECT_EQ(ApplyOne(&config, "proto-max-bulk-len", {"2mb"}), "");
  EXPECT_EQ(config.proto_max_bulk_len, 2ULL * 1024 * 1024);
  EXPECT_EQ(ApplyOne(&config, "proto-max-bulk-len", {"3m"}), "");
  EXPECT_EQ(config.proto_max_bulk_len, 3000000ULL);
  EXPECT_EQ(ApplyOne(&config, "proto-max-bulk-len", {"1GB"}), "");
  EXPECT_EQ(config.proto_max_bulk_len, 1024ULL * 1024 * 1024);
  EXPECT_EQ(ApplyOne(&config, "client-query-buffer-limit", {"2g"}), "");
  EXPECT_EQ(config.client_query_buffer_limit, 2000000000ULL);
  EXPECT_EQ(ApplyOne(&config, "client-query-buffer-limit", {"1048576"}), "");
  EXPECT_EQ(config.client_query_buffer_limit, 1048576ULL);

  EXPECT_EQ(ApplyOne(&config, "proto-max-bulk-len", {"lots"}), "argument must be a memory value");
  EXPECT_EQ(ApplyOne(&config, "proto-max-bulk-len", {"5xb"}), "argument must be a memory value");
  EXPECT_EQ(ApplyOne(&config, "proto-max-bulk-len", {"1k"}),
            "argument must be between 1048576 and 9223372036854775807 inclusive");
  EXPECT_EQ(config.proto_max_bulk_len, 1024ULL * 1024 * 1024) << "failed directives change nothing";
}

TEST(ApplyDirectives, SaveSchedulesAsRedisReadsThem) {
  Config config;
  EXPECT_EQ(GetOne(config, "save"), "3600 1 300 100 60 10000") << "Redis's default";
  // The first save directive replaces the default, later ones add to it.
  EXPECT_EQ(ApplyOne(&config, "save", {"900", "1"}), "");
  EXPECT_EQ(ApplyOne(&config, "save", {"60 10000"}), "");
  EXPECT_EQ(GetOne(config, "save"), "900 1 60 10000");
  EXPECT_EQ(ApplyOne(&config, "save", {""}), "");
  EXPECT_TRUE(config.save_params.empty());
  EXPECT_EQ(GetOne(config, "save"), "");
  EXPECT_EQ(ApplyOne(&config, "save", {"900"}), "Invalid save parameters");
  EXPECT_EQ(ApplyOne(&config, "save", {"900 x"}), "Invalid save parameters");
  EXPECT_EQ(ApplyOne(&config, "save", {"0 1"}), "Invalid save parameters");
  EXPECT_EQ(ApplyOne(&config, "save", {"60 -1"}), "Invalid save parameters");
  EXPECT_EQ(ApplyOne(&config, "save", {"60 0"}), "");
  EXPECT_EQ(ApplyOne(&config, "appendonly", {"yes"}), "");
  EXPECT_TRUE(config.appendonly);
  EXPECT_EQ(ApplyOne(&config, "appendonly", {"maybe"}), "argument must be 'yes' or 'no'");
  EXPECT_EQ(ApplyOne(&config, "appendonly", {"no"}), "");
  EXPECT_FALSE(config.appendonly);
  EXPECT_EQ(GetOne(config, "appendfsync"), "everysec");
  EXPECT_EQ(ApplyOne(&config, "appendfsync", {"Always"}), "");
  EXPECT_EQ(config.appendfsync, AppendFsync::kAlways);
  EXPECT_EQ(ApplyOne(&config, "appendfsync", {"sometimes"}),
            "argument(s) must be one of the following: always, everysec, no");
  EXPECT_EQ(ApplyOne(&config, "appendfilename", {"a/b.aof"}), "appendfilename can't be a path, just a filename");
  EXPECT_EQ(ApplyOne(&config, "appenddirname", {".."}), "appenddirname can't be a path, just a dirname");
  EXPECT_EQ(GetOne(config, "appenddirname"), "appendonlydir");
  EXPECT_EQ(GetOne(config, "auto-aof-rewrite-min-size"), "67108864");
  EXPECT_EQ(GetOne(config, "aof-use-rdb-preamble"), "yes");
  EXPECT_EQ(ApplyOne(&config, "dbfilename", {"a/b.rdb"}), "dbfilename can't be a path, just a filename");
  EXPECT_EQ(ApplyOne(&config, "dbfilename", {"x.rdb"}), "");
  EXPECT_EQ(config.dbfilename, "x.rdb");
}

TEST(ConfigSet, SaveReplacesTheScheduleAndProtectedConfigsNeedPermission) {
  Config config;
  std::string err;
  std::vector<std::string_view> set_save = {"save", "100 5"};
  ASSERT_TRUE(ConfigSet(&config, set_save, &err)) << err;
  EXPECT_EQ(GetOne(config, "save"), "100 5");
  ASSERT_TRUE(ConfigSet(&config, set_save, &err)) << err;
  EXPECT_EQ(GetOne(config, "save"), "100 5");
  std::vector<std::string_view> set_file = {"dbfilename", "y.rdb"};
  EXPECT_FALSE(ConfigSet(&config, set_file, &err));
  EXPECT_EQ(err, "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config");
  ASSERT_TRUE(ConfigSet(&config, set_file, &err, /*protected_allowed=*/true)) << err;
  EXPECT_EQ(config.dbfilename, "y.rdb");
}

TEST(ApplyDirectives, UnixSocketPermIsOctal) {
  Config config;
  EXPECT_EQ(ApplyOne(&config, "unixsocketperm", {"700"}), "");
  EXPECT_EQ(config.unixsocketperm, 0700u);
  EXPECT_EQ(GetOne(config, "unixsocketperm"), "700");
  EXPECT_EQ(ApplyOne(&config, "unixsocketperm", {"0755"}), "");
  EXPECT_EQ(config.unixsocketperm, 0755u);
  EXPECT_NE(ApplyOne(&config, "unixsocketperm", {"abc"}), "");
  EXPECT_NE(ApplyOne(&config, "unixsocketperm", {"8"}), "");
  EXPECT_EQ(config.unixsocketperm, 0755u);
}

// Redis: createUIntConfig("unixsocketperm", ..., 0, 0777, ..., OCTAL_CONFIG).
TEST(ApplyDirectives, UnixSocketPermMatchesRedis) {
  Config config;
  EXPECT_EQ(ApplyOne(&config, "unixsocketperm", {"abc"}),
            "argument couldn't be parsed as an octal number");
  EXPECT_NE(ApplyOne(&config, "unixsocketperm", {"1000"}), "");
  EXPECT_NE(ApplyOne(&config, "unixsocketperm", {"7777"}), "");
  EXPECT_EQ(config.unixsocketperm, 0u);
}

// Redis: createIntConfig("hz", ..., 0, INT_MAX, ...) with updateHZ clamping
// the value to [1, 500] ("Hz is more a hint from the user").
TEST(ApplyDirectives, HzOutOfRangeIsClamped) {
  Config config;
  EXPECT_EQ(ApplyOne(&config, "hz", {"1000"}), "");
  EXPECT_EQ(config.hz, 500);
  EXPECT_EQ(ApplyOne(&config, "hz", {"0"}), "");
  EXPECT_EQ(config.hz, 1);
  EXPECT_EQ(Set(&config, {"hz", "100000"}), "");
  EXPECT_EQ(GetOne(config, "hz"), "500");
  EXPECT_EQ(ApplyOne(&config, "hz", {"-1"}), "argument must be between 0 and 2147483647 inclusive");
}

TEST(ConfigGet, SingleNames) {
  Config config;
  EXPECT_EQ(Get(config, {"port"}),
            (std::vector<std::pair<std::string, std::string>>{{"port", "6379"}}));
  EXPECT_EQ(GetOne(config, "bind"), "127.0.0.1 -::1");
  EXPECT_EQ(GetOne(config, "databases"), "16");
  EXPECT_EQ(GetOne(config, "save"), "3600 1 300 100 60 10000");
  EXPECT_EQ(GetOne(config, "appendonly"), "no");
  EXPECT_EQ(GetOne(config, "daemonize"), "no");
  EXPECT_EQ(GetOne(config, "loglevel"), "notice");
  EXPECT_EQ(GetOne(config, "proto-max-bulk-len"), "536870912");
  EXPECT_EQ(GetOne(config, "client-query-buffer-limit"), "1073741824");
  EXPECT_EQ(GetOne(config, "unixsocketperm"), "0");
  EXPECT_EQ(GetOne(config, "hz"), "10");
  EXPECT_EQ(GetOne(config, "timeout"), "0");
  EXPECT_EQ(GetOne(config, "maxclients"), "10000");
  EXPECT_EQ(GetOne(config, "tcp-keepalive"), "300");
  EXPECT_EQ(GetOne(config, "tcp-backlog"), "511");
}

TEST(ConfigGet, ReflectsChanges) {
  Config config;
  ASSERT_EQ(Apply(&config, ParseText("port 7000\nbind 0.0.0.0 ::\ndaemonize yes\n")), "");
  EXPECT_EQ(GetOne(config, "port"), "7000");
  EXPECT_EQ(GetOne(config, "bind"), "0.0.0.0 ::");
  EXPECT_EQ(GetOne(config, "daemonize"), "yes");
}

TEST(ConfigGet, CaseInsensitiveAndUnknown) {
  Config config;
  EXPECT_EQ(Get(config, {"PORT"}),
            (std::vector<std::pair<std::string, std::string>>{{"port", "6379"}}));
  EXPECT_TRUE(Get(config, {"no-such-option"}).empty());
  EXPECT_TRUE(Get(config, {}).empty());
}

TEST(ConfigGet, GlobPatternsReturnEachNameOnce) {
  Config config;
  auto all = Get(config, {"*"});
  std::set<std::string> names;
  for (const auto& [name, value] : all)
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
  for (const char* expected :
       {"port", "bind", "unixsocket", "unixsocketperm", "databases", "maxclients", "timeout",
        "tcp-keepalive", "tcp-backlog", "loglevel", "logfile", "daemonize", "pidfile",
        "proto-max-bulk-len", "client-query-buffer-limit", "hz", "save", "appendonly"}) {
    EXPECT_TRUE(names.count(expected)) << expected;
  }

  // Overlapping patterns: still each name once.
  auto overlap = Get(config, {"p*", "port", "*ort", "*"});
  EXPECT_EQ(overlap.size(), all.size());
  auto ps = Get(config, {"p*", "port", "*ort"});
  std::set<std::string> pnames;
  for (const auto& [name, value] : ps)
    EXPECT_TRUE(pnames.insert(name).second) << "duplicate " << name;
  EXPECT_EQ(pnames, (std::set<std::string>{"port", "pidfile", "proto-max-bulk-len", "protected-mode", "tls-port",
                                           "replica-announce-port", "slave-announce-port", "cluster-port",
                                           "cluster-announce-port", "cluster-announce-bus-port",
                                           "cluster-announce-tls-port", "metrics-port", "active-expire-effort",
                                           "proc-title-template", "propagation-error-behavior"}));

  auto unix = Get(config, {"unixsocket*"});
  EXPECT_EQ(unix.size(), 2u);
  auto tcp = Get(config, {"tcp-?????????"});
  ASSERT_EQ(tcp.size(), 1u);
  EXPECT_EQ(tcp[0].first, "tcp-keepalive");
  auto classes = Get(config, {"[hp]*"});
  std::set<std::string> cnames;
  for (const auto& [name, value] : classes) cnames.insert(name);
  EXPECT_EQ(cnames, (std::set<std::string>{"hz", "port", "pidfile", "proto-max-bulk-len", "protected-mode",
                                           "hash-max-listpack-entries",
                                           "hash-max-listpack-value", "hash-max-ziplist-entries",
                                           "hash-max-ziplist-value", "hll-sparse-max-bytes", "proc-title-template",
                                           "propagation-error-behavior"}));
}

TEST(Config, SecurityDirectives) {
  Config config;
  EXPECT_EQ(GetOne(config, "protected-mode"), "yes");
  EXPECT_EQ(GetOne(config, "acl-pubsub-default"), "resetchannels");
  EXPECT_EQ(GetOne(config, "tls-auth-clients"), "yes");
  EXPECT_EQ(ApplyOne(&config, "acl-pubsub-default", {"allchannels"}), "");
  EXPECT_TRUE(config.acl_pubsub_default_all);
  EXPECT_EQ(ApplyOne(&config, "acl-pubsub-default", {"x"}),
            "argument(s) must be one of the following: allchannels, resetchannels");
  EXPECT_EQ(ApplyOne(&config, "tls-auth-clients", {"optional"}), "");
  EXPECT_EQ(config.tls.auth_clients, TlsSettings::AuthClients::kOptional);
  EXPECT_EQ(ApplyOne(&config, "tls-port", {"70000"}), "argument must be between 0 and 65535 inclusive");
  // `user` lines add up, in order; they need a name.
  EXPECT_EQ(ApplyOne(&config, "user", {"alice", "on", ">pw"}), "");
  EXPECT_EQ(ApplyOne(&config, "user", {"bob"}), "");
  ASSERT_EQ(config.users.size(), 2u);
  EXPECT_EQ(config.users[0], (std::vector<std::string>{"alice", "on", ">pw"}));
  EXPECT_EQ(ApplyOne(&config, "user", {}), "Bad directive or wrong number of arguments");
  // (CONFIG SET's command checks that they make a context.)
  EXPECT_EQ(Set(&config, {"tls-cert-file", "x.crt"}), "");
  EXPECT_EQ(config.tls.cert_file, "x.crt");
  EXPECT_EQ(Set(&config, {"tls-port", "7000"}),
            "ERR CONFIG SET failed (possibly related to argument 'tls-port') - can't set immutable config");
  EXPECT_EQ(Set(&config, {"requirepass", "pw", "protected-mode", "no"}), "");
  EXPECT_EQ(config.requirepass, "pw");
}

TEST(ConfigSet, SetsMutableOptions) {
  Config config;
  EXPECT_EQ(Set(&config, {"hz", "20"}), "");
  EXPECT_EQ(config.hz, 20);
  EXPECT_EQ(Set(&config, {"maxclients", "50", "loglevel", "warning", "timeout", "30"}), "");
  EXPECT_EQ(config.maxclients, 50);
  EXPECT_EQ(config.loglevel, "warning");
  EXPECT_EQ(config.timeout, 30);
  EXPECT_EQ(Set(&config, {"HZ", "25"}), "");
  EXPECT_EQ(config.hz, 25);
  EXPECT_EQ(Set(&config, {"proto-max-bulk-len", "1mb", "client-query-buffer-limit", "2gb"}), "");
  EXPECT_EQ(config.proto_max_bulk_len, 1024ULL * 1024);
  EXPECT_EQ(config.client_query_buffer_limit, 2ULL * 1024 * 1024 * 1024);
  EXPECT_EQ(GetOne(config, "hz"), "25");
}

TEST(ConfigSet, AllOrNothing) {
  Config config;
  EXPECT_EQ(Set(&config, {"timeout", "10", "hz", "abc"}),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be "
            "parsed into an "
            "integer");
  EXPECT_EQ(config.timeout, 0) << "the first pair must not have been applied";
  EXPECT_EQ(config.hz, 10);

  EXPECT_EQ(Set(&config, {"maxclients", "7", "loglevel", "shouty"}),
            "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be "
            "one of "
            "the following: debug, verbose, notice, warning, nothing");
  EXPECT_EQ(config.maxclients, 10000);

  EXPECT_EQ(Set(&config, {"timeout", "10", "databases", "4"}),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
            "immutable config");
  EXPECT_EQ(config.timeout, 0);
  EXPECT_EQ(config.databases, 16);

  EXPECT_EQ(Set(&config, {"hz", "30", "nosuch", "1"}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  EXPECT_EQ(config.hz, 10);
}

TEST(ConfigSet, ErrorTexts) {
  Config config;
  EXPECT_EQ(Set(&config, {"foo", "bar"}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'");
  EXPECT_EQ(Set(&config, {"databases", "5"}),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
            "immutable config");
  EXPECT_EQ(Set(&config, {"hz", "20", "hz", "30"}),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter");
  EXPECT_EQ(config.hz, 10);
  EXPECT_EQ(Set(&config, {"timeout", "-1"}),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be "
            "between 0 and "
            "2147483647 inclusive");
  EXPECT_EQ(Set(&config, {"proto-max-bulk-len", "big"}),
            "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument "
            "must be a "
            "memory value");
  // An odd number of arguments (a name without a value) is Redis's syntax error.
  EXPECT_EQ(Set(&config, {"hz", "20", "timeout"}), "ERR syntax error");
  EXPECT_EQ(config.hz, 10);
  EXPECT_EQ(config.databases, 16);
}

// Peregrine's fixed directives take back what CONFIG GET prints, even a value
// before the server resolved it (threads reads 0 in a default Config), and
// refuse any other.
TEST(ConfigSet, FixedDirectivesTakeBackTheirOwnValue) {
  Config config;
  for (const char* name : {"threads", "worker-spin-us", "metrics-port", "worker-sched-policy"})
    EXPECT_EQ(Set(&config, {name, GetOne(config, name)}), "") << name;
  EXPECT_EQ(Set(&config, {"threads", "4"}),
            "ERR CONFIG SET failed (possibly related to argument 'threads') - can't set immutable config");
  config.threads = 4;
  EXPECT_EQ(Set(&config, {"threads", "4"}), "");
  EXPECT_EQ(Set(&config, {"threads", "0"}),
            "ERR CONFIG SET failed (possibly related to argument 'threads') - argument must be between 1 and 256 "
            "inclusive");
}

// Redis validates every name (unknown / immutable / duplicate) before parsing
// any value, and names the canonical option in a value error.
TEST(ConfigSet, ValidationOrderAndNamesMatchRedis) {
  Config config;
  EXPECT_EQ(Set(&config, {"hz", "abc", "foo", "bar"}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'");
  EXPECT_EQ(Set(&config, {"hz", "abc", "databases", "4"}),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
            "immutable config");
  EXPECT_EQ(Set(&config, {"HZ", "abc"}),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be "
            "parsed into an "
            "integer");
}

TEST(RewriteConfigText, QuotesWhatNeedsItAndReadsBackTheSame) {
  Config c;
  c.requirepass = "a b\"c\\d\n\x01\xff'";
  c.hz = 42;
  c.save_params.clear();
  const std::string text = RewriteConfigText("# kept\nhz 1\nhz 2\n", c);
  EXPECT_EQ(text.substr(0, 13), "# kept\nhz 42\n");
  EXPECT_NE(text.find("\n# Generated by CONFIG REWRITE\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nrequirepass \"a b\\\"c\\\\d\\n\\x01\\xff'\"\n"), std::string::npos) << text;
  EXPECT_NE(RewriteConfigText("", [] {
              Config q;
              q.requirepass = "it's";
              return q;
            }()).find("\nrequirepass \"it's\"\n"),
            std::string::npos);
  EXPECT_NE(text.find("save \"\"\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("hz 2"), std::string::npos);
  std::vector<Directive> ds;
  std::string err;
  ASSERT_TRUE(ParseConfigText(text, &ds, &err)) << err;
  Config back;
  const Directive* failed = nullptr;
  ASSERT_TRUE(ApplyDirectives(&back, ds, &err, &failed)) << err;
  EXPECT_EQ(back.requirepass, c.requirepass);
  EXPECT_EQ(back.hz, 42);
  EXPECT_TRUE(back.save_params.empty());
  // An old name in the file becomes the directive's own; old names are
  // never added.
  Config m;
  m.min_replicas_to_write = 2;
  m.hash_max_listpack_entries = 7;
  const std::string renamed = RewriteConfigText("min-slaves-to-write 1\n", m);
  EXPECT_EQ(renamed.find("min-replicas-to-write 2\n"), 0u) << renamed;
  EXPECT_EQ(renamed.find("slaves"), std::string::npos) << renamed;
  EXPECT_NE(renamed.find("\nhash-max-listpack-entries 7\n"), std::string::npos) << renamed;
  EXPECT_EQ(renamed.find("ziplist"), std::string::npos) << renamed;
  // REPLICAOF: the primary's line (in the file's place of `slaveof`), and
  // none for a primary.
  Config replica;
  replica.replicaof_host = "10.0.0.1";
  replica.replicaof_port = 6380;
  const std::string follows = RewriteConfigText("# a\nslaveof 10.0.0.9 6379\n", replica);
  EXPECT_EQ(follows.find("# a\nreplicaof 10.0.0.1 6380\n"), 0u) << follows;
  const std::string primary = RewriteConfigText("# a\nreplicaof 10.0.0.9 6379\nhz 10\n", Config{});
  EXPECT_EQ(primary.find("# a\nhz 10\n"), 0u) << primary;
  EXPECT_EQ(primary.find("replicaof"), std::string::npos) << primary;
  EXPECT_EQ(RewriteConfigText("", replica).find("\nreplicaof 10.0.0.1 6380\n") != std::string::npos, true);
  // Nothing changed, nothing added but `dir`.
  const std::string same = RewriteConfigText("", Config{});
  EXPECT_EQ(same.find("# Generated by CONFIG REWRITE\ndir "), 0u) << same;
  EXPECT_EQ(std::count(same.begin(), same.end(), '\n'), 2);
}

}  // namespace
}  // namespace peregrine
