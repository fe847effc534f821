# DEBUG DIGEST and DEBUG DIGEST-VALUE (issue #40; Redis's test suite compares
# datasets with them): the same data gives Redis's own digest, whatever the
# encodings and however many workers hold it, so the digests of Peregrine
# and redis-server fed the same commands are equal; a change of any value,
# deadline or database changes it; a reload keeps it.
import pytest

from conftest import IS_REDIS, ServerProcess

ZERO = b"0" * 40


def feed(c):
    c.set("s", "hello")
    c.set("n", 12345)
    c.rpush("small", "a", "b", 1, 2)
    c.rpush("big", *("item:%d" % i for i in range(3000)))
    c.sadd("ints", 1, 2, 3)
    c.sadd("words", *("w%d" % i for i in range(600)))
    c.zadd("z", {"a": 1.5, "b": 2, "c": -3.25})
    c.xadd("st", {"f": "v", "n": 1}, id="5-1")
    c.xadd("st", {"f": "w", "n": 2}, id="6-0")
    c.zadd("zbig", {"m%d" % i: i / 4 for i in range(500)})
    c.hset("h", mapping={"f1": "v1", "f2": 2})
    c.hset("hbig", mapping={"f%d" % i: "v" * (i % 90) for i in range(700)})
    c.set("e", "v", px=600_000)
    for i in range(200):
        c.set("k:%d" % i, i)
    c.execute_command("SELECT", 3)
    c.set("other", 1)
    c.execute_command("SELECT", 0)


@pytest.fixture
def pair(start_server, tmp_path):
    ours = start_server("--enable-debug-command", "yes", "--threads", "4") if not IS_REDIS else \
        start_server("--enable-debug-command", "yes")
    (tmp_path / "ref").mkdir()
    ref = ServerProcess(["--enable-debug-command", "yes"], tmp_path=tmp_path / "ref", kind="redis")
    yield ours, ref
    ref.stop()


def test_the_same_data_has_redis_own_digest(pair):
    ours, ref = pair
    a, b = ours.client(protocol=2), ref.client(protocol=2)
    assert a.execute_command("DEBUG", "DIGEST") == ZERO
    for c in (a, b):
        # (One connection: SELECT holds for the commands after it.)
        with c.pipeline(transaction=False) as p:
            feed(p)
            p.execute()
    assert a.execute_command("DEBUG", "DIGEST") == b.execute_command("DEBUG", "DIGEST") != ZERO
    keys = ["s", "n", "small", "big", "ints", "words", "z", "st", "zbig", "h", "hbig", "e", "missing"]
    got = a.execute_command("DEBUG", "DIGEST-VALUE", *keys)
    assert got == b.execute_command("DEBUG", "DIGEST-VALUE", *keys)
    assert got[-1] == ZERO and ZERO not in got[:-1]
    assert a.execute_command("DEBUG", "DIGEST-VALUE") == []
    # Any change shows: a member's score, a deadline, the database.
    before = a.execute_command("DEBUG", "DIGEST")

    def back_from_db1():
        a.execute_command("SELECT", 1)
        a.move("s", 0)
        a.execute_command("SELECT", 0)

    for change, undo in ((lambda: a.zadd("zbig", {"m7": 99}), lambda: a.zadd("zbig", {"m7": 7 / 4})),
                         (lambda: a.persist("e"), lambda: a.pexpire("e", 600_000)),
                         (lambda: a.move("s", 1), back_from_db1)):
        change()
        assert a.execute_command("DEBUG", "DIGEST") != before
        undo()
        assert a.execute_command("DEBUG", "DIGEST") == before
    a.close()
    b.close()


def test_a_reload_keeps_the_digest(pair):
    ours, _ = pair
    c = ours.client(protocol=2)
    with c.pipeline(transaction=False) as p:
        feed(p)
        p.execute()
    c.xgroup_create("st", "g", id="0")
    c.xreadgroup("g", "alice", {"st": ">"}, count=1)
    before = c.execute_command("DEBUG", "DIGEST")
    stream = c.execute_command("DEBUG", "DIGEST-VALUE", "st")
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert c.execute_command("DEBUG", "DIGEST") == before
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "st") == stream
    # A hash field's deadline shows (Redis 7.4's hash-field expiry).
    if not IS_REDIS:  # (Redis 7.0 has none)
        h = c.execute_command("DEBUG", "DIGEST-VALUE", "h")
        c.execute_command("HPEXPIRE", "h", 600_000, "FIELDS", 1, "f1")
        assert c.execute_command("DEBUG", "DIGEST-VALUE", "h") != h
        c.execute_command("HPERSIST", "h", "FIELDS", 1, "f1")
        assert c.execute_command("DEBUG", "DIGEST-VALUE", "h") == h
    # (A stream's entries only, as Redis's: not its groups.)
    c.xack("st", "g", "5-1")
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "st") == stream
    c.xadd("st", {"c": 3}, id="7-1")
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "st") != stream
    c.close()
