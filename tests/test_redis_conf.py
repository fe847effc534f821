# A Redis user's configuration works unchanged: Debian's stock redis.conf
# starts Peregrine; the directives of Redis 7 that mean nothing here
# (config_compat.cc) are accepted with Redis's defaults, checks and replies,
# compared with redis-server; `include` reads other files as Redis 7 does.
import os
import subprocess

import pytest
import redis

from conftest import IS_REDIS, PEREGRINE_BIN, ServerProcess, free_port

REDIS_CONF = "/etc/redis/redis.conf"

# Redis 7's directives that Peregrine accepts and ignores (as CONFIG GET
# names them), and the aliases it now takes.
INERT = [
    "activerehashing", "activedefrag", "active-defrag-ignore-bytes", "active-defrag-threshold-lower",
    "active-defrag-threshold-upper", "active-defrag-cycle-min", "active-defrag-cycle-max",
    "active-defrag-max-scan-fields", "active-expire-effort", "always-show-logo", "aof-disable-auto-gc",
    "server_cpulist", "bio_cpulist", "aof_rewrite_cpulist", "bgsave_cpulist", "bind-source-addr",
    "crash-log-enabled", "crash-memcheck-enabled", "disable-thp", "dynamic-hz", "ignore-warnings",
    "io-threads-do-reads", "jemalloc-bg-thread", "lazyfree-lazy-eviction", "lazyfree-lazy-expire",
    "lazyfree-lazy-server-del", "lazyfree-lazy-user-del", "replica-lazy-flush", "slave-lazy-flush",
    "maxmemory-eviction-tenacity", "oom-score-adj", "oom-score-adj-values", "proc-title-template",
    "propagation-error-behavior", "rdb-del-sync-files", "rdb-save-incremental-fsync", "repl-disable-tcp-nodelay",
    "replica-ignore-disk-write-errors", "sanitize-dump-payload", "set-proc-title", "shutdown-on-sigint",
    "shutdown-on-sigterm", "socket-mark-id", "syslog-enabled", "syslog-ident", "syslog-facility",
    "tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass", "repl-ping-slave-period",
]

# CONFIG SET cases: each answered as redis-server answers it.
SETS = [
    ("activerehashing", "no"), ("activerehashing", "maybe"), ("active-defrag-cycle-max", "99"),
    ("active-defrag-cycle-max", "100"), ("active-defrag-cycle-min", "0"), ("active-defrag-ignore-bytes", "2mb"),
    ("active-defrag-ignore-bytes", "lots"), ("active-expire-effort", "11"), ("maxmemory-eviction-tenacity", "50"),
    ("maxmemory-eviction-tenacity", "x"), ("oom-score-adj", "relative"), ("oom-score-adj", "sometimes"),
    ("oom-score-adj-values", "0 100 900"), ("oom-score-adj-values", "0 100"),
    ("oom-score-adj-values", "0 100 5000"), ("propagation-error-behavior", "panic-on-replicas"),
    ("sanitize-dump-payload", "clients"), ("sanitize-dump-payload", "always"), ("shutdown-on-sigterm", "nosave now"),
    ("shutdown-on-sigint", "later"), ("lazyfree-lazy-eviction", "yes"), ("slave-lazy-flush", "yes"),
    ("jemalloc-bg-thread", "no"), ("disable-thp", "no"), ("set-proc-title", "no"), ("syslog-ident", "x"),
    ("socket-mark-id", "1"), ("io-threads-do-reads", "yes"), ("ignore-warnings", "ARM64-COW-BUG"),
    ("repl-ping-slave-period", "5"), ("repl-ping-slave-period", "0"), ("tls-client-cert-file", ""),
    ("activedefrag", "yes"), ("activedefrag", "no"), ("shutdown-on-sigint", "save nosave"),
    ("shutdown-on-sigint", "now nosave"), ("shutdown-on-sigint", "force force"), ("shutdown-on-sigterm", "default save"),
    ("shutdown-on-sigterm", "default"), ("oom-score-adj-values", "0 x 1"), ("proc-title-template", "{nonsense}"),
    ("proc-title-template", ""), ("proc-title-template", "{title} on {port}"), ("proc-title-template", "{title"),
]

# Two names of one setting: set by one, read by the other (and by itself).
ALIASES = [("replica-lazy-flush", "slave-lazy-flush", "yes"), ("repl-ping-replica-period", "repl-ping-slave-period", "9")]


def outcome(c, *cmd):
    try:
        return c.execute_command(*cmd)
    except redis.ResponseError as e:
        return ("error", str(e))


@pytest.fixture
def both(tmp_path):
    ours = ServerProcess(tmp_path=tmp_path, kind="peregrine")
    theirs = ServerProcess(tmp_path=tmp_path, kind="redis")
    yield ours.client(decode_responses=True), theirs.client(decode_responses=True)
    ours.stop()
    theirs.stop()


pytestmark = pytest.mark.skipif(IS_REDIS, reason="compares Peregrine with redis-server itself")


def test_inert_directives_read_back_redis_defaults(both):
    ours, theirs = both
    for name in INERT:
        assert outcome(ours, "CONFIG", "GET", name) == outcome(theirs, "CONFIG", "GET", name), name


def test_inert_directives_are_set_and_refused_as_redis_does(both):
    ours, theirs = both
    for name, value in SETS:
        assert outcome(ours, "CONFIG", "SET", name, value) == outcome(theirs, "CONFIG", "SET", name, value), \
            (name, value)
        assert outcome(ours, "CONFIG", "GET", name) == outcome(theirs, "CONFIG", "GET", name), (name, value)


def test_an_alias_sets_its_directive(both):
    for name, alias, value in ALIASES:
        for first, second in ((name, alias), (alias, name)):
            for c in both:
                c.config_set(first, value)
                assert c.config_get(second) == {second: value}


@pytest.mark.skipif(not os.path.exists(REDIS_CONF), reason="Debian's redis-server package is not installed")
def test_debians_redis_conf_starts_peregrine_unchanged(tmp_path):
    # (Its paths are the packaged service's: the test moves them here.)
    srv = ServerProcess(["--dir", str(tmp_path), "--daemonize", "no", "--pidfile", "", "--logfile", ""],
                        tmp_path=tmp_path, kind="peregrine", config=REDIS_CONF)
    try:
        c = srv.client(decode_responses=True)
        assert c.ping()
        assert c.config_get("jemalloc-bg-thread") == {"jemalloc-bg-thread": "yes"}
        assert c.config_get("hz") == {"hz": "10"}
        log = srv.output()
        assert "Redis directives accepted, with no effect in Peregrine" in log
        assert "activerehashing" in log and "jemalloc-bg-thread" in log
    finally:
        srv.stop()


def test_include_reads_files_in_place_and_later_lines_win(tmp_path):
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "10-a.conf").write_text("hz 20\nmaxmemory 1mb\n")
    (tmp_path / "conf.d" / "20-b.conf").write_text("include " + str(tmp_path / "nested.conf") + "\n")
    (tmp_path / "nested.conf").write_text("slowlog-max-len 77\nhz 30\n")
    main = tmp_path / "main.conf"
    main.write_text("hz 5\ninclude " + str(tmp_path / "conf.d" / "*.conf") + "\nmaxmemory 2mb\n")
    srv = ServerProcess([], tmp_path=tmp_path, kind="peregrine", config=main)
    try:
        c = srv.client(decode_responses=True)
        # hz: 5, then 20 (a), then 30 (b's nested file); maxmemory: 1mb, then the main file's 2mb.
        assert c.config_get("hz") == {"hz": "30"}
        assert c.config_get("maxmemory") == {"maxmemory": str(2 * 1024 * 1024)}
        assert c.config_get("slowlog-max-len") == {"slowlog-max-len": "77"}
        # CONFIG REWRITE keeps the include line where it was.
        c.config_set("slowlog-max-len", "78")
        c.config_rewrite()
        assert "include " + str(tmp_path / "conf.d" / "*.conf") in main.read_text()
    finally:
        srv.stop()


def run(*args, cwd):
    p = subprocess.run([PEREGRINE_BIN, *args, "--port", str(free_port())], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=10, cwd=cwd)
    return p.returncode, p.stdout.decode(errors="replace")


def test_include_errors_stop_the_start(tmp_path):
    main = tmp_path / "main.conf"
    main.write_text("include " + str(tmp_path / "missing.conf") + "\n")
    rc, out = run(str(main), cwd=tmp_path)
    # (Told alone, as redis-server tells it.)
    assert rc == 1 and out.strip() == f"Fatal error, can't open config file '{tmp_path / 'missing.conf'}': " \
                                      "No such file or directory"
    loop = tmp_path / "loop.conf"
    loop.write_text("include " + str(loop) + "\n")
    rc, out = run(str(loop), cwd=tmp_path)
    assert rc == 1 and "Too many nested includes" in out
    bad = tmp_path / "bad.conf"
    bad.write_text("hz 7 8\n")
    main.write_text("include " + str(bad) + "\n")
    rc, out = run(str(main), cwd=tmp_path)
    assert rc == 1 and str(bad) in out
    # A pattern that matches nothing includes nothing (Redis's too).
    main.write_text("include " + str(tmp_path / "none" / "*.conf") + "\nhz 12\n")
    srv = ServerProcess([], tmp_path=tmp_path, kind="peregrine", config=main)
    try:
        assert srv.client(decode_responses=True).config_get("hz") == {"hz": "12"}
    finally:
        srv.stop()


def renamed_pair(tmp_path, *renames):
    args = []
    for old, new in renames:
        args += ["--rename-command", old, new]
    ours = ServerProcess(args, tmp_path=tmp_path, kind="peregrine")
    theirs = ServerProcess(args, tmp_path=tmp_path, kind="redis")
    return ours, theirs


def test_rename_command_as_redis_does(tmp_path):
    plain = ServerProcess([], tmp_path=tmp_path, kind="peregrine")
    c = plain.client()
    c.response_callbacks.pop("COMMAND", None)
    plain_count = c.execute_command("COMMAND", "COUNT")
    plain.stop()
    ours, theirs = renamed_pair(tmp_path, ("flushall", ""), ("CONFIG", "my-config"), ("set", "put"))
    try:
        a, b = ours.client(decode_responses=True), theirs.client(decode_responses=True)
        for c in (a, b):
            c.response_callbacks.pop("COMMAND", None)  # (COMMAND's replies as they are)
        for cmd in (("FLUSHALL",), ("CONFIG", "GET", "hz"), ("SET", "k", "v"), ("PUT", "k", "v"), ("GET", "k"),
                    ("MY-CONFIG", "GET", "hz"), ("my-config", "set", "hz", "11"), ("MY-CONFIG", "GET", "hz"),
                    ("COMMAND", "INFO", "flushall"), ("EVAL", "return redis.call('put', 'j', 1)", "0"),
                    ("EVAL", "return redis.pcall('set', 'j', 1)", "0")):
            assert outcome(a, *cmd) == outcome(b, *cmd), cmd
        # COMMAND INFO by the new name: the command under its own name.
        assert a.execute_command("COMMAND", "INFO", "put")[0][0] == "set"
        # One command gone from the listing; the renamed ones still there.
        assert a.execute_command("COMMAND", "COUNT") == plain_count - 1
        names = [e[0] for e in a.execute_command("COMMAND")]
        assert "flushall" not in names and "set" in names and "config" in names
        assert "flushall" not in a.execute_command("COMMAND", "LIST")
    finally:
        ours.stop()
        theirs.stop()


def test_acl_rules_name_commands_by_their_own_names(tmp_path):
    # (Redis's ACLLookupCommand looks in its original table: a hardened
    # file that renames FLUSHALL away and denies it by name starts.)
    ours, theirs = renamed_pair(tmp_path, ("flushall", ""), ("config", "cfg"))
    try:
        a, b = ours.client(decode_responses=True), theirs.client(decode_responses=True)
        for cmd in (("ACL", "SETUSER", "u1", "on", "nopass", "~*", "+@all", "-flushall"),
                    ("ACL", "SETUSER", "u2", "on", "+config|get"), ("ACL", "SETUSER", "u3", "on", "+cfg"),
                    ("ACL", "SETUSER", "u4", "on", "+cfg|get"),
                    ("ACL", "DRYRUN", "u2", "cfg", "get", "hz"), ("ACL", "DRYRUN", "u2", "config", "get", "hz")):
            assert outcome(a, *cmd) == outcome(b, *cmd), cmd
    finally:
        ours.stop()
        theirs.stop()


def test_renamed_commands_still_replay_from_the_aof(tmp_path):
    # The file holds SET as written before the rename: it loads.
    srv = ServerProcess(["--appendonly", "yes", "--dir", str(tmp_path)], tmp_path=tmp_path, kind="peregrine")
    srv.client().set("k", "v1")
    srv.stop()
    srv = ServerProcess(["--appendonly", "yes", "--dir", str(tmp_path), "--rename-command", "set", ""],
                        tmp_path=tmp_path, kind="peregrine")
    try:
        assert srv.client().get("k") == b"v1"
    finally:
        srv.stop()


def test_rename_command_and_loadmodule_errors_stop_the_start(tmp_path):
    rc, out = run("--rename-command", "nosuch", "x", cwd=tmp_path)
    assert rc == 1 and "No such command in rename-command" in out
    rc, out = run("--rename-command", "get", "set", cwd=tmp_path)
    assert rc == 1 and "Target command name already exists" in out
    rc, out = run("--rename-command", "get", cwd=tmp_path)
    assert rc == 1 and "wrong number of arguments" in out
    rc, out = run("--loadmodule", "/usr/lib/redis/modules/x.so", cwd=tmp_path)
    assert rc == 1 and "no module can be loaded" in out


def test_a_renamed_client_reply_still_turns_replies_off(tmp_path):
    import socket
    ours, theirs = renamed_pair(tmp_path, ("client", "cl"))
    try:
        got = []
        for srv in (ours, theirs):
            with socket.create_connection((srv.host, srv.port), timeout=5) as s:
                s.sendall(b"CL REPLY OFF\r\nPING\r\nCL REPLY ON\r\nPING\r\n")
                data = b""
                while data.count(b"\r\n") < 2:
                    data += s.recv(1024)
                got.append(data)
        assert got[0] == got[1] == b"+OK\r\n+PONG\r\n"
    finally:
        ours.stop()
        theirs.stop()
