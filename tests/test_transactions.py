# MULTI / EXEC / DISCARD (issue #19): queuing, EXECABORT for commands
# refused while queuing, errors at run time kept in EXEC's array, nothing
# blocking inside a transaction, CLIENT LIST's flags, and atomicity of a
# transaction whose keys live on several shards (transfers between accounts
# on different shards while other clients sum them: the total never moves).
import threading
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import Conn, client_fields, config_set, raw_client, rc, rc3  # noqa: F401  (fixtures)
from test_atomicity import keys_on_distinct_shards, run_for, sharded  # noqa: F401  (fixture)

QUEUED = b"+QUEUED\r\n"
EXECABORT = b"-EXECABORT Transaction discarded because of previous errors.\r\n"


def test_exec_runs_the_queue_in_order(server, rc):
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SET", "k", "1") == QUEUED
        assert c.call("INCRBY", "k", "5") == QUEUED
        assert c.call("GET", "k") == QUEUED
        assert c.call("LPUSH", "l", "a", "b") == QUEUED
        assert c.call("PING") == QUEUED
        assert rc.get("k") is None  # nothing ran yet
        assert c.call("EXEC") == b"*5\r\n+OK\r\n:6\r\n$1\r\n6\r\n:2\r\n+PONG\r\n"
    assert rc.get("k") == b"6"


def test_empty_transaction_and_discard(server, rc):
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("EXEC") == b"*0\r\n"
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SET", "k", "v") == QUEUED
        assert c.call("DISCARD") == b"+OK\r\n"
        assert c.call("GET", "k") == b"$-1\r\n"  # discarded, and out of the transaction
    assert rc.exists("k") == 0


def test_misuse_errors(server, rc):
    with Conn(server) as c:
        assert c.call("EXEC") == b"-ERR EXEC without MULTI\r\n"
        assert c.call("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
        assert c.call("MULTI") == b"+OK\r\n"
        # Nested MULTI is refused but does not doom the transaction.
        assert c.call("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
        assert c.call("SET", "k", "v") == QUEUED
        assert c.call("EXEC") == b"*1\r\n+OK\r\n"
        for name in ("MULTI", "DISCARD"):
            assert c.call(name, "extra") == b"-ERR wrong number of arguments for '%s' command\r\n" % name.lower().encode()
        # A refused EXEC ends the transaction.
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SET", "k", "w") == QUEUED
        assert c.call("EXEC", "extra") == (b"-EXECABORT Transaction discarded because of: "
                                           b"wrong number of arguments for 'exec' command\r\n")
        assert c.call("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert rc.get("k") == b"v"


def test_refusals_while_queuing_abort_exec(server, rc):
    rc.set("k", "before")
    for bad in (("NOSUCHCOMMAND", "x"), ("GET",), ("SET", "k")):
        with Conn(server) as c:
            assert c.call("MULTI") == b"+OK\r\n"
            assert c.call("SET", "k", "changed") == QUEUED
            assert c.call(*bad).startswith(b"-ERR")
            assert c.call("INCR", "n") == QUEUED  # still queued after the error
            assert c.call("EXEC") == EXECABORT
            assert c.call("EXEC") == b"-ERR EXEC without MULTI\r\n"  # the transaction is over
    assert rc.get("k") == b"before" and rc.exists("n") == 0


def test_exec_over_maxmemory_aborts(server, rc, config_set):
    """Queued under the limit, EXEC over it: the transaction's commands may
    add memory, so EXEC is refused and the transaction discarded."""
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SET", "k", "v") == QUEUED
        config_set("maxmemory-policy", "noeviction")
        rc.set("filler", "x" * 10000)
        config_set("maxmemory", "1")
        assert c.call("EXEC") == (b"-EXECABORT Transaction discarded because of: "
                                  b"OOM command not allowed when used memory > 'maxmemory'.\r\n")
        assert c.call("EXEC") == b"-ERR EXEC without MULTI\r\n"
        # Over the limit nothing is queued, not even a read (the queue takes
        # memory); DISCARD still works.
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("GET", "k") == b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
        assert c.call("EXEC") == EXECABORT
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("DISCARD") == b"+OK\r\n"


def test_errors_at_run_time_stay_in_the_array(server, rc):
    rc.set("s", "text")
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("INCR", "s") == QUEUED  # not an integer: known only when it runs
        assert c.call("LPUSH", "s", "x") == QUEUED  # WRONGTYPE
        assert c.call("SET", "t", "1") == QUEUED
        got = c.call("EXEC")
    assert got == (b"*3\r\n-ERR value is not an integer or out of range\r\n"
                   b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n+OK\r\n")
    assert rc.get("t") == b"1"


def test_resp3_and_select_inside(server, rc):
    with Conn(server) as c:
        assert c.call("HELLO", "3").startswith(b"%")
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SELECT", "2") == QUEUED
        assert c.call("SET", "k", "in2") == QUEUED
        assert c.call("GET", "missing") == QUEUED
        assert c.call("EXEC") == b"*3\r\n+OK\r\n+OK\r\n_\r\n"
        assert c.call("GET", "k") == b"$3\r\nin2\r\n"  # SELECT inside stays
    assert rc.exists("k") == 0


def test_blocking_commands_do_not_block_inside(server, rc):
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        for cmd in (("BLPOP", "nolist", "0"), ("BRPOP", "nolist", "0"), ("BLMOVE", "nolist", "d", "LEFT", "LEFT", "0"),
                    ("BRPOPLPUSH", "nolist", "d", "0"), ("BLMPOP", "0", "1", "nolist", "LEFT"),
                    ("BZPOPMIN", "noz", "0"), ("BZMPOP", "0", "1", "noz", "MIN")):
            assert c.call(*cmd) == QUEUED
        assert c.call("RPUSH", "full", "x") == QUEUED
        assert c.call("BLPOP", "full", "0") == QUEUED
        assert c.call("EXEC") == (b"*9\r\n*-1\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n*-1\r\n*-1\r\n:1\r\n"
                                  b"*2\r\n$4\r\nfull\r\n$1\r\nx\r\n")


def test_a_waiting_client_is_served_after_the_whole_transaction(server, rc):
    """A BLPOP waiting on a key the transaction fills sees the end state:
    the push and the removal that follows it in the queue happen together."""
    waiter = raw_client(server)
    got = []
    t = threading.Thread(target=lambda: got.append(waiter.execute_command("BLPOP", "q", "5")))
    t.start()
    deadline = time.monotonic() + 5
    while b"cmd=blpop" not in rc.execute_command("CLIENT", "LIST") and time.monotonic() < deadline:
        time.sleep(0.01)
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("RPUSH", "q", "a", "b") == QUEUED
        assert c.call("LPOP", "q") == QUEUED
        assert c.call("EXEC") == b"*2\r\n:2\r\n$1\r\na\r\n"
    t.join(10)
    waiter.close()
    assert got == [[b"q", b"b"]]
    assert rc.exists("q") == 0


def test_client_list_shows_the_transaction(server, rc):
    with Conn(server) as c:
        c.call("CLIENT", "SETNAME", "tx")

        def me():
            for line in rc.execute_command("CLIENT", "LIST").decode().splitlines():
                _, f = client_fields(line)
                if f["name"] == "tx":
                    return f
        assert me()["multi"] == "-1" and "x" not in me()["flags"]
        c.call("MULTI")
        c.call("SET", "a", "1")
        c.call("SET", "b", "2")
        f = me()
        assert f["flags"] == "x" and f["multi"] == "2" and int(f["multi-mem"]) > 0
        c.call("EXEC")
        assert me()["multi"] == "-1"


def test_reset_and_quit_inside(server, rc):
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SET", "k", "v") == QUEUED
        assert c.call("RESET") == b"+RESET\r\n"
        assert c.call("EXEC") == b"-ERR EXEC without MULTI\r\n"
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SET", "k", "v") == QUEUED
        assert c.call("QUIT") == b"+OK\r\n"
    assert rc.exists("k") == 0


def test_pipelined_transactions(server, rc):
    """redis-py's transactional pipeline: MULTI, the commands and EXEC in
    one write."""
    r = server.client(protocol=2)
    try:
        p = r.pipeline(transaction=True)
        p.set("a", 1).incr("a").lpush("l", "x").lrange("l", 0, -1)
        assert p.execute() == [True, 2, 1, [b"x"]]
        p = r.pipeline(transaction=True)
        p.set("a", "text").incr("a")
        with pytest.raises(redis.ResponseError):
            p.execute()
        assert r.get("a") == b"text"
    finally:
        r.close()


@pytest.mark.skipif(IS_REDIS, reason="shards: Peregrine with --threads 4")
def test_keys_on_several_shards(sharded):
    c = raw_client(sharded)
    try:
        keys = keys_on_distinct_shards("tx", 6)
        p = c.pipeline(transaction=True)
        for k in keys:
            p.set(k, k)
        p.mget(keys)
        p.execute_command("DBSIZE")
        # Keys that cannot all be read (numkeys past the end): it still runs
        # where its first key lives, and replies its error in the array.
        p.execute_command("ZUNIONSTORE", keys[1], 9, keys[2])
        got = p.execute(raise_on_error=False)
        assert got[-3] == [k.encode() for k in keys] and got[-2] == 6
        assert isinstance(got[-1], redis.ResponseError) and "syntax error" in str(got[-1])
    finally:
        c.close()


def test_transfers_between_shards_keep_the_total(sharded):
    """Clients move amounts between accounts on different shards with
    MULTI/DECRBY/INCRBY/EXEC while others read every account in one
    transaction: the sum is always what it was."""
    accounts = keys_on_distinct_shards("acct", 8)
    setup = raw_client(sharded)
    setup.mset({a: 1000 for a in accounts})
    total = 1000 * len(accounts)
    stop = time.monotonic() + 2.0
    errors = []

    def mover(seed):
        c = raw_client(sharded)
        i = seed
        try:
            while time.monotonic() < stop:
                a, b = accounts[i % len(accounts)], accounts[(i * 7 + 3) % len(accounts)]
                i += 1
                p = c.pipeline(transaction=True)
                p.decrby(a, 3).incrby(b, 3)
                p.execute()
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            c.close()

    def auditor():
        c = raw_client(sharded)
        try:
            while time.monotonic() < stop:
                p = c.pipeline(transaction=True)
                for a in accounts:
                    p.get(a)
                s = sum(int(v) for v in p.execute())
                if s != total:
                    errors.append(AssertionError(f"torn: {s} != {total}"))
                    return
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            c.close()

    run_for([threading.Thread(target=mover, args=(s,)) for s in range(4)] +
            [threading.Thread(target=auditor) for _ in range(2)])
    assert not errors, errors[:3]
    assert sum(int(v) for v in setup.mget(accounts)) == total
    setup.close()
