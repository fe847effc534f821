# The container image (Containerfile, `make image`; issue #41,
# docs/shipping.md): built once per session from this run's binary, then
# (1) its filesystem is checked by mounting it: the server, its libraries
# and loader, the user, and the server started from that root answers
# PING; (2) where this machine lets containers run, it runs: PING through a
# published port, data kept on the volume across a restart, flags and
# $PEREGRINE_EXTRA_FLAGS passed through, the health check, the size and the
# start time. What the machine forbids is skipped with its own error text.
import json
import os
import resource
import shutil
import subprocess
import time
import uuid

import pytest
import redis

from conftest import IS_REDIS, PEREGRINE_BIN, ROOT, free_port
from helpers import NO_RETRY
from test_shipping_install import BUILD, make, sanitized

pytestmark = [
    pytest.mark.skipif(IS_REDIS, reason="Peregrine's own image"),
    pytest.mark.skipif(sanitized(PEREGRINE_BIN), reason="the image is checked on the release build only"),
]

IMAGE = "localhost/peregrine:test"
MAX_BYTES = 40 * 1000 * 1000
MAX_START_SECONDS = 1.0


def podman(*args, check=True, timeout=120):
    p = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, f"podman {' '.join(args)}:\n{p.stdout}\n{p.stderr}"
    return p


@pytest.fixture(scope="module")
def image():
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (make test-deps or make image installs it)")
    if os.geteuid() != 0:
        pytest.skip("building and mounting images here needs root (rootless podman is not set up)")
    make("image", f"IMAGE={IMAGE}")
    yield IMAGE
    podman("rmi", "-f", IMAGE, check=False)


def inspect(image):
    return json.loads(podman("image", "inspect", image).stdout)[0]


def test_image_is_small(image):
    size = inspect(image)["Size"]
    print(f"image size: {size} bytes ({size / 1e6:.1f} MB)")
    assert size < MAX_BYTES


def test_image_follows_the_redis_images_conventions(image):
    info = inspect(image)
    config = info["Config"]
    assert "6379/tcp" in config["ExposedPorts"]
    assert "/data" in config["Volumes"]
    assert config["WorkingDir"] == "/data"
    assert config["Entrypoint"] == ["/usr/local/bin/docker-entrypoint.sh"]
    assert config["Cmd"] == ["peregrine"]
    # (Podman keeps it only in the docker format, which `make image` asks for.)
    assert info["Healthcheck"]["Test"] == ["CMD", "/usr/local/bin/peregrine-healthcheck"]


@pytest.fixture(scope="module")
def rootfs(image):
    p = podman("image", "mount", image, check=False)
    if p.returncode != 0:
        pytest.skip(f"podman image mount failed here: {p.stderr.strip()}")
    yield p.stdout.strip()
    podman("image", "unmount", image, check=False)


def test_image_filesystem_holds_the_server_and_what_it_loads(rootfs):
    for path in ("usr/bin/peregrine", "bin/bash", "bin/sh", "bin/chown", "usr/bin/setpriv",
                 "usr/local/bin/docker-entrypoint.sh", "usr/local/bin/peregrine-healthcheck", "lib64/ld-linux-x86-64.so.2"):
        assert os.access(os.path.join(rootfs, path), os.X_OK), path
    passwd = open(os.path.join(rootfs, "etc/passwd")).read()
    assert "\nperegrine:x:999:999:" in passwd
    assert os.stat(os.path.join(rootfs, "data")).st_uid == 999
    # Every library the server loads is there, by the path ldd gave on the
    # build machine.
    ldd = subprocess.run(["ldd", PEREGRINE_BIN], capture_output=True, text=True, check=True).stdout
    libs = [w for line in ldd.splitlines() for w in line.split() if w.startswith("/")]
    assert libs and all(os.path.exists(os.path.join(rootfs, lib.lstrip("/"))) for lib in libs), libs


def ping_server(cmd, port, **kw):
    """Starts `cmd`, waits for PONG on `port`, stops it; returns the seconds to PONG."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)
    try:
        c = redis.Redis(port=port, socket_timeout=5, retry=NO_RETRY)
        while True:
            try:
                assert c.ping()
                return time.monotonic() - t0
            except redis.ConnectionError:
                assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
                assert time.monotonic() - t0 < 10, "no PONG within 10 s"
                time.sleep(0.01)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_server_runs_from_the_image_root(rootfs, tmp_path):
    """The server started from the unpacked image, chrooted into it, with
    only the image's libraries and loader."""
    port = free_port()
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", "/tmp"]
    ping_server(["chroot", rootfs, "/usr/bin/peregrine", *args], port)
    # And through the image's loader by hand, outside the chroot.
    lib = ":".join(os.path.join(rootfs, d) for d in ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu")
                   if os.path.isdir(os.path.join(rootfs, d)))
    args[-1] = str(tmp_path)
    loader = os.path.join(rootfs, "lib64/ld-linux-x86-64.so.2")
    ping_server([loader, "--library-path", lib, os.path.join(rootfs, "usr/bin/peregrine"), *args], port)


def run_options():
    """Ways to run a container, tried in order: podman's defaults, then
    with limits no higher than this process has (by default podman raises
    the container's, which needs CAP_SYS_RESOURCE; podman itself runs with
    at most 32768 processes), then also with runc (crun refuses hybrid
    cgroup v1/v2 hierarchies)."""
    limits = []
    for flag, res, cap in (("nofile", resource.RLIMIT_NOFILE, 65536), ("nproc", resource.RLIMIT_NPROC, 4096)):
        hard = resource.getrlimit(res)[1]
        n = cap if hard == resource.RLIM_INFINITY else min(hard, cap)
        limits += ["--ulimit", f"{flag}={n}:{n}"]
    options = [[], limits]
    if shutil.which("runc"):
        options.append(limits + ["--runtime", "runc"])
    return options


class Container:
    def __init__(self, image, volume, options, args=(), env=()):
        self.name = f"peregrine-test-{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        runtime = []
        if "--runtime" in options:
            i = options.index("--runtime")
            runtime, options = options[i:i + 2], options[:i] + options[i + 2:]
        self.runtime = runtime
        cmd = ["podman", *runtime, "run", "-d", "--name", self.name, "-p", f"127.0.0.1:{self.port}:6379",
               "-v", f"{volume}:/data", *options]
        for e in env:
            cmd += ["-e", e]
        t0 = time.monotonic()
        p = subprocess.run(cmd + [image, *args], capture_output=True, text=True, timeout=60)
        # (Podman's complaints about health check timers without systemd
        # are noise; its "Error: ..." line is the reason.)
        reasons = [line for line in p.stderr.splitlines() if line.startswith("Error")]
        self.error = ("\n".join(reasons) or p.stderr.strip()) if p.returncode != 0 else None
        self.client = redis.Redis(port=self.port, socket_timeout=5, retry=NO_RETRY, decode_responses=True)
        self.start_seconds = None
        while self.error is None:
            try:
                if self.client.ping():
                    self.start_seconds = time.monotonic() - t0
                    break
            except redis.ConnectionError:
                if time.monotonic() - t0 > 10:
                    self.error = "no PONG within 10 s: " + podman("logs", self.name, check=False).stdout
                time.sleep(0.01)

    def stop(self):
        podman(*self.runtime, "stop", "-t", "10", self.name, check=False)
        podman(*self.runtime, "rm", "-f", "-v", self.name, check=False)


@pytest.fixture(scope="module")
def running(image):
    """How containers run on this machine (the options that worked), and a
    named volume for the tests; skips with the error when none works."""
    volume = f"peregrine-test-{uuid.uuid4().hex[:8]}"
    podman("volume", "create", volume)
    errors = []
    try:
        for options in run_options():
            c = Container(image, volume, options)
            c.stop()
            if c.error is None:
                yield options, volume
                break
            errors.append(f"podman run {' '.join(options)}: {c.error}")
        else:
            pytest.skip("this machine forbids running containers: " + " | ".join(errors))
    finally:
        podman("volume", "rm", "-f", volume, check=False)


def test_container_starts_fast_and_keeps_its_data(image, running):
    options, volume = running
    c = Container(image, volume, options)
    try:
        assert c.error is None, c.error
        print(f"container start to PONG: {c.start_seconds:.3f} s (podman run {' '.join(options)})")
        assert c.start_seconds < MAX_START_SECONDS
        assert c.client.set("survives", "a restart")
        # The server listens on every interface with protected mode off.
        assert c.client.config_get("bind")["bind"] == "0.0.0.0 -::"
        assert c.client.config_get("protected-mode")["protected-mode"] == "no"
        assert c.client.config_get("dir")["dir"] == "/data"
        top = podman(*c.runtime, "top", c.name, "user", "args").stdout
        assert "peregrine" in top and "/usr/bin/peregrine" in top, top
        assert podman(*c.runtime, "healthcheck", "run", c.name, check=False).returncode == 0
    finally:
        c.stop()  # SIGTERM: the server saves to /data on its way out
    # The same volume, with a flag and extra flags passed through.
    c = Container(image, volume, options, args=["--hz", "20"], env=["PEREGRINE_EXTRA_FLAGS=--maxmemory 10mb"])
    try:
        assert c.error is None, c.error
        assert c.client.get("survives") == "a restart"
        assert c.client.config_get("hz")["hz"] == "20"
        assert c.client.config_get("maxmemory")["maxmemory"] == str(10 * 1024 * 1024)
        mountpoint = podman("volume", "inspect", volume, "--format", "{{.Mountpoint}}").stdout.strip()
        assert os.stat(os.path.join(mountpoint, "dump.rdb")).st_uid == 999
    finally:
        c.stop()


def test_container_runs_other_commands_as_given(image, running):
    options, _ = running
    i = options.index("--runtime") if "--runtime" in options else len(options)
    runtime, opts = options[i:i + 2], options[:i] + options[i + 2:]
    p = podman(*runtime, "run", "--rm", *opts, image, "peregrine", "--version", check=False)
    assert p.returncode == 0 and p.stdout.startswith("Peregrine server v="), p.stdout + p.stderr
