# Replica migration in cluster mode (issue #39; Redis's
# cluster-migration-barrier): a primary left without a working replica gets
# one from the primary with the most, as Redis's clusterHandleSlaveMigration
# decides, once it has been orphaned for 5 s. Seven nodes made by
# redis-cli --cluster create --cluster-replicas 1: three primaries, one of
# them with two replicas. With TEST_SERVER=redis every node is Redis.
import time

from conftest import TEST_SERVER
from test_cluster import (NODE_TIMEOUT, create_cluster, myself_line, nodes_lines, owner_of, roles, start_nodes,
                          stop_nodes, tag_for, wait_for, wait_replicas_linked)


def test_an_orphaned_primary_gets_a_replica_from_the_richest(tmp_path):
    nodes = start_nodes(tmp_path, [TEST_SERVER] * 7)
    try:
        create_cluster(nodes, replicas=1)
        wait_replicas_linked(nodes)
        rep = roles(nodes)
        by_primary = {}
        for r, p in rep.items():
            by_primary.setdefault(p, []).append(r)
        rich = next(p for p, rs in by_primary.items() if len(rs) == 2)
        poor, (lone,) = next((p, rs) for p, rs in by_primary.items() if len(rs) == 1)
        # The one to move: the smaller id of the rich primary's replicas.
        mover = min(by_primary[rich], key=lambda n: n.myid())
        stays = max(by_primary[rich], key=lambda n: n.myid())
        t0 = time.monotonic()
        lone.crash()
        alive = [n for n in nodes if n is not lone]

        def migrated():
            f = myself_line(mover)
            return "slave" in f[2] and f[3] == poor.myid()
        # Node timeout, the FAIL agreement, then 5 s orphaned.
        assert wait_for(migrated, 5 + 6 * NODE_TIMEOUT / 1000), nodes_lines(mover)
        took = time.monotonic() - t0
        assert took >= 5, took
        # The others learn it; the rich primary keeps its other replica,
        # which stays put (its primary has only one working replica now).
        poor_id, rich_id = poor.myid(), rich.myid()
        assert wait_for(lambda: all(
            next(f for f in nodes_lines(n) if f[0] == mover.myid())[3] == poor_id for n in alive), 10)
        assert myself_line(stays)[3] == rich_id
        assert wait_for(lambda: mover.client().info("replication").get("master_link_status") == "up" and
                        int(mover.client().info("replication")["master_port"]) == poor.port, 15)
        # It replicates the poor primary's writes.
        key = "probe{%s}" % tag_for(lambda s: owner_of(alive, s) is poor)
        assert poor("SET", key, "v") == b"OK"
        assert mover("READONLY") == b"OK"
        assert wait_for(lambda: mover("GET", key) == b"v", 10)
        assert myself_line(stays)[3] == rich_id and "slave" in myself_line(stays)[2]
    finally:
        stop_nodes(nodes)
