# TLS (docs/security.md): tls-port with a CA, server and client certificates
# the test makes with the openssl tool; redis-py over SSL and redis-cli --tls;
# client certificates required, optional and not asked for; tls-protocols;
# a bad certificate stops the start. Runs against TEST_SERVER=redis too
# (Debian's redis-server is built with TLS).
import os
import socket
import ssl
import subprocess
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import IS_REDIS, ServerProcess, free_port


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=Peregrine test CA", cwd=d)
    for name in ("server", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", "/CN=" + name, cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".crt", "-days", "2", cwd=d)
    # A client certificate from another CA: refused.
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "rogue.key", "-out", "rogue.crt",
            "-days", "2", "-subj", "/CN=rogue", cwd=d)
    return d


def tls_server(certs, tmp_path, *extra):
    # (Two ports picked free before the server binds them: another socket
    # may take one meanwhile, or both picks be the same; then again.)
    for attempt in range(3):
        port = free_port()
        try:
            s = ServerProcess(["--tls-port", str(port), "--tls-cert-file", str(certs / "server.crt"),
                               "--tls-key-file", str(certs / "server.key"), "--tls-ca-cert-file",
                               str(certs / "ca.crt"), *extra], tmp_path=tmp_path)
        except RuntimeError as e:
            if "Address already in use" not in str(e) or attempt == 2:
                raise
            continue
        s.tls_port = port
        return s


def tls_client(s, certs, cert="client", **kw):
    args = dict(host="127.0.0.1", port=s.tls_port, ssl=True, ssl_ca_certs=str(certs / "ca.crt"),
                ssl_cert_reqs="required", ssl_check_hostname=False, socket_timeout=10, decode_responses=True,
                retry=Retry(NoBackoff(), 0))  # (a refused handshake fails at once)
    if cert:
        args.update(ssl_certfile=str(certs / (cert + ".crt")), ssl_keyfile=str(certs / (cert + ".key")))
    args.update(kw)
    return redis.Redis(**args)


@pytest.fixture(scope="module")
def srv(certs, tmp_path_factory):
    s = tls_server(certs, tmp_path_factory.mktemp("srv"))
    yield s
    s.stop()


def test_commands_over_tls(srv, certs):
    c = tls_client(srv, certs)
    assert c.ping()
    assert c.set("k", "v")
    assert c.get("k") == "v"
    # A pipeline, values larger than a TLS record, RESP3.
    p = c.pipeline(transaction=False)
    for i in range(500):
        p.set("p%d" % i, str(i) * 50)
    assert all(p.execute())
    big = os.urandom(3 * 1024 * 1024).hex()
    assert c.set("big", big)
    assert c.get("big") == big
    assert c.strlen("big") == len(big)
    c3 = tls_client(srv, certs, protocol=3)
    assert c3.hgetall("nothing") == {}
    assert c3.get("p7") == "7" * 50
    # The plain port still serves.
    assert srv.client().get("k") == b"v"
    c.close()
    c3.close()


def test_many_clients(srv, certs):
    clients = [tls_client(srv, certs) for _ in range(20)]
    for i, c in enumerate(clients):
        c.set("c%d" % i, i)
    for i, c in enumerate(clients):
        assert c.get("c%d" % i) == str(i)
        c.close()


def test_client_certificate_required(srv, certs):
    for cert in (None, "rogue"):
        with pytest.raises(redis.ConnectionError):
            tls_client(srv, certs, cert=cert).ping()
    # Plain text on the TLS port: no reply, the connection closes.
    with socket.create_connection(("127.0.0.1", srv.tls_port), timeout=5) as s:
        s.sendall(b"PING\r\n")
        try:
            data = s.recv(100)
        except (ConnectionResetError, socket.timeout):
            data = b""
        assert b"PONG" not in data
    assert tls_client(srv, certs).ping()  # the server goes on


@pytest.mark.parametrize("mode", ["no", "optional"])
def test_client_certificate_not_required(certs, tmp_path, mode):
    s = tls_server(certs, tmp_path, "--tls-auth-clients", mode)
    try:
        assert tls_client(s, certs, cert=None).ping()
        assert tls_client(s, certs).ping()
        if mode == "optional":
            # One that is offered must still be valid.
            with pytest.raises(redis.ConnectionError):
                tls_client(s, certs, cert="rogue").ping()
        assert s.client(decode_responses=True).config_get("tls-auth-clients") == {"tls-auth-clients": mode}
    finally:
        s.stop()


def test_redis_cli_tls(srv, certs):
    out = subprocess.run(["redis-cli", "-p", str(srv.tls_port), "--tls", "--cacert", str(certs / "ca.crt"),
                          "--cert", str(certs / "client.crt"), "--key", str(certs / "client.key"), "SET", "cli", "x"],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "OK", out
    out = subprocess.run(["redis-cli", "-p", str(srv.tls_port), "--tls", "--cacert", str(certs / "ca.crt"),
                          "--cert", str(certs / "client.crt"), "--key", str(certs / "client.key"), "GET", "cli"],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "x"


def test_tls_protocols(certs, tmp_path):
    s = tls_server(certs, tmp_path, "--tls-protocols", "TLSv1.3")
    try:
        assert tls_client(s, certs, ssl_min_version=ssl.TLSVersion.TLSv1_3).ping()
        # A client that speaks at most TLS 1.2 cannot connect.
        ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        ctx.check_hostname = False
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(str(certs / "client.crt"), str(certs / "client.key"))
        with socket.create_connection(("127.0.0.1", s.tls_port), timeout=5) as raw:
            with pytest.raises((ssl.SSLError, ConnectionResetError)):
                with ctx.wrap_socket(raw) as t:
                    t.sendall(b"PING\r\n")
                    t.recv(10)
        assert s.client(decode_responses=True).config_get("tls-protocols") == {"tls-protocols": "TLSv1.3"}
    finally:
        s.stop()


def test_tls_ciphersuites(certs, tmp_path):
    s = tls_server(certs, tmp_path, "--tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256")
    try:
        c = tls_client(s, certs)
        assert c.ping()
        sock = c.connection_pool.get_connection()._sock
        assert sock.cipher()[0] == "TLS_CHACHA20_POLY1305_SHA256"
    finally:
        s.stop()


def test_bad_tls_settings_stop_the_start(certs, tmp_path):
    port = free_port()
    base = ["--tls-port", str(port), "--tls-ca-cert-file", str(certs / "ca.crt")]
    for extra in (["--tls-cert-file", str(certs / "nosuch.crt"), "--tls-key-file", str(certs / "server.key")],
                  ["--tls-cert-file", str(certs / "server.crt"), "--tls-key-file", str(certs / "client.key")],
                  ["--tls-cert-file", str(certs / "server.crt"), "--tls-key-file", str(certs / "server.key"),
                   "--tls-protocols", "TLSv9"]):
        with pytest.raises(RuntimeError, match="server exited early"):
            ServerProcess(base + extra, tmp_path=tmp_path)


def test_config_set_rotates_the_certificate(certs, tmp_path):
    # A second server certificate from the same CA.
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server2.key", "-out", "server2.csr",
            "-subj", "/CN=server2", cwd=certs)
    openssl("x509", "-req", "-in", "server2.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server2.crt", "-days", "2", cwd=certs)
    s = tls_server(certs, tmp_path)
    try:
        plain = s.client(decode_responses=True)
        before = tls_client(s, certs)
        assert before.ping()
        with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
            plain.config_set("tls-cert-file", str(certs / "nosuch.crt"))
        assert plain.config_get("tls-cert-file")["tls-cert-file"] == str(certs / "server.crt")
        plain.execute_command("CONFIG", "SET", "tls-cert-file", str(certs / "server2.crt"),
                              "tls-key-file", str(certs / "server2.key"))
        after = tls_client(s, certs)
        assert after.ping()
        sock = after.connection_pool.get_connection()._sock
        assert dict(x[0] for x in sock.getpeercert()["subject"])["commonName"] == "server2"
        assert before.ping()  # made before: still served
        plain.config_set("tls-auth-clients", "no")
        assert tls_client(s, certs, cert=None).ping()
    finally:
        s.stop()


def test_tls_config_is_reported(srv):
    c = srv.client(decode_responses=True)
    assert c.config_get("tls-port") == {"tls-port": str(srv.tls_port)}
    assert c.config_get("tls-auth-clients") == {"tls-auth-clients": "yes"}
    assert c.config_get("tls-replication") == {"tls-replication": "no"}
    assert c.config_get("tls-cert-file")["tls-cert-file"].endswith("server.crt")


def test_a_replica_over_tls(certs, tmp_path):
    # tls-replication: the replica's link to a primary's TLS port (Debian's
    # redis-server, asking for a client certificate: the replica shows its
    # own).
    from test_replication import snapshot, wait_caught_up, write_every_type
    port = free_port()
    pdir = tmp_path / "p"
    pdir.mkdir()
    primary = ServerProcess(["--tls-port", str(port), "--tls-cert-file", str(certs / "server.crt"),
                             "--tls-key-file", str(certs / "server.key"), "--tls-ca-cert-file", str(certs / "ca.crt"),
                             "--repl-diskless-sync-delay", "0"], tmp_path=pdir, kind="redis")
    rdir = tmp_path / "r"
    rdir.mkdir()
    replica = tls_server(certs, rdir, "--tls-replication", "yes")
    try:
        p, r = primary.client(), replica.client()
        write_every_type(p, "a", 300)
        assert r.config_get("tls-replication") == {"tls-replication": "yes"}
        r.execute_command("REPLICAOF", "127.0.0.1", port)
        wait_caught_up(p, r)
        write_every_type(p, "b", 200)
        wait_caught_up(p, r)
        assert snapshot(r) == snapshot(p)
        assert p.info("replication")["slave0"]["state"] == "online"
    finally:
        replica.stop()
        primary.stop()


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_a_redis_replica_of_this_server_over_tls(certs, tmp_path, diskless):
    # The primary's full sync over TLS: the snapshot goes through the
    # replica's worker, which owns the TLS session (docs/replication.md);
    # with repl-diskless-sync no it is the file's bytes, the same way. A
    # slowed snapshot with writes meanwhile: the stream follows it.
    from test_replication import end_slowed_sync, write_every_type
    (tmp_path / "p").mkdir()
    rdir = tmp_path / "r"
    rdir.mkdir()
    primary = tls_server(certs, tmp_path / "p", "--repl-diskless-sync", diskless)
    replica = None
    try:
        p = primary.client()
        write_every_type(p, "before", 1000)
        p.config_set("rdb-key-save-delay", "100")
        replica = ServerProcess(["--tls-cert-file", str(certs / "client.crt"), "--tls-key-file",
                                 str(certs / "client.key"), "--tls-ca-cert-file", str(certs / "ca.crt"),
                                 "--tls-replication", "yes", "--replicaof", "127.0.0.1", str(primary.tls_port)],
                                tmp_path=rdir, kind="redis")
        r = replica.client()
        deadline = time.monotonic() + 10
        while p.info("replication")["connected_slaves"] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        write_every_type(p, "during", 200)
        end_slowed_sync(p, r, 200)
        assert p.info("replication")["slave0"]["state"] == "online"
        assert p.info("stats")["sync_full"] == 1
    finally:
        if replica is not None:
            replica.stop()
        primary.stop()


@pytest.mark.skipif(IS_REDIS, reason="Peregrine on both ends")
def test_a_peregrine_replica_of_peregrine_over_tls(certs, tmp_path):
    from test_replication import snapshot, wait_caught_up, write_every_type
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    primary = tls_server(certs, tmp_path / "p")
    replica = tls_server(certs, tmp_path / "r", "--tls-replication", "yes")
    try:
        p, r = primary.client(), replica.client()
        write_every_type(p, "a", 500)
        p.set("big", os.urandom(3 << 20))  # (more than the pump's bound at once)
        r.execute_command("REPLICAOF", "127.0.0.1", primary.tls_port)
        wait_caught_up(p, r)
        write_every_type(p, "b", 200)
        wait_caught_up(p, r)
        assert snapshot(r) == snapshot(p)
        assert r.get("big") == p.get("big")
        # A dropped link continues over TLS (+CONTINUE).
        r.execute_command("CLIENT", "KILL", "TYPE", "master")
        write_every_type(p, "c", 100)
        wait_caught_up(p, r)
        assert snapshot(r) == snapshot(p)
        assert p.info("stats")["sync_full"] == 1
        # redis-cli --rdb over TLS (REPLCONF rdb-only: closed once all of it
        # has gone through the pump).
        path = tmp_path / "cli.rdb"
        out = subprocess.run(["redis-cli", "-p", str(primary.tls_port), "--tls", "--cacert", str(certs / "ca.crt"),
                              "--cert", str(certs / "client.crt"), "--key", str(certs / "client.key"),
                              "--rdb", str(path)], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stdout + out.stderr
        data = path.read_bytes()
        assert data.startswith(b"REDIS00") and len(data) > 3 << 20
        deadline = time.monotonic() + 10
        while p.info("replication")["connected_slaves"] != 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert p.info("replication")["connected_slaves"] == 1
    finally:
        replica.stop()
        primary.stop()
