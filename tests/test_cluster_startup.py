# A cluster node that starts with keys in slots it does not serve (issue
# #39; Redis's verifyClusterConfigWithData): a primary takes the slots
# nobody serves and marks those another node serves as importing, so that
# the keys stay reachable (ASKING) and redis-cli --cluster fix can move them.
# With TEST_SERVER=redis every node is Redis.
import shutil

import pytest

from conftest import TEST_SERVER, ServerProcess
from helpers import Conn
from test_cluster import Node, converged, key_slot, myself_line, stop_nodes, wait_for, wait_state


def dump_with_keys(tmp_path, keys):
    """A snapshot (dump.rdb) holding `keys`, made by a standalone server."""
    d = tmp_path / "standalone"
    d.mkdir()
    s = ServerProcess(tmp_path=d)
    try:
        c = s.client()
        for k in keys:
            c.set(k, "v:" + k)
        c.save()
    finally:
        s.stop()
    return d / "dump.rdb"


def slots_of(line):
    return line[8:]


def test_keys_in_unserved_and_foreign_slots(tmp_path):
    keys = ["alpha", "beta", "{alpha}2"]
    slots = sorted({key_slot(k) for k in keys})
    dump = dump_with_keys(tmp_path, keys)
    dirs = {name: tmp_path / name for name in ("alone", "a", "b")}
    for d in dirs.values():
        d.mkdir()
    nodes = []
    try:
        # Alone, without nodes.conf: it takes the slots of its keys.
        shutil.copy(dump, dirs["alone"] / "dump.rdb")
        alone = Node(dirs["alone"])
        nodes.append(alone)
        assert wait_for(lambda: slots_of(myself_line(alone)) == ["%d" % s for s in slots], 5), myself_line(alone)
        # (Down: the other slots are not served.)
        assert alone("CLUSTER", "COUNTKEYSINSLOT", key_slot("alpha")) == 2
        # In a cluster where another node serves them: importing.
        b, a = Node(dirs["b"]), Node(dirs["a"])
        nodes += [b, a]
        assert b("CLUSTER", "ADDSLOTSRANGE", 0, 16383) == b"OK"
        assert b("CLUSTER", "MEET", "127.0.0.1", a.port) == b"OK"
        converged([a, b])
        a.stop()
        nodes.remove(a)
        shutil.copy(dump, dirs["a"] / "dump.rdb")
        a = Node(dirs["a"], port=a.port)
        nodes.append(a)
        want = ["[%d-<-%s]" % (s, b.myid()) for s in slots]
        assert wait_for(lambda: slots_of(myself_line(a)) == want, 5), myself_line(a)
        wait_state([a, b])
        assert a.raw("GET", "alpha") == b"-MOVED %d %s\r\n" % (key_slot("alpha"), b.addr.encode())
        with Conn(a) as c:
            assert c.call("ASKING") == b"+OK\r\n"
            assert c.call("GET", "alpha") == b"$7\r\nv:alpha\r\n"
    finally:
        stop_nodes(nodes)


def test_keys_in_another_database_stop_the_start(tmp_path):
    # Only database 0 in cluster mode: a snapshot with keys elsewhere would
    # leave them out of reach; the node does not start (Redis 7.2 stops on
    # an assertion, 7.0 with this text).
    d = tmp_path / "standalone"
    d.mkdir()
    s = ServerProcess(tmp_path=d)
    try:
        c = s.client()
        c.set("in-zero", "v")
        c.execute_command("SELECT", 1)
        c.set("in-one", "v")
        c.save()
    finally:
        s.stop()
    node_dir = tmp_path / "node"
    node_dir.mkdir()
    shutil.copy(d / "dump.rdb", node_dir / "dump.rdb")
    with pytest.raises(RuntimeError, match="server exited early") as e:
        Node(node_dir)
    if TEST_SERVER != "redis":
        assert "You can't have keys in a DB different than DB 0 when in Cluster mode" in str(e.value)
