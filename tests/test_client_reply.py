# CLIENT REPLY ON / OFF / SKIP (issue #40): the bytes a client gets back are
# redis-server's own, byte for byte, for the same commands on one raw
# connection: OFF drops every reply (its own too) until ON, which answers
# OK; SKIP drops its own and the next command's; a bad argument is answered
# unless replies are off. With four workers the dropped commands' keys live
# on every shard, and the effects of the commands whose replies are dropped
# are all there. A blocked command whose reply is skipped sends nothing when
# it is served.
import socket
import threading
import time

import pytest

from conftest import IS_REDIS, ServerProcess
from helpers import encode


@pytest.fixture
def pair(start_server, tmp_path):
    ours = start_server("--threads", "4") if not IS_REDIS else start_server()
    (tmp_path / "ref").mkdir()
    ref = ServerProcess([], tmp_path=tmp_path / "ref", kind="redis")
    yield ours, ref
    ref.stop()


def exchange(server, commands, settle=0.3):
    """Sends the commands on one connection, then PING; the bytes received
    until the PING's reply (or nothing more comes)."""
    with socket.create_connection((server.host, server.port), timeout=5) as s:
        s.sendall(b"".join(encode(*c) for c in commands) + encode("PING", "end"))
        out = b""
        deadline = time.time() + 5
        while not out.endswith(b"$3\r\nend\r\n") and time.time() < deadline:
            s.settimeout(settle)
            try:
                data = s.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            out += data
        return out


def test_off_on_skip_give_redis_bytes(pair):
    ours, ref = pair
    keys = ["k:%d" % i for i in range(64)]
    commands = ([("SET", "a", "1"), ("CLIENT", "REPLY", "OFF")] +
                [("SET", k, k) for k in keys] + [("GET", "a"), ("MSET", "x", "1", "y", "2"), ("INCR", "n"),
                                                 ("CLIENT", "REPLY", "bogus"), ("LPUSH", "l", "v"),
                                                 ("CLIENT", "REPLY", "ON"),
                                                 ("GET", "k:7"), ("CLIENT", "REPLY", "SKIP"), ("GET", "k:8"),
                                                 ("GET", "k:9"), ("CLIENT", "REPLY", "bogus"),
                                                 ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"),
                                                 ("GET", "a"), ("MGET", "k:1", "k:2", "k:3")])
    got = exchange(ours, commands)
    assert got == exchange(ref, commands)
    assert got == (b"+OK\r\n+OK\r\n$3\r\nk:7\r\n$3\r\nk:9\r\n-ERR syntax error\r\n+OK\r\n$1\r\n1\r\n"
                   b"*3\r\n$3\r\nk:1\r\n$3\r\nk:2\r\n$3\r\nk:3\r\n$3\r\nend\r\n")
    # What ran without a reply ran.
    c = ours.client(protocol=2)
    assert c.mget(keys) == [k.encode() for k in keys]
    assert (c.get("n"), c.lrange("l", 0, -1), c.get("y")) == (b"1", [b"v"], b"2")
    c.close()


def test_off_until_the_connection_ends(pair):
    ours, ref = pair
    commands = [("CLIENT", "REPLY", "OFF"), ("SET", "z", "1"), ("PING",)]
    assert exchange(ours, commands) == exchange(ref, commands) == b""


def test_a_skipped_blocked_command_sends_nothing_when_served(pair):
    for server in pair:
        with socket.create_connection((server.host, server.port), timeout=5) as s:
            s.sendall(encode("CLIENT", "REPLY", "SKIP") + encode("BLPOP", "q", 0))
            c = server.client(protocol=2)
            deadline = time.time() + 5
            while int(c.info("clients")["blocked_clients"]) != 1 and time.time() < deadline:
                time.sleep(0.01)
            assert c.lpush("q", "job") == 1
            s.sendall(encode("PING", "after"))
            s.settimeout(2)
            assert s.recv(100) == b"$5\r\nafter\r\n", server.kind
            assert c.llen("q") == 0
            c.close()


def test_reset_turns_replies_back_on_but_a_skip_drops_its_own(pair):
    ours, ref = pair
    for commands, want in (([("CLIENT", "REPLY", "OFF"), ("SET", "a", 1), ("RESET",), ("GET", "a")],
                            b"+RESET\r\n$1\r\n1\r\n$3\r\nend\r\n"),
                           ([("CLIENT", "REPLY", "SKIP"), ("RESET",), ("GET", "a")], b"$1\r\n1\r\n$3\r\nend\r\n")):
        got = exchange(ours, commands)
        assert got == exchange(ref, commands)
        assert got == want


def test_errors(pair):
    ours, ref = pair
    commands = [("CLIENT", "REPLY"), ("CLIENT", "REPLY", "ON", "x")]
    got = exchange(ours, commands)
    assert got == exchange(ref, commands)
    assert got.startswith(b"-ERR wrong number of arguments for 'client|reply' command\r\n")


@pytest.mark.parametrize("resp", ["2", "3"])
def test_subscription_confirmations_are_sent_with_replies_off(pair, resp):
    # As Redis's: (un)subscribing's confirmations are pushes, sent whatever
    # CLIENT REPLY says (Redis's unit/pubsub, "PubSub messages with CLIENT
    # REPLY OFF"); the other replies stay dropped.
    ours, ref = pair
    commands = [("HELLO", resp), ("CLIENT", "REPLY", "OFF"), ("SET", "a", "1"), ("SUBSCRIBE", "ch1", "ch2"),
                ("PSUBSCRIBE", "c*"), ("UNSUBSCRIBE", "ch1"), ("PUNSUBSCRIBE",), ("UNSUBSCRIBE",),
                ("CLIENT", "REPLY", "ON")]
    got = exchange(ours, commands)
    theirs = exchange(ref, commands)
    # (HELLO's reply names the server: compared from the first confirmation,
    # "*3" or ">3" then "$9", on.)
    first = got.index(b"$9\r\nsubscribe\r\n") - 4
    assert got[first:] == theirs[theirs.index(b"$9\r\nsubscribe\r\n") - 4:]
    assert got[first:first + 2] == (b">3" if resp == "3" else b"*3")
    assert got.count(b"subscribe\r\n") == 6 and got[first:].count(b"+OK") == 1  # (REPLY ON's; SET's dropped)
