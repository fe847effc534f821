# MONITOR, as Redis 7.2: the +OK, then one simple-string line per command
# once it has run ("<secs>.<usecs> [<db> <addr>] "arg" ..."), arguments
# quoted as sdscatrepr does, passwords redacted, admin commands left out,
# a script's calls marked [<db> lua] after the script's own line, MULTI's
# commands at EXEC, a blocked command once. A second MONITOR gets no reply,
# MONITOR inside MULTI fails at EXEC, RESET ends it, CLIENT LIST shows O.
# With several workers, each key's commands reach the monitor in the order
# they ran.
# Every test passes against redis-server too (TEST_SERVER=redis).
import re
import threading

import pytest

from conftest import IS_REDIS
from helpers import Conn, encode, rc  # noqa: F401 (fixtures)

LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)\r\n$")


@pytest.fixture
def mon(server, rc):
    m = Conn(server)
    assert m.call("MONITOR") == b"+OK\r\n"
    yield m
    m.close()


def next_line(m):
    line = m.read_reply()
    match = LINE.match(line)
    assert match, line
    return int(match.group(3)), match.group(4), match.group(5)


def test_lines_name_db_client_and_quoted_arguments(server, rc, mon):
    rc.execute_command("SET", "k", "two words")
    rc.execute_command("GET", b'a"b\\c\n\x01\xff')
    rc.execute_command("SELECT", "5")
    rc.execute_command("DEL", "k")
    me = rc.execute_command("CLIENT", "INFO").split()[1].split(b"=")[1]
    assert next_line(mon) == (0, me, b'"SET" "k" "two words"')
    assert next_line(mon) == (0, me, b'"GET" "a\\"b\\\\c\\n\\x01\\xff"')
    assert next_line(mon) == (5, me, b'"SELECT" "5"')  # (the database after it ran)
    assert next_line(mon) == (5, me, b'"DEL" "k"')
    assert next_line(mon) == (5, me, b'"CLIENT" "INFO"')
    rc.execute_command("SELECT", "0")
    assert next_line(mon)[2] == b'"SELECT" "0"'


def test_passwords_are_redacted_and_admin_commands_left_out(server, rc, mon):
    c = Conn(server)
    try:
        assert c.call("AUTH", "nobody", "secret").startswith(b"-WRONGPASS")
        assert c.call("HELLO", "2", "AUTH", "nobody", "secret").startswith(b"-WRONGPASS")
        assert c.call("CONFIG", "GET", "maxmemory").startswith(b"*2")  # admin: not shown
        assert c.call("PING") == b"+PONG\r\n"
    finally:
        c.close()
    assert next_line(mon)[2] == b'"AUTH" "(redacted)" "(redacted)"'
    assert next_line(mon)[2] == b'"HELLO" "2" "AUTH" "(redacted)" "(redacted)"'
    assert next_line(mon)[2] == b'"PING"'


def test_script_line_comes_before_its_calls(server, rc, mon):
    rc.execute_command("EVAL", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])", 1, "sk", "v")
    _, origin, args = next_line(mon)
    assert args.startswith(b'"EVAL" ')
    assert next_line(mon) == (0, b"lua", b'"SET" "sk" "v"')
    assert next_line(mon) == (0, b"lua", b'"GET" "sk"')


def test_transaction_commands_show_at_exec(server, rc, mon):
    c = Conn(server)
    try:
        c.send(encode("MULTI") + encode("SET", "t1", "a") + encode("INCR", "t2") + encode("EXEC"))
        for _ in range(4):
            c.read_reply()
    finally:
        c.close()
    assert next_line(mon)[2] == b'"MULTI"'
    assert next_line(mon)[2] == b'"SET" "t1" "a"'
    assert next_line(mon)[2] == b'"INCR" "t2"'
    assert next_line(mon)[2] == b'"EXEC"'


def test_transaction_on_one_shard_names_its_client(server, rc, mon):
    # (Its keys on one shard: with several workers, the whole MULTI ... EXEC
    # may run on another worker than the client's; its lines still name the
    # client, in order, with its words as it wrote them.)
    c = Conn(server)
    try:
        me = c.call("CLIENT", "INFO").split(b" ")[1].split(b"=")[1]
        c.send(encode("multi") + encode("SET", "{x}a", "1") + encode("INCR", "{x}b") + encode("exec"))
        for _ in range(4):
            c.read_reply()
    finally:
        c.close()
    assert next_line(mon) == (0, me, b'"CLIENT" "INFO"')
    assert next_line(mon) == (0, me, b'"multi"')
    assert next_line(mon) == (0, me, b'"SET" "{x}a" "1"')
    assert next_line(mon) == (0, me, b'"INCR" "{x}b"')
    assert next_line(mon) == (0, me, b'"exec"')


def test_blocked_command_shows_once(server, rc, mon):
    blocker = Conn(server)
    try:
        blocker.send(encode("BLPOP", "bq", "5"))
        assert next_line(mon)[2] == b'"BLPOP" "bq" "5"'
        rc.execute_command("RPUSH", "bq", "x")
        assert blocker.read_reply() == b"*2\r\n$2\r\nbq\r\n$1\r\nx\r\n"
        assert next_line(mon)[2] == b'"RPUSH" "bq" "x"'
        rc.execute_command("PING")
        assert next_line(mon)[2] == b'"PING"'  # (no second BLPOP line when it was served)
    finally:
        blocker.close()


def test_monitor_mode_itself(server, rc):
    m = Conn(server)
    try:
        assert m.call("MONITOR") == b"+OK\r\n"
        m.send(encode("MONITOR"))  # a monitor asking again: no reply at all
        assert m.nothing_pending(0.3)
        flags = [ln for ln in rc.execute_command("CLIENT", "LIST").split(b"\n") if b"cmd=monitor" in ln]
        assert flags and b" flags=O " in flags[0]
        assert m.call("RESET") == b"+RESET\r\n"
        rc.execute_command("SET", "after", "reset")
        assert m.call("PING") == b"+PONG\r\n"  # nothing was fed to it after RESET
    finally:
        m.close()


def test_monitor_inside_multi_fails_at_exec(server, rc):
    c = Conn(server)
    try:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("MONITOR") == b"+QUEUED\r\n"
        assert c.call("EXEC") == b"*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n"
    finally:
        c.close()


def test_each_keys_commands_arrive_in_order(start_server):
    # Keys over every shard of four workers; several clients at once, each
    # pipelining SETs of its own seven keys: per key the lines come in the
    # order the commands ran (the order sent). Commands on keys of
    # different shards run side by side: their lines interleave freely.
    s = start_server() if IS_REDIS else start_server("--threads", "4")
    m = Conn(s)
    assert m.call("MONITOR") == b"+OK\r\n"
    clients, n = 3, 350

    def writer(w):
        c = s.client()
        for start in range(0, n, 50):
            p = c.pipeline(transaction=False)
            for i in range(start, start + 50):
                p.set(f"w{w}:k{i % 7}", i)
            p.execute()
        c.close()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    seen = {}
    total = 0
    while total < clients * n:
        args = next_line(m)[2]
        match = re.match(rb'^"SET" "(w\d+:k\d+)" "(\d+)"$', args)
        if match:  # (not the clients' handshakes)
            seen.setdefault(match.group(1), []).append(int(match.group(2)))
            total += 1
    m.close()
    for w in range(clients):
        for k in range(7):
            assert seen[f"w{w}:k{k}".encode()] == list(range(k, n, 7)), (w, k)
