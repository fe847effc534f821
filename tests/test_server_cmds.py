# Server introspection / administration: INFO, COMMAND, CONFIG, TIME, DEBUG SLEEP, SHUTDOWN.
import re
import time

import pytest
import redis

from conftest import HELP_LAST, IS_REDIS
from helpers import Conn, arity, config_set, encode, info_dict, raises, raw_client, rc, rc3, require_command, wait_for  # noqa: F401

skip_72 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 feature; Debian ships 7.0")


# ---------------------------------------------------------------- INFO

def sections(text):
    text = text.decode() if isinstance(text, bytes) else text
    return [line[2:] for line in text.split("\r\n") if line.startswith("# ")]


def test_info_default_sections(rc):
    text = rc.execute_command("INFO")
    assert isinstance(text, bytes)
    assert text.startswith(b"# Server\r\n")
    assert text.endswith(b"\r\n")
    s = sections(text)
    for name in ("Server", "Clients", "Memory", "Stats", "Keyspace"):
        assert name in s
    assert "Commandstats" not in s  # only with INFO all / everything / commandstats
    # Every non-empty, non-header line is "field:value".
    for line in text.decode().split("\r\n"):
        if line and not line.startswith("#"):
            assert re.match(r"^[A-Za-z0-9_.|-]+:", line), line


def test_info_section_headers_are_redis_own_in_redis_order(rc, reference):
    # Dashboards and exporters match the headers exactly ("# CPU", not
    # "# Cpu"). Every header Peregrine writes is Redis's, in Redis's order
    # (Redis has more: Latencystats).
    ours = sections(rc.execute_command("INFO", "everything"))
    with Conn(reference) as conn:
        theirs = sections(conn.call("INFO", "everything"))
    assert "CPU" in ours
    if not IS_REDIS:  # Peregrine's own fields: a section of their own, last
        assert ours[-1] == "Peregrine"
        ours = ours[:-1]
    assert [h for h in theirs if h in ours] == ours


@pytest.mark.parametrize("command", ["XINFO", "XGROUP", "SLOWLOG", "CONFIG", "OBJECT", "MEMORY", "PUBSUB"])
def test_container_help_is_redis_text(rc, reference, command):
    # Redis's addReplyHelp: the header naming the command, the lines, then
    # HELP (its last line: 7.2's "Print this help.", 7.0's "Prints").
    ours = rc.execute_command(command, "HELP")
    with Conn(reference) as conn:
        conn.send(encode(command, "HELP"))
        theirs = conn.read_reply()
    theirs_lines = re.findall(rb"\+([^\r]*)\r\n", theirs)
    assert ours[:-1] == theirs_lines[:-1]
    assert ours[0] == command.encode() + b" <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert ours[-2] == b"HELP" and ours[-1] == HELP_LAST


def test_info_fields(server, rc):
    d = info_dict(rc.execute_command("INFO"))
    assert re.match(r"^\d+\.\d+\.\d+", d["redis_version"])
    assert d["tcp_port"] == str(server.port)
    assert int(d["connected_clients"]) >= 1
    assert int(d["used_memory"]) > 0
    assert int(d["total_commands_processed"]) > 0
    assert int(d["keyspace_hits"]) >= 0
    assert int(d["keyspace_misses"]) >= 0
    assert int(d["uptime_in_seconds"]) >= 0
    assert int(d["process_id"]) > 0


def test_info_single_section(rc):
    text = rc.execute_command("INFO", "server")
    assert sections(text) == ["Server"]
    assert b"redis_version:" in text
    assert b"used_memory:" not in text
    text = rc.execute_command("INFO", "CLIENTS")
    assert sections(text) == ["Clients"]
    assert b"connected_clients:" in text
    assert sections(rc.execute_command("INFO", "memory")) == ["Memory"]
    assert sections(rc.execute_command("INFO", "stats")) == ["Stats"]


# Redis 7.2's stats and CPU fields, in its order (genRedisInfoString), less
# those only some servers print.
STATS_72 = """total_connections_received total_commands_processed instantaneous_ops_per_sec total_net_input_bytes
total_net_output_bytes total_net_repl_input_bytes total_net_repl_output_bytes instantaneous_input_kbps
instantaneous_output_kbps instantaneous_input_repl_kbps instantaneous_output_repl_kbps rejected_connections sync_full
sync_partial_ok sync_partial_err expired_keys expired_stale_perc expired_time_cap_reached_count
expire_cycle_cpu_milliseconds evicted_keys evicted_clients total_eviction_exceeded_time current_eviction_exceeded_time
keyspace_hits keyspace_misses pubsub_channels pubsub_patterns pubsubshard_channels latest_fork_usec total_forks
migrate_cached_sockets slave_expires_tracked_keys active_defrag_hits active_defrag_misses active_defrag_key_hits
active_defrag_key_misses total_active_defrag_time current_active_defrag_time tracking_total_keys tracking_total_items
tracking_total_prefixes unexpected_error_replies total_error_replies dump_payload_sanitizations total_reads_processed
total_writes_processed io_threaded_reads_processed io_threaded_writes_processed reply_buffer_shrinks
reply_buffer_expands eventloop_cycles eventloop_duration_sum eventloop_duration_cmd_sum
instantaneous_eventloop_cycles_per_sec instantaneous_eventloop_duration_usec acl_access_denied_auth
acl_access_denied_cmd acl_access_denied_key acl_access_denied_channel""".split()
CPU_72 = ("used_cpu_sys used_cpu_user used_cpu_sys_children used_cpu_user_children used_cpu_sys_main_thread "
          "used_cpu_user_main_thread").split()


def fields_of(text):
    text = text.decode() if isinstance(text, bytes) else text
    return [line.split(":", 1)[0] for line in text.split("\r\n") if ":" in line and not line.startswith("#")]


@skip_72
def test_info_has_redis_72s_stats_and_cpu_fields_in_order(rc):
    stats = fields_of(rc.execute_command("INFO", "stats"))
    assert [f for f in stats if f in STATS_72] == STATS_72
    assert fields_of(rc.execute_command("INFO", "cpu")) == CPU_72
    d = info_dict(rc.execute_command("INFO", "stats", "cpu"))
    for f in CPU_72 + ["expired_stale_perc", "instantaneous_input_kbps", "instantaneous_output_repl_kbps"]:
        float(d[f])  # seconds, percentages, kbps: numbers with decimals
    for f in STATS_72:
        if f not in ("expired_stale_perc",) and not f.endswith("_kbps"):
            assert int(d[f]) >= 0, f


@skip_72
def test_info_rates_loop_and_expiry_figures_move(rc, config_set):
    before = info_dict(rc.execute_command("INFO", "stats"))
    for i in range(200):
        rc.execute_command("SET", "k%d" % i, "x" * 100, "PX", "50")
    rc.execute_command("MGET", *["k%d" % i for i in range(200)])
    wait_for(lambda: float(info_dict(rc.execute_command("INFO", "stats"))["instantaneous_input_kbps"]) > 0)
    wait_for(lambda: int(info_dict(rc.execute_command("INFO", "stats"))["expired_keys"]) >= 200)
    after = info_dict(rc.execute_command("INFO", "stats"))
    assert float(after["instantaneous_output_kbps"]) > 0
    assert int(after["eventloop_cycles"]) > int(before["eventloop_cycles"])
    assert int(after["eventloop_duration_sum"]) >= int(after["eventloop_duration_cmd_sum"]) > 0
    assert int(after["instantaneous_eventloop_cycles_per_sec"]) > 0
    assert float(after["expired_stale_perc"]) > 0  # (the active cycle found them expired)
    # Over maxmemory: the time is counted while it lasts.
    config_set("maxmemory-policy", "noeviction")
    config_set("maxmemory", "1")
    wait_for(lambda: int(info_dict(rc.execute_command("INFO", "stats"))["current_eviction_exceeded_time"]) > 100)
    rc.execute_command("CONFIG", "SET", "maxmemory", "0")
    wait_for(lambda: int(info_dict(rc.execute_command("INFO", "stats"))["current_eviction_exceeded_time"]) == 0)
    assert int(info_dict(rc.execute_command("INFO", "stats"))["total_eviction_exceeded_time"]) > 100


def test_info_counts_migrates_cached_connections(rc, start_server):
    target = start_server()
    before = int(info_dict(rc.execute_command("INFO", "stats"))["migrate_cached_sockets"])
    rc.execute_command("SET", "moving", "v")
    assert rc.execute_command("MIGRATE", "127.0.0.1", target.port, "moving", 0, 5000) == b"OK"
    assert int(info_dict(rc.execute_command("INFO", "stats"))["migrate_cached_sockets"]) == before + 1


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's own section")
def test_info_peregrine_and_debug_sections(rc):
    d = info_dict(rc.execute_command("INFO", "peregrine"))
    threads = int(d["threads"])
    assert d["peregrine_version"] and threads >= 1
    for f in ("cross_shard_batches", "cross_shard_read_groups", "cross_shard_read_group_reruns",
              "cross_shard_write_groups", "worker_wakeups", "worker_spins", "worker_spin_hits"):
        assert int(d[f]) >= 0
    for i in range(threads):
        parts = dict(kv.split("=") for kv in d["worker%d" % i].split(","))
        assert set(parts) == {"clients", "keys", "commands", "ops_per_sec", "loop_cycles", "loop_usec"}
    assert "Peregrine" in sections(rc.execute_command("INFO"))
    # # Debug only by name, as Redis's.
    assert "Debug" not in sections(rc.execute_command("INFO", "everything"))
    assert fields_of(rc.execute_command("INFO", "debug")) == [
        "eventloop_duration_aof_sum", "eventloop_duration_cron_sum", "eventloop_duration_max",
        "eventloop_cmd_per_cycle_max"]


def test_info_multiple_sections(rc):
    text = rc.execute_command("INFO", "server", "keyspace")
    assert sections(text) == ["Server", "Keyspace"]


def test_info_names_are_safe_and_module_list_is_modules(rc):
    # An error code or a name with ':' or '#' would split an INFO line where
    # parsers do not expect it: Redis writes '_' instead.
    rc.execute_command("CONFIG", "RESETSTAT")
    with pytest.raises(redis.ResponseError):
        rc.execute_command("EVAL", "return redis.error_reply('MY:CO#DE oops')", 0)
    errors = rc.execute_command("INFO", "errorstats").decode()
    assert "errorstat_MY_CO_DE:count=1" in errors
    assert rc.execute_command("INFO", "module_list").decode().startswith("# Modules")


@pytest.mark.skipif(IS_REDIS, reason="the listener lines are Redis 7.2's; Debian's 7.0 has none")
def test_info_server_lists_the_listeners(start_server, tmp_path):
    sock = str(tmp_path / "p.sock")
    s = start_server("--unixsocket", sock)
    c = raw_client(s)
    lines = [ln for ln in c.execute_command("INFO", "server").decode().split("\r\n") if ln.startswith("listener")]
    c.close()
    assert lines == [f"listener0:name=tcp,bind=127.0.0.1,port={s.port}", f"listener1:name=unix,bind={sock}"]


def test_info_recent_max_input_buffer_remembers_a_big_argument(start_server):
    # Redis's client_recent_max_input_buffer is the largest input seen in
    # the last seconds, not what the clients hold when INFO runs: a 200 KB
    # SET shows a second later (its bytes became the value long before).
    s = start_server()
    c = s.client()
    c.set("big", "x" * 200000)
    time.sleep(1.2)
    assert c.info("clients")["client_recent_max_input_buffer"] >= 200000
    c.close()


def test_info_unknown_section_is_empty(rc):
    assert rc.execute_command("INFO", "nosuchsection") == b""


def test_info_keyspace(rc):
    assert rc.execute_command("INFO", "keyspace") == b"# Keyspace\r\n"
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    rc.execute_command("EXPIRE", "a", "1000")
    rc.execute_command("SELECT", "2")
    rc.execute_command("SET", "x", "1")
    rc.execute_command("SELECT", "0")
    text = rc.execute_command("INFO", "keyspace").decode()
    lines = text.split("\r\n")
    assert lines[0] == "# Keyspace"
    assert re.match(r"^db0:keys=3,expires=1,avg_ttl=\d+$", lines[1]), lines[1]
    assert re.match(r"^db2:keys=1,expires=0,avg_ttl=0$", lines[2]), lines[2]
    assert lines[3:] == [""]


def test_info_keyspace_hits_misses(rc):
    assert rc.execute_command("CONFIG", "RESETSTAT") == b"OK"
    rc.execute_command("SET", "k", "v")
    rc.execute_command("GET", "k")
    rc.execute_command("GET", "k")
    rc.execute_command("GET", "missing")
    d = info_dict(rc.execute_command("INFO", "stats"))
    assert d["keyspace_hits"] == "2"
    assert d["keyspace_misses"] == "1"


def test_info_total_commands_processed_increases(rc):
    before = int(info_dict(rc.execute_command("INFO", "stats"))["total_commands_processed"])
    for _ in range(10):
        rc.execute_command("PING")
    after = int(info_dict(rc.execute_command("INFO", "stats"))["total_commands_processed"])
    assert after - before >= 11


def test_info_connected_clients_tracks_connections(start_server):
    # A dedicated server, so connections closed by earlier tests cannot skew the count.
    s = start_server()
    rc = raw_client(s)

    def count():
        return int(info_dict(rc.execute_command("INFO", "clients"))["connected_clients"])

    assert count() == 1

    base = count()
    socks = [Conn(s) for _ in range(3)]
    try:
        for c in socks:
            assert c.call("PING") == b"+PONG\r\n"
        assert count() == base + 3
    finally:
        for c in socks:
            c.close()
    deadline = time.monotonic() + 3
    while count() != base and time.monotonic() < deadline:
        time.sleep(0.02)
    assert count() == base
    rc.close()


def test_info_commandstats(rc):
    assert rc.execute_command("CONFIG", "RESETSTAT") == b"OK"
    rc.execute_command("SET", "k", "v")
    for _ in range(3):
        rc.execute_command("GET", "k")
    with pytest.raises(redis.ResponseError):
        rc.execute_command("INCR", "k")  # not an integer: a failed call
    with pytest.raises(redis.ResponseError):
        rc.execute_command("GET", "a", "b")  # arity: a rejected call
    text = rc.execute_command("INFO", "commandstats").decode()
    lines = text.split("\r\n")
    assert lines[0] == "# Commandstats"
    stats = {}
    for line in lines[1:]:
        if line:
            name, _, rest = line.partition(":")
            stats[name] = rest
            assert re.match(
                r"^calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=\d+,failed_calls=\d+$",
                rest), line
    assert re.match(r"^calls=3,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=1,failed_calls=0$",
                    stats["cmdstat_get"]), stats["cmdstat_get"]
    # A call that ran and replied with an error counts in calls and failed_calls.
    assert re.match(r"^calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=1$",
                    stats["cmdstat_incr"]), stats["cmdstat_incr"]
    assert stats["cmdstat_set"].startswith("calls=1,")
    assert "cmdstat_config|resetstat" in stats


def test_info_everything_includes_commandstats(rc):
    s = sections(rc.execute_command("INFO", "everything"))
    assert "Commandstats" in s and "Server" in s and "Keyspace" in s
    s = sections(rc.execute_command("INFO", "all"))
    assert "Commandstats" in s


def test_info_resp3_is_verbatim(server):
    with Conn(server) as c:
        c.call("HELLO", "3")
        reply = c.call("INFO", "server")
        assert reply.startswith(b"=")
        header, rest = reply.split(b"\r\n", 1)
        assert int(header[1:]) == len(rest) - 2
        assert rest.startswith(b"txt:# Server\r\n")


# ---------------------------------------------------------------- CONFIG RESETSTAT

def test_config_resetstat(rc):
    rc.execute_command("GET", "missing")
    assert rc.execute_command("CONFIG", "RESETSTAT") == b"OK"
    d = info_dict(rc.execute_command("INFO", "stats"))
    assert d["keyspace_misses"] == "0"
    assert d["keyspace_hits"] == "0"
    assert int(d["total_commands_processed"]) <= 2
    text = rc.execute_command("INFO", "commandstats").decode()
    assert "cmdstat_get:" not in text
    with raises(arity("config|resetstat")):
        rc.execute_command("CONFIG", "RESETSTAT", "x")


def test_config_resetstat_clears_expired_keys(rc):
    rc.execute_command("SET", "k", "v", "PX", "1")
    time.sleep(0.01)
    assert rc.execute_command("GET", "k") is None  # expires it
    assert info_dict(rc.execute_command("INFO", "stats"))["expired_keys"] != "0"
    rc.execute_command("CONFIG", "RESETSTAT")
    d = info_dict(rc.execute_command("INFO", "stats"))
    assert d["expired_keys"] == "0"
    assert d["evicted_keys"] == "0"


# ---------------------------------------------------------------- COMMAND

def test_command_count_matches_command(rc):
    n = rc.execute_command("COMMAND", "COUNT")
    assert isinstance(n, int) and n > 20
    everything = rc.execute_command("COMMAND")
    assert len(everything) == n
    names = {entry[0] for entry in everything}
    for name in (b"get", b"set", b"del", b"ping", b"client", b"config", b"command", b"info"):
        assert name in names


def test_command_list(rc):
    names = rc.execute_command("COMMAND", "LIST")
    assert all(isinstance(x, bytes) for x in names)
    assert len(names) == len(set(names))
    for name in (b"get", b"set", b"mset", b"incrbyfloat", b"expire", b"scan", b"hello",
                 b"client", b"client|list", b"config|get", b"command|info"):
        assert name in names
    assert len([x for x in names if b"|" not in x]) == rc.execute_command("COMMAND", "COUNT")


def test_command_list_filterby_pattern(rc):
    names = rc.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "get*")
    for name in (b"get", b"getdel", b"getex", b"getrange", b"getset"):
        assert name in names
    assert all(x.startswith(b"get") for x in names)
    assert rc.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "nosuchcmd*") == []
    subs = rc.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "client|*")
    assert b"client|setname" in subs and b"client|list" in subs


def test_command_list_errors(rc):
    with raises("syntax error"):
        rc.execute_command("COMMAND", "LIST", "FILTERBY", "FOO", "x")
    with raises("syntax error"):
        rc.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN")
    with raises("syntax error"):
        rc.execute_command("COMMAND", "LIST", "FOO")


@pytest.mark.parametrize("name,arity_,flags,first,last,step,cats", [
    ("get", 2, [b"readonly", b"fast"], 1, 1, 1, [b"@read", b"@string", b"@fast"]),
    ("set", -3, [b"write", b"denyoom"], 1, 1, 1, [b"@write", b"@string", b"@slow"]),
    ("mset", -3, [b"write", b"denyoom"], 1, -1, 2, [b"@write", b"@string", b"@slow"]),
    ("del", -2, [b"write"], 1, -1, 1, [b"@keyspace", b"@write", b"@slow"]),
    ("ping", -1, [b"fast"], 0, 0, 0, [b"@fast", b"@connection"]),
    ("GET", 2, [b"readonly", b"fast"], 1, 1, 1, [b"@read", b"@string", b"@fast"]),
    ("setbit", 4, [b"write", b"denyoom"], 1, 1, 1, [b"@write", b"@bitmap", b"@slow"]),
    ("bitop", -4, [b"write", b"denyoom"], 2, -1, 1, [b"@write", b"@bitmap", b"@slow"]),
])
def test_command_info(rc, name, arity_, flags, first, last, step, cats):
    (entry,) = rc.execute_command("COMMAND", "INFO", name)
    assert len(entry) == 10
    assert entry[0] == name.lower().encode()
    assert entry[1] == arity_
    assert entry[2] == flags
    assert entry[3:6] == [first, last, step]
    assert entry[6] == cats
    assert isinstance(entry[7], list)  # tips
    assert isinstance(entry[8], list)  # key specs
    assert isinstance(entry[9], list)  # subcommands


@pytest.mark.parametrize("name", ["save", "bgsave", "bgrewriteaof", "lastsave", "pfselftest", "ping", "flushall"])
def test_command_info_keyless_commands_have_no_key_step(rc, name):
    # Redis reports first key, last key and step 0 0 0 for a command
    # without keys.
    (entry,) = rc.execute_command("COMMAND", "INFO", name)
    assert entry[3:6] == [0, 0, 0]


def test_command_info_raw_reply_shape(server):
    with Conn(server) as c:
        reply = c.call("COMMAND", "INFO", "get")
        assert reply.startswith(
            b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
            b"*3\r\n+@read\r\n+@string\r\n+@fast\r\n")


def test_command_info_unknown(rc):
    assert rc.execute_command("COMMAND", "INFO", "nosuchcmd") == [None]
    got = rc.execute_command("COMMAND", "INFO", "get", "nosuchcmd", "set")
    assert [e[0] if e else None for e in got] == [b"get", None, b"set"]


def test_command_info_no_args_is_all(rc):
    assert len(rc.execute_command("COMMAND", "INFO")) == rc.execute_command("COMMAND", "COUNT")


def test_command_info_has_subcommands(rc):
    (entry,) = rc.execute_command("COMMAND", "INFO", "client")
    assert entry[0] == b"client"
    assert entry[1] == -2
    subs = {s[0] for s in entry[9]}
    assert {b"client|setname", b"client|getname", b"client|id", b"client|list", b"client|kill"} <= subs


def test_command_docs(rc3):
    docs = rc3.execute_command("COMMAND", "DOCS", "get")
    assert list(docs.keys()) == [b"get"]
    d = docs[b"get"]
    assert isinstance(d[b"summary"], bytes) and d[b"summary"]
    assert d[b"since"] == b"1.0.0"
    assert d[b"group"] == b"string"
    assert rc3.execute_command("COMMAND", "DOCS", "nosuchcmd") == {}
    # A command Redis documents with no complexity has no such field.
    monitor = rc3.execute_command("COMMAND", "DOCS", "monitor")[b"monitor"]
    assert b"complexity" not in monitor and monitor[b"since"] == b"1.0.0"
    assert b"complexity" in docs[b"get"]


def test_command_docs_resp2(rc):
    docs = rc.execute_command("COMMAND", "DOCS", "set")
    assert docs[0] == b"set"
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d[b"since"] == b"1.0.0"
    assert d[b"group"] == b"string"
    assert d[b"summary"]


@pytest.mark.parametrize("args,keys", [
    (("set", "a", "b"), [b"a"]),
    (("SET", "a", "b", "EX", "10"), [b"a"]),
    (("get", "k"), [b"k"]),
    (("mset", "a", "1", "b", "2"), [b"a", b"b"]),
    (("mget", "a", "b", "c"), [b"a", b"b", b"c"]),
    (("del", "x", "y"), [b"x", b"y"]),
    (("rename", "src", "dst"), [b"src", b"dst"]),
    (("copy", "src", "dst", "DB", "1"), [b"src", b"dst"]),
    (("eval", "return 1", "1", "key"), [b"key"]),
    (("eval", "return 1", "0"), []),  # (no keys, none needed)
    (("fcall", "f", "0"), []),
])
def test_command_getkeys(rc, args, keys):
    assert rc.execute_command("COMMAND", "GETKEYS", *args) == keys


@pytest.mark.parametrize("args,msg", [
    (("nosuchcmd", "a"), "Invalid command specified"),
    (("ping", "x"), "The command has no key arguments"),
    (("echo", "x"), "The command has no key arguments"),
    (("set", "a"), "Invalid number of arguments specified for command"),
    (("get", "a", "b"), "Invalid number of arguments specified for command"),
    (("zunionstore", "dst", "5", "a"), "Invalid arguments specified for command"),
    (("zunion", "0", "a"), "Invalid arguments specified for command"),
])
def test_command_getkeys_errors(rc, args, msg):
    if args[0] == "zunionstore":
        # Key extraction failing on well-formed arity needs a numkeys command.
        require_command(rc, "zunionstore")
    with raises(msg):
        rc.execute_command("COMMAND", "GETKEYS", *args)


def test_command_getkeys_arity(rc):
    with raises(arity("command|getkeys")):
        rc.execute_command("COMMAND", "GETKEYS")
    with raises(arity("command|count")):
        rc.execute_command("COMMAND", "COUNT", "x")


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 behaviour (COMMAND GETKEYS arity -3); Debian's 7.0 has -4")
def test_command_getkeys_command_without_args(rc):
    with raises("Invalid number of arguments specified for command"):
        rc.execute_command("COMMAND", "GETKEYS", "get")
    with raises("Invalid command specified"):
        rc.execute_command("COMMAND", "GETKEYS", "nosuchcmd")
    with raises("The command has no key arguments"):
        rc.execute_command("COMMAND", "GETKEYS", "ping")


# ---------------------------------------------------------------- CONFIG GET / SET

def config_get(rc, *patterns):
    flat = rc.execute_command("CONFIG", "GET", *patterns)
    assert isinstance(flat, list) and len(flat) % 2 == 0
    d = dict(zip(flat[0::2], flat[1::2]))
    assert len(d) == len(flat) // 2  # no duplicates
    return d


def test_config_get_single(server, rc):
    assert rc.execute_command("CONFIG", "GET", "port") == [b"port", str(server.port).encode()]
    assert config_get(rc, "databases") == {b"databases": b"16"}
    assert config_get(rc, "nosuchparam") == {}


def test_config_get_glob(rc):
    d = config_get(rc, "max*")
    assert b"maxclients" in d
    assert all(k.startswith(b"max") for k in d)
    d = config_get(rc, "ma?clients")
    assert d == {b"maxclients": d[b"maxclients"]}
    assert int(d[b"maxclients"]) > 0
    d = config_get(rc, "*")
    for name in (b"port", b"bind", b"databases", b"maxclients", b"timeout", b"loglevel"):
        assert name in d


def test_config_get_pattern_is_case_insensitive(rc):
    assert config_get(rc, "Data*") == {b"databases": b"16"}


def test_config_get_multiple_patterns(server, rc):
    d = config_get(rc, "port", "timeout", "nosuchparam", "port", "data*")
    assert d == {b"port": str(server.port).encode(), b"timeout": d[b"timeout"],
                 b"databases": b"16"}


def test_config_get_hides_test_hooks_from_patterns(rc):
    # Redis's hidden directives come only when named exactly.
    for name in (b"key-load-delay", b"rdb-key-save-delay"):
        assert name not in config_get(rc, "*")
        assert name not in config_get(rc, "*delay")
        assert config_get(rc, name.decode()) == {name: b"0"}


def test_config_set_of_a_fixed_directive_to_its_own_value(server, rc):
    # (Peregrine's own fixed directives take the value they have, so that a
    # CONFIG GET * written back works, as Redis's sanity test does; another
    # value is refused. Redis's immutable ones refuse any.)
    assert rc.execute_command("CONFIG", "SET", "port", str(server.port)) == b"OK"
    if IS_REDIS:
        return
    threads = config_get(rc, "threads")[b"threads"]
    assert rc.execute_command("CONFIG", "SET", "threads", threads) == b"OK"
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        rc.execute_command("CONFIG", "SET", "threads", str(int(threads) + 1))
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        rc.execute_command("CONFIG", "SET", "databases", "16")


def test_config_set_port_moves_the_listener(start_server):
    import socket
    from conftest import free_port
    s = start_server()
    c = s.client()
    new = free_port()
    assert c.execute_command("CONFIG", "SET", "port", str(new)) in (b"OK", "OK")
    assert redis.Redis(port=new).ping()
    time.sleep(0.3)  # (the old sockets close at the next cron tick)
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=s.port, socket_connect_timeout=1).ping()
    # A port in use: the whole command goes back, the listener stays.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        c2 = redis.Redis(port=new)
        with pytest.raises(redis.ResponseError, match=r"^CONFIG SET failed \(possibly related to argument 'port'\) - "
                           r"Unable to listen on this port"):
            c2.execute_command("CONFIG", "SET", "maxmemory", "10000001", "port", str(busy))
        assert c2.config_get("maxmemory") == {"maxmemory": "0"}
        assert c2.config_get("port") == {"port": str(new)}
        assert redis.Redis(port=new).ping()
    s.port = new  # (for its stop)


def test_config_get_resp3_map(server, rc3):
    d = rc3.execute_command("CONFIG", "GET", "port", "databases")
    assert d == {b"port": str(server.port).encode(), b"databases": b"16"}


def test_config_set_and_get(rc):
    old = config_get(rc, "maxclients", "timeout", "loglevel")
    try:
        assert rc.execute_command("CONFIG", "SET", "maxclients", "100") == b"OK"
        assert config_get(rc, "maxclients") == {b"maxclients": b"100"}
        assert rc.execute_command("CONFIG", "SET", "timeout", "300") == b"OK"
        assert config_get(rc, "timeout") == {b"timeout": b"300"}
        assert rc.execute_command("CONFIG", "SET", "loglevel", "warning") == b"OK"
        assert config_get(rc, "loglevel") == {b"loglevel": b"warning"}
        assert rc.execute_command("CONFIG", "SET", "TIMEOUT", "200") == b"OK"
        assert config_get(rc, "timeout") == {b"timeout": b"200"}
        # Several parameters at once.
        assert rc.execute_command("CONFIG", "SET", "timeout", "7", "loglevel", "notice") == b"OK"
        assert config_get(rc, "timeout", "loglevel") == {b"timeout": b"7", b"loglevel": b"notice"}
    finally:
        rc.execute_command("CONFIG", "SET", "maxclients", old[b"maxclients"],
                           "timeout", old[b"timeout"], "loglevel", old[b"loglevel"])


def test_config_set_unknown_param(rc):
    with raises("Unknown option or number of arguments for CONFIG SET - 'nosuchparam'"):
        rc.execute_command("CONFIG", "SET", "nosuchparam", "1")
    with raises("Unknown option or number of arguments for CONFIG SET - 'nosuchparam'"):
        rc.execute_command("CONFIG", "SET", "timeout", "0", "nosuchparam", "1")


@pytest.mark.parametrize("param,value,reason", [
    ("timeout", "abc", "argument couldn't be parsed into an integer"),
    ("timeout", "1.5", "argument couldn't be parsed into an integer"),
    ("timeout", "-1", "argument must be between 0 and 2147483647 inclusive"),
    ("maxclients", "0", "argument must be between 1 and 4294967295 inclusive"),
    ("maxclients", "abc", "argument couldn't be parsed into an integer"),
    ("databases", "4", "can't set immutable config"),
    ("databases", "abc", "can't set immutable config"),  # immutability is checked first
    ("hz", "abc", "argument couldn't be parsed into an integer"),
])
def test_config_set_bad_value(rc, param, value, reason):
    with raises("CONFIG SET failed (possibly related to argument '%s') - %s" % (param, reason)):
        rc.execute_command("CONFIG", "SET", param, value)


def test_config_set_loglevel_bad_value(rc):
    choices = "debug, verbose, notice, warning" if IS_REDIS else "debug, verbose, notice, warning, nothing"
    with raises("CONFIG SET failed (possibly related to argument 'loglevel') - "
                "argument(s) must be one of the following: " + choices):
        rc.execute_command("CONFIG", "SET", "loglevel", "loud")


@skip_72
def test_config_set_loglevel_nothing(rc):
    old = config_get(rc, "loglevel")[b"loglevel"]
    try:
        assert rc.execute_command("CONFIG", "SET", "loglevel", "nothing") == b"OK"
        assert config_get(rc, "loglevel") == {b"loglevel": b"nothing"}
    finally:
        rc.execute_command("CONFIG", "SET", "loglevel", old)


def test_config_set_is_atomic(rc):
    old = config_get(rc, "timeout")[b"timeout"]
    with raises("CONFIG SET failed (possibly related to argument 'maxclients') - "
                "argument couldn't be parsed into an integer"):
        rc.execute_command("CONFIG", "SET", "timeout", "55", "maxclients", "abc")
    assert config_get(rc, "timeout") == {b"timeout": old}


def test_config_set_duplicate_and_syntax(rc):
    with raises("CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter"):
        rc.execute_command("CONFIG", "SET", "timeout", "0", "timeout", "1")
    with raises("syntax error"):
        rc.execute_command("CONFIG", "SET", "timeout", "0", "loglevel")
    with raises(arity("config|set")):
        rc.execute_command("CONFIG", "SET", "timeout")
    with raises(arity("config|get")):
        rc.execute_command("CONFIG", "GET")


def test_config_set_maxclients_is_enforced(start_server):
    s = start_server("--maxclients", "2")
    a, b = Conn(s), Conn(s)
    try:
        assert a.call("PING") == b"+PONG\r\n"
        assert b.call("PING") == b"+PONG\r\n"
        with Conn(s) as c:
            assert c.read_until_closed() == b"-ERR max number of clients reached\r\n"
        assert a.call("CONFIG", "SET", "maxclients", "3") == b"+OK\r\n"
        with Conn(s) as c:
            assert c.call("PING") == b"+PONG\r\n"
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------- TIME / DEBUG SLEEP

def test_time(rc):
    before = time.time()
    secs, usecs = rc.execute_command("TIME")
    after = time.time()
    assert secs.isdigit() and usecs.isdigit()
    assert 0 <= int(usecs) < 1000000
    t = int(secs) + int(usecs) / 1e6
    assert before - 1 <= t <= after + 1
    with raises(arity("time")):
        rc.execute_command("TIME", "x")


def test_time_raw(server):
    with Conn(server) as c:
        reply = c.call("TIME")
        assert re.match(rb"^\*2\r\n\$\d+\r\n\d+\r\n\$\d+\r\n\d+\r\n$", reply), reply


DEBUG_NOT_ALLOWED = (
    "DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from "
    "a local connection, otherwise you need to set this option in the configuration file, and then restart "
    "the server.")


def test_debug_refused_by_default(rc):
    # Redis 7: DEBUG is a protected command, off unless enable-debug-command
    # allows it; refused after the arity check, whatever the subcommand.
    assert rc.execute_command("CONFIG", "GET", "enable-debug-command") == [b"enable-debug-command", b"no"]
    rc.execute_command("CONFIG", "RESETSTAT")
    for args in (("SLEEP", "0"), ("HELP",), ("NOSUCH", "x")):
        with raises(DEBUG_NOT_ALLOWED):
            rc.execute_command("DEBUG", *args)
    with raises(arity("debug")):
        rc.execute_command("DEBUG")
    # Refused before running, as Redis's protected commands: rejected, not
    # failed, and not a call.
    text = rc.execute_command("INFO", "commandstats").decode()
    assert re.search(r"^cmdstat_debug:calls=0,.*,rejected_calls=4,failed_calls=0\r$", text, re.M), text
    with raises("CONFIG SET failed (possibly related to argument 'enable-debug-command') - "
                "can't set immutable config"):
        rc.execute_command("CONFIG", "SET", "enable-debug-command", "yes")
    assert rc.execute_command("PING") == b"PONG"


@pytest.mark.parametrize("value,shown", [("yes", b"yes"), ("LOCAL", b"local"), ("no", b"no")])
def test_enable_debug_command_values(start_server, value, shown):
    s = start_server("--enable-debug-command", value)
    c = raw_client(s)
    try:
        assert c.execute_command("CONFIG", "GET", "enable-debug-command") == [b"enable-debug-command", shown]
        if shown == b"no":
            with raises(DEBUG_NOT_ALLOWED):
                c.execute_command("DEBUG", "SLEEP", "0")
        else:  # the test connects from 127.0.0.1: local
            assert c.execute_command("DEBUG", "SLEEP", "0") == b"OK"
    finally:
        c.close()


def test_debug_sleep_zero(start_server):
    s = start_server("--enable-debug-command", "local")
    c = raw_client(s)
    try:
        assert c.execute_command("DEBUG", "SLEEP", "0") == b"OK"
        t0 = time.monotonic()
        assert c.execute_command("DEBUG", "SLEEP", "0.1") == b"OK"
        assert time.monotonic() - t0 >= 0.09
        assert c.execute_command("PING") == b"PONG"
    finally:
        c.close()


# ---------------------------------------------------------------- SHUTDOWN

def test_shutdown_nosave(start_server):
    s = start_server()
    with Conn(s) as c:
        assert c.call("SET", "k", "v") == b"+OK\r\n"
        c.send(encode("SHUTDOWN", "NOSAVE"))
        assert c.read_until_closed(timeout=10) == b""
    assert s.proc.wait(timeout=10) == 0


def test_shutdown_runs_nothing_after_it_in_a_pipeline(start_server):
    # Redis exits inside SHUTDOWN: the commands after it in the same read
    # never run (Redis drops the replies before it too; Peregrine sends them).
    s = start_server()
    with Conn(s) as c:
        c.send(encode("SET", "a", "1") + encode("SHUTDOWN", "NOSAVE") + encode("SET", "b", "2") + encode("PING"))
        out = c.read_until_closed(timeout=10)
    assert out in (b"", b"+OK\r\n"), out
    assert s.proc.wait(timeout=10) == 0


def test_shutdown_bad_args(start_server):
    s = start_server()
    with Conn(s) as c:
        assert c.call("SHUTDOWN", "FOO") == b"-ERR syntax error\r\n"
        assert c.call("SHUTDOWN", "NOSAVE", "SAVE") == b"-ERR syntax error\r\n"
        assert c.call("PING") == b"+PONG\r\n"
    assert s.proc.poll() is None


def test_lolwut(rc):
    # Redis 7.2: the version line alone; VERSION 5 or 6, a piece of art
    # (Peregrine's own) with [columns] [rows], then the line.
    assert b"Redis ver. " in rc.execute_command("LOLWUT")
    art = rc.execute_command("LOLWUT", "VERSION", "5", "12", "3")
    assert art.endswith(b"\n") and b"Redis ver. " in art
    with pytest.raises(redis.ResponseError, match="not an integer"):
        rc.execute_command("LOLWUT", "VERSION", "five")
    if IS_REDIS:
        return
    assert rc.execute_command("LOLWUT") == b"Redis ver. " + info_dict(rc.execute_command("INFO", "server"))[
        "redis_version"].encode() + b"\n"
    lines = art.decode().split("\n")
    assert [len(l) for l in lines[:3]] == [12, 12, 12] and lines[3] == ""
    assert art == rc.execute_command("LOLWUT", "VERSION", "5", "12", "3")  # (the same field each time)
    assert rc.execute_command("LOLWUT", "VERSION", "6", "0", "0").count(b"\n") == 3  # (held to one cell)


def test_module_list_help_and_refused_loads(rc):
    # No module is loaded (Peregrine loads none): LIST is empty; LOAD &
    # co. follow enable-module-command (no, by default), as Redis 7.
    assert rc.execute_command("MODULE", "LIST") == []
    help_lines = rc.execute_command("MODULE", "HELP")
    assert help_lines[0].startswith(b"MODULE <subcommand>") and b"UNLOAD <name>" in help_lines
    for args in (("LOAD", "/no/such.so"), ("LOADEX", "/no/such.so"), ("UNLOAD", "foo")):
        with raises("MODULE command not allowed. If the enable-module-command option is set to \"local\", you can "
                    "run it from a local connection, otherwise you need to set this option in the configuration "
                    "file, and then restart the server."):
            rc.execute_command("MODULE", *args)
    with raises("unknown subcommand 'FOO'. Try MODULE HELP."):
        rc.execute_command("MODULE", "FOO")


def test_module_load_fails_and_unload_finds_nothing(start_server):
    s = start_server("--enable-module-command", "yes")
    c = s.client()
    with pytest.raises(redis.ResponseError, match="^Error loading the extension. Please check the server logs.$"):
        c.execute_command("MODULE", "LOAD", "/no/such.so")
    with pytest.raises(redis.ResponseError, match="^Error loading the extension"):
        c.execute_command("MODULE", "LOADEX", "/no/such.so", "ARGS", "x")
    with pytest.raises(redis.ResponseError, match="^Error unloading module: no such module with that name$"):
        c.execute_command("MODULE", "UNLOAD", "foo")
    assert c.execute_command("MODULE", "LIST") == []
