# Cluster nodes with a tls-port (issue #39): a client over TLS is told the
# nodes' TLS ports (-MOVED, -ASK, CLUSTER SLOTS, NODES, REPLICAS), a plain
# one the plain ports, as Redis 7.2 tells each its own (shouldReturnTlsInfo),
# so that a cluster client over TLS follows redirections to ports it can
# talk to. The bus itself stays plain TCP (tls-cluster is not built). With
# TEST_SERVER=redis every node is Redis.
import pytest
import redis
from redis.cluster import RedisCluster

from conftest import IS_REDIS, TEST_SERVER, free_port
from test_cluster import create_cluster, key_slot, owner_of, start_nodes, stop_nodes, tag_for
from test_tls import certs  # noqa: F401  (fixture)

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Redis 7.0 (Debian's) names the plain ports to TLS clients: "
                                "a cluster client over TLS cannot follow them")


@pytest.fixture(scope="module")
def tls_trio(certs, tmp_path_factory):  # noqa: F811
    tls_ports = [free_port() for _ in range(3)]

    def args(i):
        return ["--tls-port", str(tls_ports[i]), "--tls-cert-file", str(certs / "server.crt"),
                "--tls-key-file", str(certs / "server.key"), "--tls-ca-cert-file", str(certs / "ca.crt")]
    nodes = start_nodes(tmp_path_factory.mktemp("tls-trio"), [TEST_SERVER] * 3, args=args)
    try:
        for n, p in zip(nodes, tls_ports):
            n.tls_port = p
        create_cluster(nodes)
        yield nodes
    finally:
        stop_nodes(nodes)


def tls_conn(node, certs):  # noqa: F811
    c = redis.Redis(host="127.0.0.1", port=node.tls_port, ssl=True, ssl_ca_certs=str(certs / "ca.crt"),
                    ssl_certfile=str(certs / "client.crt"), ssl_keyfile=str(certs / "client.key"),
                    ssl_check_hostname=False, socket_timeout=10, protocol=2)
    c.response_callbacks.clear()
    return c


def test_redirections_name_the_clients_kind_of_port(tls_trio, certs):  # noqa: F811
    a, b, c = tls_trio
    key = "k{%s}" % tag_for(lambda s: owner_of(tls_trio, s) is b)
    slot = key_slot(key)
    assert a.raw("GET", key) == b"-MOVED %d 127.0.0.1:%d\r\n" % (slot, b.port)
    secure = tls_conn(a, certs)
    with pytest.raises(redis.exceptions.MovedError) as moved:
        secure.execute_command("GET", key)
    assert (moved.value.slot_id, moved.value.host, moved.value.port) == (slot, "127.0.0.1", b.tls_port)
    # CLUSTER SLOTS and NODES: the same nodes, each client's ports.
    plain_slots, tls_slots = a("CLUSTER", "SLOTS"), secure.execute_command("CLUSTER", "SLOTS")
    ports = {n.port: n.tls_port for n in tls_trio}
    assert len(plain_slots) == len(tls_slots) == 3
    for p, t in zip(sorted(plain_slots), sorted(tls_slots)):
        assert p[:2] == t[:2] and p[2][2] == t[2][2]
        assert t[2][1] == ports[p[2][1]]
    plain_nodes = a("CLUSTER", "NODES").decode()
    tls_nodes = secure.execute_command("CLUSTER", "NODES").decode()
    for n in tls_trio:
        assert ":%d@%d " % (n.port, n.bus_port) in plain_nodes
        assert ":%d@%d " % (n.tls_port, n.bus_port) in tls_nodes
    # -ASK too: a slot being migrated to c, its key gone from a.
    mine = "m{%s}" % tag_for(lambda s: owner_of(tls_trio, s) is a)
    s = key_slot(mine)
    assert c("CLUSTER", "SETSLOT", s, "IMPORTING", a.myid()) == b"OK"
    assert a("CLUSTER", "SETSLOT", s, "MIGRATING", c.myid()) == b"OK"
    try:
        with pytest.raises(redis.exceptions.AskError) as ask:
            secure.execute_command("GET", mine)
        assert (ask.value.slot_id, ask.value.port) == (s, c.tls_port)
        assert a.raw("GET", mine) == b"-ASK %d 127.0.0.1:%d\r\n" % (s, c.port)
    finally:
        for n in (a, c):
            assert n("CLUSTER", "SETSLOT", s, "STABLE") == b"OK"
    secure.close()


def test_a_cluster_client_over_tls(tls_trio, certs):  # noqa: F811
    rc = RedisCluster(host="127.0.0.1", port=tls_trio[0].tls_port, ssl=True, ssl_ca_certs=str(certs / "ca.crt"),
                      ssl_certfile=str(certs / "client.crt"), ssl_keyfile=str(certs / "client.key"),
                      ssl_check_hostname=False, socket_timeout=10)
    try:
        for i in range(300):
            rc.set("tls:%d" % i, i)
        assert [rc.get("tls:%d" % i) for i in range(300)] == [str(i).encode() for i in range(300)]
        assert {n.port for n in rc.get_nodes()} == {n.tls_port for n in tls_trio}
    finally:
        rc.close()
