# Sentinel (issue #38): Debian's redis-server in sentinel mode, three of
# them, monitor a primary with two replicas and fail over when it dies. The
# primary is the server under test; the replicas are Debian's redis-server,
# or the server under test too (then Sentinel promotes one with its MULTI,
# SLAVEOF NO ONE, CONFIG REWRITE, CLIENT KILL, EXEC, and points the other
# at it). Sentinel reads INFO replication to find the replicas, talks to
# them as it talks to Redis, and every write a client saw acknowledged by
# WAIT 1 must be on the replica it promotes.
import os
import subprocess
import time

import pytest
import redis

from conftest import TEST_SERVER, ServerProcess, free_port
from helpers import wait_for


class Sentinel:
    def __init__(self, tmp_path, name, primary_port):
        self.port = free_port()
        conf = tmp_path / f"sentinel-{name}.conf"
        conf.write_text(f"port {self.port}\nbind 127.0.0.1\ndir {tmp_path}\n"
                        f"sentinel monitor mymaster 127.0.0.1 {primary_port} 2\n"
                        "sentinel down-after-milliseconds mymaster 1000\n"
                        "sentinel failover-timeout mymaster 5000\n")
        self.log = open(tmp_path / f"sentinel-{name}.log", "wb")
        self.proc = subprocess.Popen(["redis-server", str(conf), "--sentinel"], stdout=self.log,
                                     stderr=subprocess.STDOUT, cwd=tmp_path)
        self.client = redis.Redis(port=self.port, socket_timeout=5, decode_responses=True)
        assert wait_for(self._up)

    def _up(self):
        try:
            return self.client.ping()
        except redis.ConnectionError:
            return False

    def master(self):
        return self.client.execute_command("SENTINEL", "MASTER", "mymaster")

    def master_port(self):
        return int(self.client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")[1])

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()


@pytest.mark.parametrize("replica_kind", ["redis", TEST_SERVER])
def test_sentinel_fails_over_and_keeps_every_acknowledged_write(start_server, tmp_path, replica_kind):
    primary = start_server()
    replicas = []
    sentinels = []
    try:
        for i in range(2):
            d = tmp_path / f"replica{i}"
            d.mkdir()
            conf = d / "replica.conf"
            conf.write_text(f"replicaof {primary.host} {primary.port}\ndir {d}\n")
            replicas.append(ServerProcess(kind=replica_kind, config=conf))
        p = primary.client()
        assert wait_for(lambda: [p.info("replication").get(f"slave{i}", {}).get("state") for i in (0, 1)] ==
                        ["online", "online"], timeout=30)
        sentinels = [Sentinel(tmp_path, n, primary.port) for n in "abc"]

        def known():
            # (redis-py gives SENTINEL MASTER's pairs as a dict.)
            m = sentinels[0].master()
            return m.get("flags") == "master" and str(m.get("num-slaves")) == "2" and \
                str(m.get("num-other-sentinels")) == "2"
        assert wait_for(known, timeout=20), sentinels[0].master()
        # Writes, each acknowledged by a replica before the next.
        acked = []
        for i in range(200):
            p.set(f"k{i}", i)
            if p.execute_command("WAIT", 1, 2000) >= 1:
                acked.append(i)
        assert len(acked) == 200
        primary.proc.kill()
        primary.proc.wait()
        ports = {r.port for r in replicas}
        assert wait_for(lambda: sentinels[0].master_port() in ports, timeout=30)
        promoted = next(r for r in replicas if r.port == sentinels[0].master_port())
        c = promoted.client()
        assert wait_for(lambda: c.execute_command("ROLE")[0] == b"master", timeout=20)
        assert c.mget([f"k{i}" for i in acked]) == [str(i).encode() for i in acked]
        # The other replica follows the promoted one, and the promoted one's
        # file says it is a primary now (CONFIG REWRITE).
        other = next(r for r in replicas if r is not promoted).client()
        assert wait_for(lambda: other.info("replication").get("master_port") == promoted.port and
                        other.info("replication").get("master_link_status") == "up", timeout=30)
        c.set("after", "failover")
        assert wait_for(lambda: other.get("after") == b"failover", timeout=10)
        conf_text = (tmp_path / f"replica{replicas.index(promoted)}" / "replica.conf").read_text()
        assert "replicaof" not in conf_text.lower() and "slaveof" not in conf_text.lower(), conf_text
    finally:
        for s in sentinels:
            s.stop()
        for r in replicas:
            r.stop()
