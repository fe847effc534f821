# peregrine.conf, the commented config file shipped at the repo root and
# installed as /etc/peregrine/peregrine.conf (issue #41): it starts the
# server with exactly the built-in defaults, names every directive the
# server knows, and the defaults its commented lines show are the real ones.
# The servers here are started by hand, not through conftest's
# ServerProcess, whose own flags (--save "", --bind ...) would hide the
# very settings compared.
import os
import re
import shlex

import pytest

from conftest import IS_REDIS, ROOT, ServerProcess
from helpers import NO_RETRY

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Peregrine's own config file")

CONF = os.path.join(ROOT, "peregrine.conf")
# Overridden on the command line in every start here: a free port, a
# temporary working directory.
OVERRIDDEN = {"port", "dir"}
# Directives the shipped file sets to something else than the built-in
# default: none. (bind 127.0.0.1 -::1 and protected-mode yes, which a
# packaged install relies on, are the defaults already.)
DELIBERATE = set()
# Directives whose default depends on the machine (the worker count is the
# number of usable cores): their commented lines show an example instead.
MACHINE_DEPENDENT = {"threads", "io-threads"}
# Accepted but not listed by CONFIG GET * (Redis's hidden test hooks come
# only when named), and `user`, which CONFIG GET never shows.
HIDDEN = ["rdb-key-save-delay", "key-load-delay"]
NOT_IN_CONFIG_GET = {"user"}
DEFAULT_LINE = re.compile(r"^# ([a-z][a-z0-9_-]*) (.+)$")


class Started:
    """One server: `peregrine [file] --port P --dir D`, nothing else."""

    def __init__(self, tmp_path, conf=None, name="server", extra=()):
        self.dir = tmp_path / name
        self.dir.mkdir()
        self.server = ServerProcess(["--dir", str(self.dir), *extra], tmp_path=self.dir, kind="peregrine",
                                    config=conf, bare=True)
        self.client = self.server.client(protocol=2, decode_responses=True, retry=NO_RETRY)

    def config(self):
        values = self.client.config_get("*")
        for name in HIDDEN:
            values.update(self.client.config_get(name))
        return values

    def stop(self):
        self.server.stop()


def config_of(tmp_path, conf=None, name="server"):
    s = Started(tmp_path, conf, name)
    try:
        return s.config()
    finally:
        s.stop()


def parse(path):
    """(active, shown): the active lines as (name, args), and the commented
    lines that show a known directive's default, as (name, text)."""
    active, shown = [], []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            m = DEFAULT_LINE.match(line)
            if m:
                shown.append((m.group(1), m.group(2)))
            continue
        words = shlex.split(stripped)
        active.append((words[0].lower(), words[1:]))
    return active, shown


@pytest.fixture(scope="module")
def builtin(tmp_path_factory):
    """CONFIG GET * (and the hidden directives) of a server with no file."""
    return config_of(tmp_path_factory.mktemp("builtin"))


def known(builtin):
    return set(builtin) | NOT_IN_CONFIG_GET


def differences(got, want, skip):
    return {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if k not in skip and got.get(k) != want.get(k)}


def test_file_starts_the_server_with_the_builtin_defaults(builtin, tmp_path):
    got = config_of(tmp_path, CONF)
    assert differences(got, builtin, OVERRIDDEN | DELIBERATE) == {}
    assert got["port"] != builtin["port"]  # (each had its own)


def test_file_keeps_a_packaged_install_on_loopback(builtin):
    active = dict(parse(CONF)[0])
    assert active["bind"] == ["127.0.0.1", "-::1"]
    assert active["protected-mode"] == ["yes"]
    assert builtin["bind"] == "127.0.0.1 -::1" and builtin["protected-mode"] == "yes"


def test_every_directive_the_server_lists_is_in_the_file(builtin):
    active, shown = parse(CONF)
    named = {n for n, _ in active} | {n for n, _ in shown}
    missing = sorted(set(builtin) - named)
    assert missing == [], f"not in peregrine.conf: {missing}"


def test_every_active_line_is_a_known_directive(builtin):
    active, _ = parse(CONF)
    unknown = sorted({n for n, _ in active} - known(builtin))
    assert unknown == [], f"active lines the server does not know: {unknown}"
    # (And each directive is active at most once: a second line would
    # silently win over the first, save and client-output-buffer-limit aside.)
    names = [n for n, _ in active]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def test_commented_lines_show_the_real_defaults(builtin, tmp_path):
    """Uncommenting every `# directive value` line changes nothing (but the
    example worker count): the defaults the file shows are the server's."""
    names = known(builtin)
    out = []
    uncommented = 0
    for line in open(CONF, encoding="utf-8"):
        m = DEFAULT_LINE.match(line.rstrip("\n"))
        if m and m.group(1) in names:
            line = line[2:]
            uncommented += 1
        out.append(line)
    assert uncommented > 100
    every = tmp_path / "every-default.conf"
    every.write_text("".join(out))
    got = config_of(tmp_path, every)
    assert differences(got, builtin, OVERRIDDEN | MACHINE_DEPENDENT) == {}


def test_the_file_parses_where_the_package_puts_it(tmp_path):
    """A copy elsewhere (as /etc/peregrine/peregrine.conf) starts the same:
    nothing in it is relative to the source tree."""
    copy = tmp_path / "peregrine.conf"
    copy.write_bytes(open(CONF, "rb").read())
    s = Started(tmp_path, copy)
    try:
        assert s.client.set("k", "v") and s.client.get("k") == "v"
    finally:
        s.stop()
