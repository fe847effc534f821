# Replication (issue #38, docs/replication.md). So far: a primary with no
# replica attached answers as Redis 7 does (INFO replication, ROLE, the
# backlog's directives). The same tests run against Debian's redis-server
# (TEST_SERVER=redis), which is where these shapes come from.
import re

import pytest
import redis

from conftest import raw_command

ZEROS = "0" * 40


def test_info_replication_of_a_primary_without_replicas(r, server):
    # (Unparsed: redis-py would read forty zeros as the number 0.)
    text = raw_command(server, b"INFO replication\r\n").decode()
    lines = [line for line in text.splitlines()[1:] if line and not line.startswith("#")]  # (after "$<len>")
    fields = dict(line.split(":", 1) for line in lines)
    # Every field, in Redis's order (Sentinel and redis_exporter read them).
    assert [line.split(":", 1)[0] for line in lines] == [
        "role", "connected_slaves", "master_failover_state", "master_replid", "master_replid2",
        "master_repl_offset", "second_repl_offset", "repl_backlog_active", "repl_backlog_size",
        "repl_backlog_first_byte_offset", "repl_backlog_histlen"]
    assert fields["role"] == "master"
    assert fields["connected_slaves"] == "0"
    assert fields["master_failover_state"] == "no-failover"
    assert re.fullmatch("[0-9a-f]{40}", fields["master_replid"])
    assert fields["master_replid2"] == ZEROS
    assert fields["second_repl_offset"] == "-1"
    # No replica has attached: no backlog, no stream, whatever was written.
    r.set("k", "v")
    again = r.info("replication")
    assert again["master_repl_offset"] == 0
    assert again["repl_backlog_active"] == 0
    assert again["repl_backlog_histlen"] == 0
    assert again["repl_backlog_first_byte_offset"] == 0
    # The replication ID is not the run ID, and stays until a failover.
    assert again["master_replid"] == fields["master_replid"]
    assert r.info("server")["run_id"] != fields["master_replid"]


def test_role_of_a_primary_without_replicas(r):
    assert r.execute_command("ROLE") == [b"master", 0, []]
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'role' command"):
        r.execute_command("ROLE", "x")


def test_role_is_allowed_in_scripts_never(r):
    with pytest.raises(redis.ResponseError, match="This Redis command is not allowed from script"):
        r.eval("return redis.call('ROLE')", 0)


def test_backlog_directives(r):
    assert r.config_get("repl-backlog-size") == {"repl-backlog-size": "1048576"}
    assert r.config_get("repl-backlog-ttl") == {"repl-backlog-ttl": "3600"}
    try:
        r.config_set("repl-backlog-size", "10mb")
        assert r.info("replication")["repl_backlog_size"] == 10 * 1024 * 1024
        r.config_set("repl-backlog-ttl", "0")
        assert r.config_get("repl-backlog-ttl") == {"repl-backlog-ttl": "0"}
        with pytest.raises(redis.ResponseError, match="repl-backlog-size"):
            r.config_set("repl-backlog-size", "lots")
        with pytest.raises(redis.ResponseError, match="repl-backlog-ttl"):
            r.config_set("repl-backlog-ttl", "-1")
        assert r.info("replication")["repl_backlog_size"] == 10 * 1024 * 1024
    finally:
        r.config_set("repl-backlog-size", "1mb")
        r.config_set("repl-backlog-ttl", "3600")
