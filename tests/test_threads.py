# The threading layer seen from outside (issue #5, docs/transactions.md): with
# --threads 4 a client's commands run on the worker that owns their keys, so a
# pipeline travels between workers, multi-shard and whole-keyspace commands
# borrow every shard, and connection state (db, protocol, kill, close) lives
# on the client's own worker. Each test checks something a threaded server
# can get wrong while a single-threaded one cannot: replies in exact pipeline
# order, the state a command sees after earlier remote ones, the close after
# QUIT or a protocol error, CLIENT KILL / LIST / INFO over all workers, CONFIG
# SET reaching every worker, SHUTDOWN under load, many connections.
#
# Every test also runs against real Redis (TEST_SERVER=redis), which is how
# the expectations are checked.
import random
import re
import socket
import threading
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import IS_REDIS
from helpers import Conn, crc16, encode, info_dict

SHARDS = 4
PROTO_ERR = b"-ERR Protocol error: "
NOT_INT = b"-ERR value is not an integer or out of range\r\n"


# ---------------------------------------------------------------- keys and shards

def slot_of(key) -> int:
    """Redis Cluster's keyHashSlot, hash tags included."""
    k = key.encode() if isinstance(key, str) else key
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return crc16(k) % 16384


def shard_of(key, shards: int = SHARDS) -> int:
    return slot_of(key) * shards // 16384


def keys_on(shard: int, count: int, prefix: str = "k"):
    """`count` key names that live on `shard` (of 4)."""
    out, i = [], 0
    while len(out) < count:
        k = f"{prefix}{i}"
        if shard_of(k) == shard:
            out.append(k)
        i += 1
    return out


def one_key_per_shard(prefix: str = "k"):
    return [keys_on(s, 1, prefix)[0] for s in range(SHARDS)]


# ---------------------------------------------------------------- reply encoding

def bulk(v):
    if v is None:
        return b"$-1\r\n"
    v = v.encode() if isinstance(v, str) else v
    return b"$%d\r\n%s\r\n" % (len(v), v)


def integer(n):
    return b":%d\r\n" % n


def parse_bulk(reply):
    """The value of a RESP2 bulk reply (None for nil)."""
    head, _, rest = reply.partition(b"\r\n")
    assert head.startswith(b"$"), reply
    return None if head == b"$-1" else rest[:int(head[1:])]


def array(items):
    return b"*%d\r\n" % len(items) + b"".join(items)


OK = b"+OK\r\n"
PONG = b"+PONG\r\n"


def unknown(name, *args):
    return ("-ERR unknown command '%s', with args beginning with: %s\r\n"
            % (name, "".join("'%s' " % a for a in args))).encode()


def arity(name):
    return b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()


@pytest.fixture
def srv(start_server):
    return start_server() if IS_REDIS else start_server("--threads", str(SHARDS))


def conns_on_every_worker(server, n=8):
    """Connections, opened one after the other so that the acceptor spreads
    them over the workers (fewest connections first); each answered a PING,
    so each is adopted by its worker."""
    out = []
    for _ in range(n):
        c = Conn(server)
        assert c.call("PING") == PONG
        out.append(c)
    return out


def close_all(conns):
    for c in conns:
        c.close()


def wait_for(pred, timeout=3.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


# ---------------------------------------------------------------- a model pipeline

class Model:
    """Enough of Redis's string keyspace to predict the exact reply bytes of a
    random pipeline (16 databases, the selected one per connection)."""

    def __init__(self):
        self.dbs = [dict() for _ in range(16)]
        self.db = 0

    @property
    def kv(self):
        return self.dbs[self.db]

    def apply(self, args):
        name = args[0].upper()
        kv = self.kv
        if name == "SET":
            if len(args) == 5:  # SET k v EX <not an int>
                return NOT_INT
            kv[args[1]] = args[2]
            return OK
        if name == "GET":
            if len(args) != 2:
                return arity("get")
            return bulk(kv.get(args[1]))
        if name == "INCR":
            v = kv.get(args[1], "0")
            if not re.fullmatch(r"0|-?[1-9][0-9]{0,17}", v):  # Redis's string2ll, roughly
                return NOT_INT
            n = int(v) + 1
            kv[args[1]] = str(n)
            return integer(n)
        if name == "APPEND":
            kv[args[1]] = kv.get(args[1], "") + args[2]
            return integer(len(kv[args[1]]))
        if name == "DEL":
            n = 0
            for k in dict.fromkeys(args[1:]):
                if kv.pop(k, None) is not None:
                    n += 1
            return integer(n)
        if name == "EXISTS":
            return integer(sum(1 for k in args[1:] if k in kv))
        if name == "MGET":
            return array([bulk(kv.get(k)) for k in args[1:]])
        if name == "MSET":
            for i in range(1, len(args), 2):
                kv[args[i]] = args[i + 1]
            return OK
        if name == "DBSIZE":
            return integer(len(kv))
        if name == "STRLEN":
            return integer(len(kv.get(args[1], "")))
        if name == "PING":
            return PONG if len(args) == 1 else bulk(args[1])
        if name == "ECHO":
            return bulk(args[1])
        if name == "SELECT":
            self.db = int(args[1])
            return OK
        return unknown(args[0], *args[1:])


def random_pipeline(rng, n, inline_share=0.0):
    """(request bytes, expected reply bytes), `n` commands over keys of all
    four shards (string keys, counters, hash-tagged keys), local commands,
    database switches and errors, some commands inline."""
    strings = [k for s in range(SHARDS) for k in keys_on(s, 3, "str:")]
    counters = [k for s in range(SHARDS) for k in keys_on(s, 1, "ctr:")]
    tagged = ["{tag}a", "{tag}b", "x{tag}c"]
    keys = strings + tagged
    model = Model()
    req, exp = [], []
    for i in range(n):
        r = rng.random()
        if r < 0.18:
            args = ["SET", rng.choice(keys), "v%d" % i]
        elif r < 0.34:
            args = ["GET", rng.choice(keys)]
        elif r < 0.44:
            args = ["INCR", rng.choice(counters)]
        elif r < 0.48:
            args = ["INCR", rng.choice(strings)]  # mostly a WRONG integer error
        elif r < 0.52:
            args = ["APPEND", rng.choice(keys), "+%d" % i]
        elif r < 0.56:
            args = ["STRLEN", rng.choice(keys)]
        elif r < 0.60:
            args = ["MGET"] + rng.sample(keys, rng.randint(2, 5))
        elif r < 0.63:
            ks = rng.sample(keys, rng.randint(2, 4))
            args = ["MSET"] + [x for k in ks for x in (k, "m%d" % i)]
        elif r < 0.66:
            args = ["DEL"] + rng.sample(keys, rng.randint(1, 3))
        elif r < 0.69:
            args = ["EXISTS"] + rng.sample(keys, rng.randint(1, 4))
        elif r < 0.71:
            args = ["DBSIZE"]
        elif r < 0.76:
            args = ["PING"] if rng.random() < 0.5 else ["PING", "hi%d" % i]
        elif r < 0.80:
            args = ["ECHO", "echo%d" % i]
        elif r < 0.85:
            args = ["SELECT", str(rng.choice([0, 0, 1, 2]))]
        elif r < 0.88:
            args = ["NOSUCHCMD", "a%d" % i, "b"]
        elif r < 0.91:
            args = ["GET"]  # wrong arity
        elif r < 0.93:
            args = ["SET", rng.choice(keys), "x", "EX", "soon"]  # error on the key's worker
        else:
            args = ["GET", rng.choice(counters)]
        exp.append(model.apply(args))
        if rng.random() < inline_share and all(" " not in a and a for a in args):
            req.append((" ".join(args) + "\r\n").encode())
        else:
            req.append(encode(*args))
    return req, exp, model


def read_replies(conn, n):
    return [conn.read_reply() for _ in range(n)]


def check_replies(got, exp, req):
    for i, (g, e) in enumerate(zip(got, exp)):
        assert g == e, "reply %d to %r: got %r, expected %r" % (i, req[i], g, e)
    assert len(got) == len(exp)


# ---------------------------------------------------------------- pipelines

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_long_pipeline_over_every_shard_replies_in_exact_order(srv, seed):
    rng = random.Random(seed)
    req, exp, model = random_pipeline(rng, 1500)
    with Conn(srv, timeout=10) as c:
        c.send(b"".join(req))
        check_replies(read_replies(c, len(exp)), exp, req)
        assert c.nothing_pending()
    # What the pipeline left is what another connection sees, in every db.
    check = srv.client(protocol=2)
    for db in (0, 1, 2):
        check.execute_command("SELECT", db)
        got = {k.decode(): v.decode() for k, v in
               ((k, check.get(k)) for k in check.keys("*"))}
        assert got == model.dbs[db], "db %d" % db


def test_pipeline_with_inline_commands_replies_in_order(srv):
    rng = random.Random(7)
    req, exp, _ = random_pipeline(rng, 600, inline_share=0.5)
    with Conn(srv, timeout=10) as c:
        c.send(b"".join(req))
        check_replies(read_replies(c, len(exp)), exp, req)
        assert c.nothing_pending()


def test_pipeline_in_small_fragments_replies_in_order(srv):
    # The client pauses while a batch is on another worker; its parser must
    # restart cleanly on input that arrives a few bytes at a time, with
    # commands cut anywhere (in a bulk, in a header, in an inline line).
    rng = random.Random(11)
    req, exp, _ = random_pipeline(rng, 300, inline_share=0.3)
    data = b"".join(req)
    with Conn(srv, timeout=10) as c:
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        i = 0
        while i < len(data):
            n = rng.randint(1, 40)
            c.send(data[i:i + n])
            i += n
            if rng.random() < 0.05:
                time.sleep(0.001)
        got = read_replies(c, len(exp))
        check_replies(got, exp, req)
        assert c.nothing_pending()


def test_every_command_on_a_different_shard_than_the_previous(srv):
    # The worst case for a threaded server: every command pauses the client.
    keys = one_key_per_shard("alt:")
    req, exp = [], []
    for i in range(2000):
        k = keys[i % SHARDS]
        req.append(encode("INCR", k))
        exp.append(integer(i // SHARDS + 1))
    with Conn(srv, timeout=10) as c:
        c.send(b"".join(req))
        check_replies(read_replies(c, len(exp)), exp, req)


def test_big_values_between_shards_in_one_pipeline(srv):
    keys = one_key_per_shard("big:")
    vals = [bytes([65 + s]) * (300_000 + s) for s in range(SHARDS)]
    req = [encode("SET", k, v) for k, v in zip(keys, vals)]
    req += [encode("GET", k) for k in reversed(keys)]
    req += [encode("PING")]
    req += [encode("STRLEN", k) for k in keys]
    exp = [OK] * SHARDS + [bulk(v) for v in reversed(vals)] + [PONG]
    exp += [integer(len(v)) for v in vals]
    with Conn(srv, timeout=10) as c:
        c.send(b"".join(req))
        assert read_replies(c, len(exp)) == exp


def test_pipeline_ending_in_quit_after_remote_commands(srv):
    keys = one_key_per_shard("quit:")
    req = [encode("SET", k, "v-" + k) for k in keys]
    req += [encode("GET", k) for k in keys]
    req += [encode("INCR", keys[1]), encode("QUIT"), encode("SET", "after-quit", "1"), encode("PING")]
    exp = [OK] * SHARDS + [bulk("v-" + k) for k in keys] + [NOT_INT, OK]
    with Conn(srv) as c:
        c.send(b"".join(req))
        assert c.read_until_closed() == b"".join(exp)
    check = srv.client()
    assert check.exists("after-quit") == 0
    assert [v.decode() for v in check.mget(keys)] == ["v-" + k for k in keys]


def test_quit_inline_after_remote_commands(srv):
    keys = one_key_per_shard("qi:")
    data = b"".join(b"SET %s x\r\n" % k.encode() for k in keys) + b"QUIT\r\nSET after 1\r\n"
    with Conn(srv) as c:
        c.send(data)
        assert c.read_until_closed() == OK * (SHARDS + 1)
    assert srv.client().exists("after") == 0


@pytest.mark.parametrize("bad,error", [
    (b"*1\r\n$abc\r\n", b"invalid bulk length"),
    (b"*abc\r\n", b"invalid multibulk length"),
    (b'SET "unbalanced x\r\n', b"unbalanced quotes in request"),
])
def test_protocol_error_after_remote_commands_in_same_write(srv, bad, error):
    keys = one_key_per_shard("perr:")
    req = [encode("SET", k, "v") for k in keys] + [encode("GET", keys[2]), encode("PING")]
    exp = [OK] * SHARDS + [bulk("v"), PONG]
    after = encode("SET", "after-error", "1")
    with Conn(srv) as c:
        c.send(b"".join(req) + bad + after)
        assert c.read_until_closed() == b"".join(exp) + PROTO_ERR + error + b"\r\n"
    check = srv.client()
    assert check.exists("after-error") == 0
    assert check.exists(*keys) == SHARDS


def test_protocol_error_arriving_while_remote_batch_in_flight(srv):
    # The remote commands are sent first; the bad bytes follow in a second
    # write while their batch may still be out.
    keys = one_key_per_shard("perr2:")
    with Conn(srv) as c:
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.send(b"".join(encode("INCR", k) for k in keys * 50))
        c.send(b"*1\r\nx\r\n" + encode("SET", "after-error", "1"))
        exp = b"".join(integer(i // SHARDS + 1) for i in range(SHARDS * 50))
        assert c.read_until_closed() == exp + PROTO_ERR + b"expected '$', got 'x'\r\n"
    assert srv.client().exists("after-error") == 0


def test_select_between_remote_commands(srv):
    keys = one_key_per_shard("sel:")
    req, exp = [], []
    for k in keys:
        req.append(encode("SET", k, "db0"))
        exp.append(OK)
    req.append(encode("SELECT", 1))
    exp.append(OK)
    for k in keys:
        req += [encode("GET", k), encode("SET", k, "db1")]
        exp += [bulk(None), OK]
    req.append(encode("MSET", *[x for k in keys for x in (k + ":m", "m1")]))
    exp.append(OK)
    req.append(encode("DBSIZE"))
    exp.append(integer(2 * SHARDS))
    req.append(encode("SELECT", 0))
    exp.append(OK)
    req += [encode("GET", k) for k in keys]
    exp += [bulk("db0")] * SHARDS
    req += [encode("SELECT", 1), encode("MGET", *keys), encode("SELECT", 5), encode("EXISTS", *keys)]
    exp += [OK, array([bulk("db1")] * SHARDS), OK, integer(0)]
    with Conn(srv) as c:
        c.send(b"".join(req))
        assert read_replies(c, len(exp)) == exp
        # The connection stays in db 5 for what comes next, on every shard.
        for k in keys:
            assert c.call("SET", k, "db5") == OK
    for db, want in ((0, "db0"), (1, "db1"), (5, "db5")):
        c = srv.client(db=db)
        assert [v.decode() for v in c.mget(keys)] == [want] * SHARDS


def test_resp3_switch_between_remote_commands(srv):
    keys = one_key_per_shard("resp:")
    with Conn(srv) as c:
        c.send(b"".join(encode("GET", k) for k in keys) + encode("HELLO", 3)
               + b"".join(encode("GET", k) for k in keys) + encode("HELLO", 2)
               + b"".join(encode("GET", k) for k in keys))
        assert read_replies(c, SHARDS) == [b"$-1\r\n"] * SHARDS
        assert c.read_reply().startswith(b"%")
        assert read_replies(c, SHARDS) == [b"_\r\n"] * SHARDS
        assert c.read_reply().startswith(b"*")
        assert read_replies(c, SHARDS) == [b"$-1\r\n"] * SHARDS


def test_multi_shard_and_keyspace_commands_see_earlier_remote_writes(srv):
    a, b, c_, d = one_key_per_shard("ks:")
    req = [encode("SET", a, 1), encode("SET", b, 2), encode("DBSIZE"),
           encode("RENAME", a, c_), encode("EXISTS", a, b, c_, d), encode("DBSIZE"),
           encode("MGET", a, b, c_), encode("DEL", b, c_, d), encode("DBSIZE"),
           encode("SET", d, 4), encode("KEYS", d), encode("FLUSHDB"), encode("DBSIZE"),
           encode("GET", d)]
    exp = [OK, OK, integer(2), OK, integer(2), integer(2),
           array([bulk(None), bulk("2"), bulk("1")]), integer(2), integer(0),
           OK, array([bulk(d)]), OK, integer(0), bulk(None)]
    with Conn(srv) as c:
        c.send(b"".join(req))
        assert read_replies(c, len(exp)) == exp


# ---------------------------------------------------------------- hash tags

def test_hash_tags_keep_multi_key_commands_correct(srv):
    c = srv.client(protocol=2)
    # Tags on each shard, so that some are another worker's for this client.
    tags = []
    i = 0
    while len(tags) < SHARDS:
        t = "user%d" % i
        if shard_of("{%s}" % t) == len(tags):
            tags.append(t)
        i += 1
    for t in tags:
        ks = ["{%s}:%s" % (t, f) for f in ("name", "mail", "age")]
        assert len({shard_of(k) for k in ks}) == 1
        assert c.mset({ks[0]: "n-" + t, ks[1]: "m-" + t, ks[2]: "1"})
        assert c.mget(ks) == [b"n-" + t.encode(), b"m-" + t.encode(), b"1"]
        assert c.rename(ks[0], "{%s}:renamed" % t)
        assert c.exists(ks[0], "{%s}:renamed" % t) == 1
        assert c.copy(ks[1], "{%s}:copy" % t)
        assert c.get("{%s}:copy" % t) == b"m-" + t.encode()
        assert c.msetnx({ks[1]: "x", "{%s}:new" % t: "y"}) is False
        assert c.msetnx({"{%s}:new" % t: "y", "{%s}:new2" % t: "z"}) is True
        assert c.delete(ks[1], ks[2], "{%s}:new" % t, "{%s}:missing" % t) == 3
    # Odd tag forms: the first '{' and the first '}' after it; an empty tag
    # means the whole key.
    odd = {"{}a": "1", "a{b}c": "2", "{a}{b}": "3", "foo{}{bar}": "4", "x{": "5", "}{y}": "6"}
    assert c.mset(odd)
    assert c.mget(list(odd)) == [v.encode() for v in odd.values()]
    assert c.exists(*odd) == len(odd)
    # Keys on all shards in one command, tagged and not.
    everything = list(odd) + ["{%s}:renamed" % t for t in tags]
    assert c.delete(*everything) == len(everything)
    assert c.dbsize() == 2 * SHARDS  # each tag's copy and new2


def test_msetnx_across_shards_is_all_or_nothing(srv):
    c = srv.client(protocol=2)
    keys = one_key_per_shard("nx:")
    assert c.set(keys[3], "taken")
    assert c.msetnx({k: "v" for k in keys}) is False
    assert c.exists(*keys) == 1
    c.delete(keys[3])
    assert c.msetnx({k: "v" for k in keys}) is True
    assert c.mget(keys) == [b"v"] * SHARDS


# ---------------------------------------------------------------- connections

def test_client_list_shows_clients_of_every_worker(srv):
    conns = conns_on_every_worker(srv, 12)
    keys = one_key_per_shard("cl:")
    try:
        ids = []
        for i, c in enumerate(conns):
            assert c.call("CLIENT", "SETNAME", "conn%d" % i) == OK
            ids.append(int(c.call("CLIENT", "ID")[1:-2]))
        # Connection state set on each client's own worker, and the last
        # command even when it ran on another worker.
        assert conns[5].call("SELECT", 3) == OK
        assert conns[6].call("GET", keys[2]) == bulk(None)
        assert conns[7].call("MGET", *keys) == array([bulk(None)] * SHARDS)
        with Conn(srv) as admin:
            text = admin.call("CLIENT", "LIST")
            lines = text.split(b"\r\n", 1)[1].decode().strip().split("\n")
            fields = [dict(t.split("=", 1) for t in line.split(" ")) for line in lines]
            by_name = {f["name"]: f for f in fields}
            assert len(lines) == len(conns) + 1
            assert sorted(int(f["id"]) for f in fields) == sorted(set(int(f["id"]) for f in fields))
            for i, cid in enumerate(ids):
                assert int(by_name["conn%d" % i]["id"]) == cid
            assert by_name["conn5"]["db"] == "3"
            assert by_name["conn6"]["cmd"] == "get"
            assert by_name["conn7"]["cmd"] == "mget"
            # Filtered by id: exactly those, whatever their worker.
            pick = ids[::3]
            text = admin.call("CLIENT", "LIST", "ID", *pick)
            lines = text.split(b"\r\n", 1)[1].decode().strip().split("\n")
            assert sorted(int(dict(t.split("=", 1) for t in l.split(" "))["id"]) for l in lines) == sorted(pick)
            info = info_dict(admin.call("INFO", "clients").split(b"\r\n", 1)[1])
            assert int(info["connected_clients"]) == len(conns) + 1
    finally:
        close_all(conns)


def test_client_kill_id_closes_clients_of_other_workers(srv):
    victims = conns_on_every_worker(srv, 8)
    try:
        ids = [int(v.call("CLIENT", "ID")[1:-2]) for v in victims]
        with Conn(srv) as killer:
            for v, cid in zip(victims, ids):
                assert killer.call("CLIENT", "KILL", "ID", cid) == integer(1)
                assert v.read_until_closed(timeout=3) == b""
                # Killed once: a second kill finds nobody.
                assert killer.call("CLIENT", "KILL", "ID", cid) == integer(0)
            text = killer.call("CLIENT", "LIST")
            for cid in ids:
                assert b"id=%d " % cid not in text
            assert killer.call("PING") == PONG
    finally:
        close_all(victims)


def test_client_kill_addr_of_other_workers(srv):
    victims = conns_on_every_worker(srv, 6)
    try:
        with Conn(srv) as killer:
            for v in victims:
                host, port = v.sock.getsockname()[:2]
                assert killer.call("CLIENT", "KILL", "%s:%d" % (host, port)) == OK
                assert v.read_until_closed(timeout=3) == b""
            for v in victims:
                host, port = v.sock.getsockname()[:2]
                assert killer.call("CLIENT", "KILL", "ADDR", "%s:%d" % (host, port)) == integer(0)
    finally:
        close_all(victims)


def test_client_kill_of_client_with_pipeline_in_flight(srv):
    # The victim keeps the server busy with commands for every shard and never
    # reads; killing it must close it and leave the server healthy.
    keys = one_key_per_shard("kv:")
    victims = conns_on_every_worker(srv, 4)
    payload = b"".join(encode("INCR", keys[i % SHARDS]) for i in range(20000))
    stop = threading.Event()

    def flood(v):
        try:
            while not stop.is_set():
                v.send(payload)
        except OSError:
            pass

    threads = [threading.Thread(target=flood, args=(v,)) for v in victims]
    try:
        ids = [int(v.call("CLIENT", "ID")[1:-2]) for v in victims]
        for t in threads:
            t.start()
        time.sleep(0.3)
        with Conn(srv, timeout=10) as killer:
            for cid in ids:
                assert killer.call("CLIENT", "KILL", "ID", cid) == integer(1)
            stop.set()
            for t in threads:
                t.join(timeout=5)
                assert not t.is_alive()
            text = killer.call("CLIENT", "LIST")
            for cid in ids:
                assert b"id=%d " % cid not in text
            assert killer.call("PING") == PONG
            total = sum(int(parse_bulk(killer.call("GET", k)) or 0) for k in keys)
            assert total > 0
    finally:
        stop.set()
        close_all(victims)


def test_client_closing_with_batches_in_flight_leaves_server_healthy(srv):
    keys = one_key_per_shard("gone:")
    payload = b"".join(encode("INCR", keys[i % SHARDS]) for i in range(3000))
    for _ in range(40):
        s = socket.create_connection((srv.host, srv.port))
        s.sendall(payload)
        s.close()
    with Conn(srv) as c:
        assert c.call("PING") == PONG
        assert int(c.call("DBSIZE")[1:-2]) <= SHARDS
        # (The commands each client sent before it went still run: 120,000
        # of them, seconds under ThreadSanitizer.)
        assert wait_for(lambda: info_dict(c.call("INFO", "clients").split(b"\r\n", 1)[1])
                        ["connected_clients"] == "1", timeout=20)


def test_half_closed_client_gets_every_reply(srv):
    keys = one_key_per_shard("half:")
    n = 2000  # every command on another shard than the previous one
    req = [encode("SET", keys[i % SHARDS], "v%d" % i) for i in range(n)]
    req += [encode("GET", k) for k in keys] + [encode("PING")]
    exp = [OK] * n + [bulk("v%d" % (n - SHARDS + s)) for s in range(SHARDS)] + [PONG]
    with Conn(srv) as c:
        c.send(b"".join(req))
        c.sock.shutdown(socket.SHUT_WR)
        assert c.read_until_closed() == b"".join(exp)


def test_200_connections_all_served(srv):
    conns = []
    try:
        for _ in range(200):
            conns.append(Conn(srv, timeout=10))
        for i, c in enumerate(conns):
            k = "many:%d" % i
            c.send(encode("SET", k, "val-%d" % i) + encode("INCR", "many:ctr:%d" % (i % 7))
                   + encode("PING") + encode("GET", k) + encode("MGET", k, "many:%d" % ((i + 1) % 200)))
        incr = []
        for i, c in enumerate(conns):
            assert c.read_reply() == OK
            incr.append(int(c.read_reply()[1:-2]))
            assert c.read_reply() == PONG
            assert c.read_reply() == bulk("val-%d" % i)
            r = c.read_reply()
            assert r.startswith(b"*2\r\n" + bulk("val-%d" % i))
        assert sum(1 for n in incr if n == 1) == 7
        with Conn(srv) as admin:
            info = info_dict(admin.call("INFO", "clients").split(b"\r\n", 1)[1])
            assert int(info["connected_clients"]) == 201
            assert admin.call("DBSIZE") == integer(207)
            lines = admin.call("CLIENT", "LIST").split(b"\r\n", 1)[1].strip().split(b"\n")
            assert len(lines) == 201
    finally:
        close_all(conns)
    c = srv.client()
    assert wait_for(lambda: c.info("clients")["connected_clients"] == 1)


# ---------------------------------------------------------------- statistics over workers

def test_info_stats_and_commandstats_sum_over_workers(srv):
    conns = conns_on_every_worker(srv, 8)
    try:
        with Conn(srv) as admin:
            assert admin.call("CONFIG", "RESETSTAT") == OK
            for n, c in enumerate(conns):
                req, exp = [], []
                for i in range(25):
                    k = "st:%d:%d" % (n, i)  # keys of every shard
                    req += [encode("SET", k, "x"), encode("GET", k)]
                    exp += [OK, bulk("x")]
                req += [encode("NOSUCH"), encode("GET"), encode("INCR", "st:%d:0" % n)]
                exp += [unknown("NOSUCH"), arity("get"), NOT_INT]
                c.send(b"".join(req))
                assert read_replies(c, len(exp)) == exp
            info = info_dict(admin.call("INFO", "all").split(b"\r\n", 1)[1])
        set_stats = dict(kv.split("=") for kv in info["cmdstat_set"].split(","))
        get_stats = dict(kv.split("=") for kv in info["cmdstat_get"].split(","))
        incr_stats = dict(kv.split("=") for kv in info["cmdstat_incr"].split(","))
        assert int(set_stats["calls"]) == 200
        assert int(get_stats["calls"]) == 200
        assert int(get_stats["rejected_calls"]) == 8
        assert int(incr_stats["calls"]) == 8 and int(incr_stats["failed_calls"]) == 8
        # RESETSTAT itself, then 200 SET, 200 GET and 8 INCR; INFO is counted after it replies.
        assert int(info["total_commands_processed"]) == 1 + 200 + 200 + 8
        assert int(info["total_error_replies"]) == 24
        assert info["errorstat_ERR"] == "count=24"
    finally:
        close_all(conns)


# ---------------------------------------------------------------- CONFIG SET on every worker

def test_config_set_maxmemory_policy_reaches_every_worker(srv):
    keys = [k for s in range(SHARDS) for k in keys_on(s, 2, "lfu:")]
    conns = conns_on_every_worker(srv, 8)
    try:
        with Conn(srv) as admin:
            assert admin.call("MSET", *[x for k in keys for x in (k, "v")]) == OK
            for rnd in range(6):
                lfu = rnd % 2 == 0
                assert admin.call("CONFIG", "SET", "maxmemory-policy",
                                  "allkeys-lfu" if lfu else "allkeys-lru") == OK
                for c in conns:
                    for k in keys:
                        freq = c.call("OBJECT", "FREQ", k)
                        idle = c.call("OBJECT", "IDLETIME", k)
                        if lfu:
                            assert freq.startswith(b":"), (rnd, k, freq)
                            assert idle.startswith(b"-ERR An LFU maxmemory policy is selected"), (rnd, k, idle)
                        else:
                            assert freq.startswith(b"-ERR An LFU maxmemory policy is not selected"), (rnd, k, freq)
                            assert idle.startswith(b":"), (rnd, k, idle)
                assert conns[rnd].call("CONFIG", "GET", "maxmemory-policy") == array(
                    [bulk("maxmemory-policy"), bulk("allkeys-lfu" if lfu else "allkeys-lru")])
    finally:
        close_all(conns)


def test_config_set_proto_max_bulk_len_reaches_every_worker(srv):
    header = b"*3\r\n$3\r\nSET\r\n$4\r\npmbl\r\n$2000000\r\n"
    conns = conns_on_every_worker(srv, 8)
    try:
        with Conn(srv) as admin:
            assert admin.call("CONFIG", "SET", "proto-max-bulk-len", "1048576") == OK
        for c in conns:
            c.send(header)
            assert c.read_until_closed() == PROTO_ERR + b"invalid bulk length\r\n"
    finally:
        close_all(conns)
    conns = conns_on_every_worker(srv, 8)
    try:
        with Conn(srv) as admin:
            assert admin.call("CONFIG", "SET", "proto-max-bulk-len", "536870912") == OK
        value = b"z" * 2_000_000
        for i, c in enumerate(conns):
            assert c.call("SET", "pmbl:%d" % i, value) == OK
            assert c.call("STRLEN", "pmbl:%d" % i) == integer(len(value))
    finally:
        close_all(conns)


def test_maxmemory_evicts_from_any_shard(srv):
    c = srv.client(protocol=2)
    c.config_set("maxmemory-policy", "allkeys-random")
    before = int(c.info("memory")["used_memory"])
    p = c.pipeline(transaction=False)
    for i in range(20000):
        p.set("{one-shard}k%d" % i, "x" * 100)  # all on one shard
        if i % 2000 == 1999:
            p.execute()
    p.execute()
    after = int(c.info("memory")["used_memory"])
    c.config_set("maxmemory", before + (after - before) // 2)
    try:
        for s in range(SHARDS):
            assert c.set(keys_on(s, 1, "oom:")[0], "v")
    finally:
        c.config_set("maxmemory", 0)


# ---------------------------------------------------------------- shutdown

def test_shutdown_while_clients_hammer_multi_shard_commands(srv):
    keys = [k for s in range(SHARDS) for k in keys_on(s, 2, "sd:")]
    stop = threading.Event()
    started = threading.Barrier(7, timeout=10)
    errors = []

    def hammer(n):
        try:
            c = srv.client(protocol=2, retry=Retry(NoBackoff(), 0))  # fail fast once it is gone
            c.ping()
            started.wait()
            i = 0
            while not stop.is_set():
                i += 1
                if n == 0:
                    c.dbsize()
                elif n == 1:
                    c.info("stats")
                else:
                    c.mset({k: "%d:%d" % (n, i) for k in keys})
                    c.mget(keys)
                    c.exists(*keys)
        except (redis.ConnectionError, redis.TimeoutError, ConnectionError, OSError):
            pass
        except redis.ResponseError as e:
            errors.append(repr(e))
        except threading.BrokenBarrierError as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.5)
    with Conn(srv) as admin:
        t0 = time.monotonic()
        admin.send(encode("SHUTDOWN", "NOSAVE"))
        assert admin.read_until_closed(timeout=5) == b""
        assert srv.proc.wait(timeout=5) == 0
        elapsed = time.monotonic() - t0
    stop.set()
    for t in threads:
        t.join(timeout=5)
        assert not t.is_alive(), "a client hung after SHUTDOWN"
    assert not errors, errors[:3]
    assert elapsed < 3, "shutdown took %.1fs" % elapsed


def test_shutdown_from_a_pipeline_after_remote_commands(srv):
    keys = one_key_per_shard("sdp:")
    with Conn(srv) as c:
        c.send(b"".join(encode("INCR", keys[i % SHARDS]) for i in range(400)) + encode("SHUTDOWN", "NOSAVE"))
        c.read_until_closed(timeout=5)
    assert srv.proc.wait(timeout=5) == 0


# ---------------------------------------------------------------- mixed workload

def test_concurrent_mixed_pipelines_each_see_their_own_replies_in_order(srv):
    # Several clients, each with its own keys on every shard, send pipelines
    # mixing single-shard, multi-shard and whole-keyspace commands while the
    # others do the same: every reply must be the one expected for that
    # client, in order (no reply crossing to another client, none lost).
    deadline = time.monotonic() + 2.0
    errors = []
    rounds = [0] * 6

    def run(n):
        try:
            with Conn(srv, timeout=10) as c:
                ks = [keys_on(s, 1, "mx%d:" % n)[0] for s in range(SHARDS)]
                counter = 0
                while time.monotonic() < deadline and not errors:
                    req, exp = [], []
                    for i in range(40):
                        k = ks[i % SHARDS]
                        counter += 1
                        req.append(encode("SET", k, "%d" % counter))
                        exp.append(OK)
                        req.append(encode("MGET", *ks))
                        exp.append(None)
                        req.append(encode("GET", k))
                        exp.append(bulk("%d" % counter))
                        if i % 10 == 0:
                            req.append(encode("DBSIZE"))
                            exp.append(None)
                        if i % 13 == 0:
                            req.append(encode("CLIENT", "LIST", "ID", "1"))
                            exp.append(None)
                        req.append(encode("ECHO", "%d-%d" % (n, counter)))
                        exp.append(bulk("%d-%d" % (n, counter)))
                    c.send(b"".join(req))
                    for r, e in zip(req, exp):
                        got = c.read_reply()
                        if e is not None and got != e:
                            errors.append((n, r, got, e))
                            return
                        if e is None and not (got.startswith(b"*") or got.startswith(b":")
                                              or got.startswith(b"$") or got.startswith(b"=")):
                            errors.append((n, r, got))
                            return
                    rounds[n] += 1
        except Exception as e:  # noqa: BLE001
            errors.append((n, repr(e)))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
        assert not t.is_alive(), "a client hung"
    assert not errors, errors[:3]
    assert min(rounds) > 0


# ---------------------------------------------------------------- more connection state

def test_client_kill_of_itself_after_remote_commands(srv):
    keys = one_key_per_shard("self:")
    with Conn(srv) as c:
        cid = int(c.call("CLIENT", "ID")[1:-2])
        c.send(b"".join(encode("INCR", k) for k in keys)
               + encode("CLIENT", "KILL", "ID", cid, "SKIPME", "no") + encode("SET", "after-kill", "1"))
        assert c.read_until_closed() == integer(1) * SHARDS + integer(1)
    check = srv.client()
    assert check.exists("after-kill") == 0
    assert check.mget(keys) == [b"1"] * SHARDS


def test_swapdb_and_reset_between_remote_commands(srv):
    a, b, c_, d = one_key_per_shard("swap:")
    req = [encode("SET", a, "x"), encode("SET", b, "y"), encode("SWAPDB", 0, 1),
           encode("GET", a), encode("EXISTS", a, b), encode("SELECT", 1), encode("MGET", a, b, c_),
           encode("SELECT", 2), encode("SET", d, "in-db2"), encode("RESET"), encode("GET", d),
           encode("DBSIZE"), encode("SELECT", 2), encode("GET", d)]
    exp = [OK, OK, OK, bulk(None), integer(0), OK, array([bulk("x"), bulk("y"), bulk(None)]),
           OK, OK, b"+RESET\r\n", bulk(None), integer(0), OK, bulk("in-db2")]
    with Conn(srv) as c:
        c.send(b"".join(req))
        assert read_replies(c, len(exp)) == exp


def test_config_set_timeout_closes_idle_clients_of_every_worker(srv):
    idle = conns_on_every_worker(srv, 8)
    try:
        with Conn(srv) as admin:
            assert admin.call("CONFIG", "SET", "timeout", "1") == OK
            deadline = time.monotonic() + 4.5
            for c in idle:
                assert c.read_until_closed(timeout=max(0.1, deadline - time.monotonic())) == b""
        with Conn(srv) as fresh:  # admin was idle too
            assert fresh.call("CONFIG", "SET", "timeout", "0") == OK
    finally:
        close_all(idle)


def test_config_set_maxclients_counts_clients_of_every_worker(srv):
    with Conn(srv) as admin:
        assert admin.call("CONFIG", "SET", "maxclients", "10") == OK
        conns = []
        try:
            replies = []
            for _ in range(14):
                c = Conn(srv)
                conns.append(c)
                replies.append(c.call("PING"))
            assert replies == [PONG] * 9 + [b"-ERR max number of clients reached\r\n"] * 5
            close_all(conns[:3])
            assert wait_for(lambda: info_dict(admin.call("INFO", "clients").split(b"\r\n", 1)[1])
                            ["connected_clients"] == "7")
            with Conn(srv) as again:
                assert again.call("PING") == PONG
        finally:
            close_all(conns)
            admin.call("CONFIG", "SET", "maxclients", "10000")


def test_expiry_on_every_shard(srv):
    keys = [k for s in range(SHARDS) for k in keys_on(s, 2, "ttl:")]
    with Conn(srv) as c:
        c.send(b"".join(encode("SET", k, "v", "PX", 150) if i % 2 == 0 else encode("SET", k, "v")
                        for i, k in enumerate(keys)))
        assert read_replies(c, len(keys)) == [OK] * len(keys)
        ks = info_dict(c.call("INFO", "keyspace").split(b"\r\n", 1)[1])["db0"]
        assert ks.startswith("keys=%d,expires=%d," % (len(keys), len(keys) // 2))
        time.sleep(0.3)
        # Never read again: the workers' active expiry must remove them.
        assert wait_for(lambda: c.call("DBSIZE") == integer(len(keys) // 2), timeout=3)
        assert c.call("EXISTS", *keys) == integer(len(keys) // 2)


def test_scan_keys_randomkey_over_every_shard(srv):
    c = srv.client(protocol=2)
    names = ["scan:%d" % i for i in range(2000)]
    p = c.pipeline(transaction=False)
    for k in names:
        p.set(k, "v")
    p.execute()
    seen, cursor, calls = [], 0, 0
    while True:
        cursor, batch = c.scan(cursor, count=50)
        seen += [k.decode() for k in batch]
        calls += 1
        assert calls < 5000
        if cursor == 0:
            break
    assert set(seen) == set(names)
    assert sorted(k.decode() for k in c.keys("scan:1*")) == sorted(k for k in names if k.startswith("scan:1"))
    assert {c.randomkey().decode() for _ in range(50)} <= set(names)
    assert c.dbsize() == len(names)


def test_large_multi_shard_mset_mget(srv):
    c = srv.client(protocol=2)
    data = {"mm:%d" % i: "val-%d" % i for i in range(3000)}
    assert c.mset(data)
    assert c.mget(list(data)) == [v.encode() for v in data.values()]
    assert c.exists(*data) == len(data)
    assert c.delete(*list(data)[::2]) == len(data) // 2
    assert c.dbsize() == len(data) // 2


def test_frequent_config_set_does_not_stop_active_expiry(srv):
    keys = [k for s in range(SHARDS) for k in keys_on(s, 25, "cron:")]
    c = srv.client(protocol=2)
    p = c.pipeline(transaction=False)
    for k in keys:
        p.set(k, "v", px=100)
    p.execute()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2.0:
        c.config_set("maxmemory-policy", "noeviction")
        time.sleep(0.03)
    assert c.dbsize() == 0
