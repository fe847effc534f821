# `make install`, the systemd unit and `make deb` (issue #41,
# docs/shipping.md). The install goes to a temporary DESTDIR; the unit is
# checked by systemd-analyze; the package is built, inspected with
# dpkg-deb, installed on this machine with dpkg -i, started as its unit
# would start it (its user, its directories, a NOTIFY_SOCKET the test
# reads), and purged again. Against a sanitizer build, or where the machine
# cannot (no dpkg-deb, not root, a peregrine package already installed),
# those tests skip and say why.
import contextlib
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import time

import pytest
import redis

from conftest import IS_REDIS, PEREGRINE_BIN, ROOT, free_port
from helpers import NO_RETRY

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Peregrine's own packaging")

BUILD = os.path.dirname(os.path.abspath(PEREGRINE_BIN))
UNIT = os.path.join(ROOT, "packaging", "peregrine.service")


def sanitized(path):
    """Whether the binary is an ASan or TSan build (the sanitizer passes run
    this suite too: packaging their binary would test nothing new, and two
    passes side by side must not both dpkg -i)."""
    with open(path, "rb") as f:
        data = f.read()
    return b"AddressSanitizer" in data or b"ThreadSanitizer" in data


RELEASE_ONLY = pytest.mark.skipif(sanitized(PEREGRINE_BIN), reason="packaging is checked on the release build only")


def make(*args, timeout=300):
    """A Makefile rule without rebuilding the server (-o build -o deps) and
    with this run's binary; its output goes with a failure's message."""
    cmd = ["make", "--no-print-directory", "-o", "build", "-o", "deps", f"BUILD={BUILD}", *args]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{cmd} failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


def unit_settings(path):
    """The unit's [Service] settings, a list of values per key."""
    out = {}
    section = None
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
            continue
        key, _, value = line.partition("=")
        if section == "[Service]":
            out.setdefault(key, []).append(value)
    return out


def test_make_install_lays_out_the_files(tmp_path):
    make("install", f"DESTDIR={tmp_path}", "PREFIX=/usr")
    binary = tmp_path / "usr/bin/peregrine"
    assert os.access(binary, os.X_OK)
    assert open(binary, "rb").read() == open(PEREGRINE_BIN, "rb").read()
    for tool in ("peregrine-check-rdb", "peregrine-check-aof"):
        assert os.readlink(tmp_path / "usr/bin" / tool) == "peregrine"
    # PREFIX=/usr: the config in /etc, the unit unchanged.
    assert (tmp_path / "etc/peregrine/peregrine.conf").read_text() == open(os.path.join(ROOT, "peregrine.conf")).read()
    assert (tmp_path / "usr/lib/systemd/system/peregrine.service").read_text() == open(UNIT).read()
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=10).stdout
    assert out.startswith("Peregrine server v=")
    # A check tool is the binary under another name.
    p = subprocess.run([str(tmp_path / "usr/bin/peregrine-check-rdb"), str(tmp_path / "missing.rdb")],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode != 0 and "missing.rdb" in p.stdout + p.stderr


def test_make_install_elsewhere_points_the_unit_there(tmp_path):
    make("install", f"DESTDIR={tmp_path}", "PREFIX=/opt/peregrine")
    assert (tmp_path / "opt/peregrine/etc/peregrine/peregrine.conf").exists()
    unit = unit_settings(tmp_path / "opt/peregrine/lib/systemd/system/peregrine.service")
    assert unit["ExecStart"] == [
        "/opt/peregrine/bin/peregrine /opt/peregrine/etc/peregrine/peregrine.conf --supervised systemd --daemonize no"]
    assert "/opt/peregrine/bin/peregrine" in unit["ExecPaths"][0]


def test_make_install_keeps_an_edited_config(tmp_path):
    conf = tmp_path / "etc/peregrine/peregrine.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("port 7000\n")
    assert "keeping" in make("install", f"DESTDIR={tmp_path}", "PREFIX=/usr")
    assert conf.read_text() == "port 7000\n"


def test_unit_is_redis_servers_shape():
    unit = unit_settings(UNIT)
    assert unit["Type"] == ["notify"]
    assert unit["ExecStart"] == ["/usr/bin/peregrine /etc/peregrine/peregrine.conf --supervised systemd --daemonize no"]
    assert unit["LimitNOFILE"] == ["65535"]
    assert unit["User"] == ["peregrine"] and unit["WorkingDirectory"] == ["/var/lib/peregrine"]
    assert unit["ProtectSystem"] == ["strict"]
    assert {"-/var/lib/peregrine", "-/var/log/peregrine"} <= set(unit["ReadWritePaths"])
    for key in ("NoNewPrivileges", "PrivateTmp", "ProtectHome", "PrivateDevices", "RestrictNamespaces",
                "RestrictSUIDSGID", "ProtectKernelTunables", "LockPersonality", "MemoryDenyWriteExecute"):
        assert unit[key] == ["true"], key
    assert unit["RestrictAddressFamilies"] == ["AF_INET AF_INET6 AF_UNIX"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_unit_verifies(tmp_path):
    """systemd-analyze verify finds nothing to say: every key known, every
    value parsed. (It checks that ExecStart's program exists, so the copy
    checked points at this run's binary.)"""
    unit = tmp_path / "peregrine.service"
    unit.write_text(open(UNIT).read().replace("/usr/bin/peregrine", os.path.abspath(PEREGRINE_BIN)))
    p = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr.strip() == "" and p.stdout.strip() == "", p.stderr + p.stdout


@pytest.fixture(scope="module")
def deb():
    if shutil.which("dpkg-deb") is None or shutil.which("dpkg-shlibdeps") is None:
        pytest.skip("dpkg-deb or dpkg-shlibdeps is not installed (Debian's dpkg-dev)")
    if sanitized(PEREGRINE_BIN):
        pytest.skip("packaging is checked on the release build only")
    path = make("deb").strip().splitlines()[-1]
    assert path.endswith(".deb") and os.path.exists(path)
    return path


def dpkg_deb(*args):
    return subprocess.run(["dpkg-deb", *args], capture_output=True, text=True, check=True, timeout=60).stdout


def test_deb_control(deb):
    fields = dict(re.findall(r"^ ?([A-Za-z-]+): (.*)$", dpkg_deb("--info", deb), re.M))
    assert fields["Package"] == "peregrine"
    version = subprocess.run([PEREGRINE_BIN, "--version"], capture_output=True, text=True).stdout
    assert f"v={fields['Version']} " in version
    depends = fields["Depends"]
    for lib in ("libc6", "libssl3", "libstdc++6", "libmimalloc2.0", "liblzf1", "adduser"):
        assert lib in depends, depends
    assert dpkg_deb("--field", deb, "Architecture").strip() == subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
    listing = dpkg_deb("--info", deb)
    for script in ("postinst", "prerm", "postrm", "conffiles"):
        assert script in listing


def test_deb_contents(deb):
    listing = dpkg_deb("--contents", deb)
    entries = {line.split()[5].lstrip("."): line for line in listing.splitlines()}
    for path in ("/usr/bin/peregrine", "/etc/peregrine/peregrine.conf", "/lib/systemd/system/peregrine.service",
                 "/var/lib/peregrine/", "/var/log/peregrine/"):
        assert path in entries, path
    assert entries["/usr/bin/peregrine-check-rdb"].split()[-1] == "peregrine"
    assert entries["/usr/bin/peregrine-check-aof"].split()[-1] == "peregrine"
    assert all(" root/root " in line for line in entries.values())
    # Stripped: a tenth of the build's size or less.
    size = int(entries["/usr/bin/peregrine"].split()[2])
    assert size < 20 * 1024 * 1024
    conffiles = subprocess.run(f"dpkg-deb --ctrl-tarfile {shlex.quote(deb)} | tar -xO ./conffiles", shell=True,
                               capture_output=True, text=True, check=True).stdout
    assert conffiles.split() == ["/etc/peregrine/peregrine.conf"]


def wait_notify(sock, want, deadline):
    """Datagrams from the server on our NOTIFY_SOCKET until one has `want`."""
    seen = []
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            msg = sock.recv(4096).decode()
        except socket.timeout:
            break
        seen.append(msg)
        if want in msg.split("\n"):
            return seen
    raise AssertionError(f"no {want} from the server; got {seen}")


@contextlib.contextmanager
def package_installed(deb):
    """The package installed on this machine with dpkg -i; purged after,
    with what a purge keeps on purpose (the data, the user) too: this
    machine was not meant to keep a Peregrine service."""
    if os.geteuid() != 0:
        pytest.skip("dpkg -i needs root")
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "peregrine"], capture_output=True, text=True)
    if "installed" in status.stdout:
        pytest.skip("a peregrine package is installed on this machine already; not touching it")
    had_user = subprocess.run(["getent", "passwd", "peregrine"], capture_output=True).returncode == 0
    try:
        p = subprocess.run(["dpkg", "-i", deb], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        yield
    finally:
        subprocess.run(["dpkg", "--purge", "peregrine"], capture_output=True, timeout=120)
        shutil.rmtree("/var/lib/peregrine", ignore_errors=True)
        if not had_user:
            subprocess.run(["deluser", "--system", "peregrine"], capture_output=True)
            subprocess.run(["delgroup", "--system", "peregrine"], capture_output=True)


@RELEASE_ONLY
def test_deb_installs_and_starts_as_its_unit_would(deb, tmp_path):
    with package_installed(deb):
        started_as_its_unit_would(tmp_path)


def started_as_its_unit_would(tmp_path):
    user = pwd.getpwnam("peregrine")
    assert user.pw_dir == "/var/lib/peregrine" and user.pw_shell.endswith("nologin")
    for path, mode in (("/var/lib/peregrine", 0o750), ("/var/log/peregrine", 0o750),
                       ("/etc/peregrine/peregrine.conf", 0o640)):
        st = os.stat(path)
        assert (st.st_uid, st.st_mode & 0o7777) == (user.pw_uid, mode), path
    assert os.path.islink("/usr/bin/peregrine-check-aof")
    # The unit's command, as its user, in its working directory, with a
    # NOTIFY_SOCKET of ours: READY=1 comes once the server serves.
    unit = unit_settings("/lib/systemd/system/peregrine.service")
    port = free_port()
    cmd = shlex.split(unit["ExecStart"][0]) + ["--port", str(port)]
    # (In the abstract namespace: a path under the test's private temporary
    # directory would be out of the peregrine user's reach.)
    name = f"peregrine-test-{os.getpid()}-{port}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    env = dict(os.environ, NOTIFY_SOCKET="@" + name)
    drop = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
    log = open(tmp_path / "server.log", "w+b")
    proc = subprocess.Popen(drop + cmd, cwd=unit["WorkingDirectory"][0], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_notify(sock, "READY=1", time.monotonic() + 10)
        c = redis.Redis(port=port, socket_timeout=10, retry=NO_RETRY, decode_responses=True)
        assert c.ping()
        assert c.config_get("dir")["dir"] == "/var/lib/peregrine"
        assert c.config_get("bind")["bind"] == "127.0.0.1 -::1"
        c.set("k", "v")
        c.save()  # the data directory is the user's to write
        assert os.stat("/var/lib/peregrine/dump.rdb").st_uid == user.pw_uid
        try:
            c.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        wait_notify(sock, "STOPPING=1", time.monotonic() + 10)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        sock.close()
        log.seek(0)
        print(log.read().decode(errors="replace"))
        log.close()


@RELEASE_ONLY
def test_deb_purge_leaves_nothing_behind(deb):
    with package_installed(deb):
        p = subprocess.run(["dpkg", "--purge", "peregrine"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        for path in ("/usr/bin/peregrine", "/usr/bin/peregrine-check-rdb", "/etc/peregrine", "/var/log/peregrine",
                     "/lib/systemd/system/peregrine.service",
                     "/etc/systemd/system/multi-user.target.wants/peregrine.service"):
            assert not os.path.lexists(path), path
        overrides = subprocess.run(["dpkg-statoverride", "--list"], capture_output=True, text=True).stdout
        assert "peregrine" not in overrides
