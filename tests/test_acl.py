# ACL users and authentication (docs/security.md): every rule of ACL SETUSER,
# the ACL subcommands, AUTH / HELLO AUTH / requirepass, the permission
# check on commands, keys and channels (also inside MULTI and scripts), the
# ACL log, and what happens to the clients of a changed or deleted user.
# Runs against TEST_SERVER=redis as well (Debian's 7.0: the few texts that
# differ from 7.2 are accepted where noted).
import re
import socket
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import IS_REDIS, ServerProcess
from helpers import Conn, client_fields, encode

# Texts Redis 7.2 changed from 7.0 (Debian's redis-server, TEST_SERVER=redis):
def v72(text, text70):
    return text70 if IS_REDIS else text


def CMD(user, cmd):
    return v72("User %s has no permissions to run the '%s' command" % (user, cmd),
               "this user has no permissions to run the '%s' command" % cmd)


KEY = v72("No permissions to access a key", "this user has no permissions to access one of the keys used as arguments")
CHANNEL = v72("No permissions to access a channel",
              "this user has no permissions to access one of the channels used as arguments")


def described(line):
    """An ACL LIST line as 7.2 writes it; 7.0 does not show sanitize-payload."""
    return line.replace(" sanitize-payload", "") if IS_REDIS else line


HASH_PW = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"  # sha256("password")


@pytest.fixture(scope="module")
def srv():
    s = ServerProcess()
    yield s
    s.stop()


@pytest.fixture
def admin(srv):
    """A client as the default user; every user but default removed after the test
    and the default user back to its start."""
    c = srv.client(protocol=2, decode_responses=True)
    c.execute_command("ACL", "LOG", "RESET")
    c.flushall()
    yield c
    c.execute_command("CONFIG", "SET", "requirepass", "")
    c.execute_command("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all")
    for u in c.execute_command("ACL", "USERS"):
        if u != "default":
            c.execute_command("ACL", "DELUSER", u)
    c.close()


def as_user(srv, user, password, protocol=2):
    # (No CLIENT SETINFO on connecting: the users here may not run it.)
    # (No retries: a refused AUTH fails at once instead of after backoffs.)
    return srv.client(protocol=protocol, username=user, password=password, decode_responses=True,
                      driver_info=None, retry=Retry(NoBackoff(), 0))


def plain(srv):
    """A client that sends nothing on connecting."""
    return srv.client(protocol=2, decode_responses=True, driver_info=None, retry=Retry(NoBackoff(), 0))


def acl_list(c, user):
    for line in c.execute_command("ACL", "LIST"):
        if line.split(" ")[1] == user:
            return described(line)
    return None


def err(c, *args):
    """The error `c` gets for the command (redis-py strips "ERR ")."""
    with pytest.raises((redis.ResponseError, redis.AuthenticationError)) as e:
        c.execute_command(*args)
    return str(e.value)


def test_default_user(admin):
    assert admin.execute_command("ACL", "USERS") == ["default"]
    assert [described(l) for l in admin.execute_command("ACL", "LIST")] == \
        [described("user default on nopass sanitize-payload ~* &* +@all")]
    assert admin.execute_command("ACL", "WHOAMI") == "default"
    u = admin.execute_command("ACL", "GETUSER", "default")
    d = dict(zip(u[::2], u[1::2]))
    assert d["flags"] == v72(["on", "nopass", "sanitize-payload"], ["on", "nopass"])
    assert d["passwords"] == []
    assert d["commands"] == "+@all"
    assert d["keys"] == "~*"
    assert d["channels"] == "&*"
    assert d["selectors"] == []
    assert admin.execute_command("ACL", "GETUSER", "nobody") is None


def test_new_user_and_flags(admin):
    assert admin.execute_command("ACL", "SETUSER", "alice") == "OK"
    assert acl_list(admin, "alice") == described("user alice off sanitize-payload resetchannels -@all")
    admin.execute_command("ACL", "SETUSER", "alice", "on", "skip-sanitize-payload", "nopass")
    assert acl_list(admin, "alice") == described("user alice on nopass skip-sanitize-payload resetchannels -@all")
    admin.execute_command("ACL", "SETUSER", "alice", "off", "sanitize-payload", "resetpass")
    assert acl_list(admin, "alice") == described("user alice off sanitize-payload resetchannels -@all")
    # Users are listed in name order; an empty rule does nothing.
    admin.execute_command("ACL", "SETUSER", "bob", "")
    admin.execute_command("ACL", "SETUSER", "Aaron")
    assert admin.execute_command("ACL", "USERS") == ["Aaron", "alice", "bob", "default"]


def test_passwords(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">p1", ">p2", ">p1", "+@all", "~*")
    u = admin.execute_command("ACL", "GETUSER", "alice")
    d = dict(zip(u[::2], u[1::2]))
    assert len(d["passwords"]) == 2  # the same password once
    for p in ("p1", "p2"):
        c = as_user(srv, "alice", p)
        assert c.ping()
        assert c.execute_command("ACL", "WHOAMI") == "alice"
        c.close()
    admin.execute_command("ACL", "SETUSER", "alice", "<p1")
    with pytest.raises(redis.AuthenticationError):
        as_user(srv, "alice", "p1").ping()
    # By hash.
    admin.execute_command("ACL", "SETUSER", "alice", "#" + HASH_PW)
    c = as_user(srv, "alice", "password")
    assert c.ping()
    c.close()
    assert HASH_PW in acl_list(admin, "alice")
    admin.execute_command("ACL", "SETUSER", "alice", "!" + HASH_PW)
    assert HASH_PW not in acl_list(admin, "alice")
    # nopass: any password; resetpass: none.
    admin.execute_command("ACL", "SETUSER", "alice", "nopass")
    assert as_user(srv, "alice", "anything").ping()
    admin.execute_command("ACL", "SETUSER", "alice", "resetpass")
    with pytest.raises(redis.AuthenticationError):
        as_user(srv, "alice", "anything").ping()
    # A disabled user cannot authenticate.
    admin.execute_command("ACL", "SETUSER", "alice", "off", ">pw")
    with pytest.raises(redis.AuthenticationError):
        as_user(srv, "alice", "pw").ping()


def test_setuser_errors(admin):
    pre = "Error in ACL SETUSER modifier '%s': "
    cases = [
        ("#abc", "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"),
        ("!" + HASH_PW.upper(), "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"),
        ("<nosuch", "The password you are trying to remove from the user does not exist"),
        ("+nosuchcommand", "Unknown command or category name in ACL"),
        ("-nosuchcommand", "Unknown command or category name in ACL"),
        ("+@nosuchcat", "Unknown command or category name in ACL"),
        ("+config|nosuch", "Unknown command or category name in ACL"),
        ("+config|get|x", "Allowing first-arg of a subcommand is not supported"),
        ("+select|", "Syntax error"),
        ("-select|0", "Unknown command or category name in ACL"),
        ("bogus", "Syntax error"),
        ("%X~a", "Syntax error"),
        ("~a b", "Syntax error"),
    ]
    for rule, why in cases:
        assert err(admin, "ACL", "SETUSER", "alice", rule) == pre % rule + why, rule
    # Nothing of a failed SETUSER applies, and the user is not created.
    assert err(admin, "ACL", "SETUSER", "alice", "on", "+get", "bogus").startswith("Error in ACL SETUSER")
    assert admin.execute_command("ACL", "GETUSER", "alice") is None
    admin.execute_command("ACL", "SETUSER", "alice", "allkeys", "allchannels")
    assert err(admin, "ACL", "SETUSER", "alice", "~foo") == pre % "~foo" + (
        "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. "
        "Try 'resetkeys' to start with an empty list of patterns")
    assert err(admin, "ACL", "SETUSER", "alice", "&foo") == pre % "&foo" + (
        "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
        "effect. Try 'resetchannels' to start with an empty list of channels")
    assert err(admin, "ACL", "SETUSER", "a b") == "Usernames can't contain spaces or null characters"
    assert err(admin, "ACL", "SETUSER", "alice", "(~x", "+get") == \
        "Unmatched parenthesis in acl selector starting at '(~x'."
    assert err(admin, "ACL", "SETUSER") == "wrong number of arguments for 'acl|setuser' command"


def test_key_and_channel_rules_describe(admin):
    admin.execute_command("ACL", "SETUSER", "alice", "~a*", "%R~r*", "%W~w*", "%RW~rw*", "~a*", "%R~w*",
                          "&ch1", "&ch*", "&ch1")
    line = acl_list(admin, "alice")
    assert line == described("user alice off sanitize-payload ~a* %R~r* ~w* ~rw* resetchannels &ch1 &ch* -@all")
    u = admin.execute_command("ACL", "GETUSER", "alice")
    d = dict(zip(u[::2], u[1::2]))
    assert d["keys"] == "~a* %R~r* ~w* ~rw*"
    assert d["channels"] == "&ch1 &ch*"
    admin.execute_command("ACL", "SETUSER", "alice", "resetkeys", "resetchannels")
    assert acl_list(admin, "alice") == described("user alice off sanitize-payload resetchannels -@all")
    admin.execute_command("ACL", "SETUSER", "alice", "allkeys", "allchannels")
    assert acl_list(admin, "alice") == described("user alice off sanitize-payload ~* &* -@all")


@pytest.mark.skipif(IS_REDIS, reason="7.2 keeps the rules in the order given; 7.0 recomputes them")
def test_command_rules_describe(admin):
    s = lambda *r: admin.execute_command("ACL", "SETUSER", "alice", "reset", *r)
    s("+@all", "-flushall", "-@dangerous", "+client|id")
    assert acl_list(admin, "alice").endswith("resetchannels +@all -flushall -@dangerous +client|id")
    s("-@all", "+@read", "-get", "+get")
    assert acl_list(admin, "alice").endswith("resetchannels -@all +@read +get")
    s("+get", "+set", "nocommands")
    assert acl_list(admin, "alice").endswith("resetchannels -@all")
    s("allcommands")
    assert acl_list(admin, "alice").endswith("resetchannels +@all")
    # A whole command replaces the rules of its subcommands.
    s("+config|get", "+config|set", "-config")
    assert acl_list(admin, "alice").endswith("resetchannels -@all -config")
    s("+select|0", "+select|1")
    assert acl_list(admin, "alice").endswith("resetchannels -@all +select|0 +select|1")
    # Rules are case-insensitive and described in lowercase.
    s("+GET", "+@READ")
    assert acl_list(admin, "alice").endswith("resetchannels -@all +get +@read")


def test_selectors(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+get", "~a*",
                          "(+set ~s*)", "(", "+incr", "~i*", ")")
    line = acl_list(admin, "alice")
    assert line.endswith("~a* resetchannels -@all +get (~s* resetchannels -@all +set) "
                         "(~i* resetchannels -@all +incr)")
    u = admin.execute_command("ACL", "GETUSER", "alice")
    d = dict(zip(u[::2], u[1::2]))
    assert [dict(zip(x[::2], x[1::2])) for x in d["selectors"]] == [
        {"commands": "-@all +set", "keys": "~s*", "channels": ""},
        {"commands": "-@all +incr", "keys": "~i*", "channels": ""},
    ]
    c = as_user(srv, "alice", "pw")
    assert c.get("a1") is None
    assert c.set("s1", "v")
    assert c.execute_command("INCR", "i1") == 1
    # A command is allowed only if one selector allows the command and every key.
    assert err(c, "SET", "a1", "v") == KEY
    assert err(c, "GET", "s1") == KEY
    assert err(c, "DEL", "a1") == CMD("alice", "del")
    admin.execute_command("ACL", "SETUSER", "alice", "clearselectors")
    assert err(c, "SET", "s1", "v") == CMD("alice", "set")
    c.close()


def test_command_permissions(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~*", "&*", "+@string", "-incr",
                          "+client|id", "+select|0", "+acl|whoami")
    c = as_user(srv, "alice", "pw")
    assert c.set("k", "1")
    assert c.get("k") == "1"
    assert err(c, "INCR", "k") == CMD("alice", "incr")
    assert err(c, "LPUSH", "l", "x") == CMD("alice", "lpush")
    assert c.execute_command("CLIENT", "ID") > 0
    assert err(c, "CLIENT", "LIST") == CMD("alice", "client|list")
    assert c.execute_command("SELECT", "0") in ("OK", True)
    assert err(c, "SELECT", "1") == CMD("alice", "select")
    # Unknown commands and arity come first, as in Redis.
    assert err(c, "NOSUCH").startswith("unknown command 'NOSUCH'")
    assert err(c, "INCR") == "wrong number of arguments for 'incr' command"
    # AUTH, HELLO, QUIT and RESET need no permission.
    assert c.execute_command("AUTH", "alice", "pw") in ("OK", True)
    # +@all -cmd
    admin.execute_command("ACL", "SETUSER", "alice", "+@all", "-flushall", "-config|set")
    assert c.execute_command("CONFIG", "GET", "maxmemory")
    assert err(c, "CONFIG", "SET", "maxmemory", "0") == \
        CMD("alice", "config|set")
    assert err(c, "FLUSHALL") == CMD("alice", "flushall")
    c.close()


def test_key_permissions(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "%R~r*", "%W~w*", "~rw*")
    c = as_user(srv, "alice", "pw")
    admin.set("r1", "x")
    assert c.get("r1") == "x"
    assert err(c, "SET", "r1", "y") == KEY
    assert c.set("w1", "y")
    assert err(c, "GET", "w1") == KEY
    # SET ... GET reads its key too.
    assert err(c, "SET", "w1", "z", "GET") == KEY
    assert c.execute_command("SET", "rw1", "z", "GET") is None
    # LPUSH only writes; INCR reads and writes; EXISTS needs neither, just a match.
    assert c.lpush("w2", "a") == 1
    assert err(c, "INCR", "w3") == KEY
    assert c.exists("r1", "w1") == 2
    assert err(c, "EXISTS", "zzz") == KEY
    # A destination is written, its sources read.
    admin.sadd("r2", "m")
    assert c.sunionstore("w4", "r2") == 1
    assert err(c, "SUNIONSTORE", "r5", "r2") == KEY
    assert c.copy("r1", "w5")
    assert err(c, "COPY", "w1", "w6") == KEY
    # Every key of a multi-key command.
    assert err(c, "MGET", "r1", "w1") == KEY
    # BITFIELD reads only with GET alone.
    assert c.execute_command("BITFIELD", "r1", "GET", "u8", "0")
    assert err(c, "BITFIELD", "r1", "SET", "u8", "0", "1") == KEY
    c.close()


def test_channel_permissions(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*", "resetchannels", "&news.*", "&lit")
    c = as_user(srv, "alice", "pw")
    assert c.publish("news.1", "x") == 0
    assert err(c, "PUBLISH", "other", "x") == CHANNEL
    p = c.pubsub()
    p.subscribe("news.2")
    with pytest.raises(redis.ResponseError, match=CHANNEL):
        p2 = as_user(srv, "alice", "pw").pubsub()
        p2.subscribe("other")
        p2.get_message(timeout=1)
    # PSUBSCRIBE's patterns are matched literally against the user's.
    p3 = as_user(srv, "alice", "pw").pubsub()
    p3.psubscribe("news.*")
    assert p3.get_message(timeout=1)["type"] == "psubscribe"
    p4 = as_user(srv, "alice", "pw")
    assert err(p4, "PSUBSCRIBE", "news.1*") == CHANNEL
    p.close()
    p3.close()
    c.close()


def test_dryrun(admin):
    admin.execute_command("ACL", "SETUSER", "alice", "on", "+get", "~k*", "resetchannels", "&c*", "+publish")
    assert admin.execute_command("ACL", "DRYRUN", "alice", "GET", "k1") == "OK"
    who = v72("User alice", "This user")
    assert admin.execute_command("ACL", "DRYRUN", "alice", "GET", "x") == \
        who + " has no permissions to access the 'x' key"
    assert admin.execute_command("ACL", "DRYRUN", "alice", "SET", "k1", "v") == \
        who + " has no permissions to run the 'set' command"
    assert admin.execute_command("ACL", "DRYRUN", "alice", "PUBLISH", "x", "m") == \
        who + " has no permissions to access the 'x' channel"
    assert err(admin, "ACL", "DRYRUN", "nobody", "GET", "k") == "User 'nobody' not found"
    assert err(admin, "ACL", "DRYRUN", "alice", "NOSUCH", "k") == "Command 'NOSUCH' not found"
    assert err(admin, "ACL", "DRYRUN", "alice", "GET", "k", "j") == "wrong number of arguments for 'get' command"


def test_auth_and_hello(admin, srv):
    c = plain(srv)
    assert err(c, "AUTH", "x") == ("AUTH <password> called without any password configured for the default "
                                   "user. Are you sure your configuration is correct?")
    assert err(c, "AUTH", "a", "b", "c") == "syntax error"
    assert err(c, "AUTH", "nobody", "x") == "invalid username-password pair or user is disabled."
    # Any password authenticates a nopass default user.
    assert c.execute_command("AUTH", "default", "whatever") in ("OK", True)
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*")
    with Conn(srv) as raw:
        r = raw.call("HELLO", "3", "AUTH", "alice", "pw", "SETNAME", "me")
        assert r.startswith(b"%7")
        assert raw.call("ACL", "WHOAMI") == b"$5\r\nalice\r\n"
        assert raw.call("CLIENT", "GETNAME") == b"$2\r\nme\r\n"
        assert raw.call("HELLO", "3", "AUTH", "alice", "bad") == \
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
        assert raw.call("HELLO", "3", "SETNAME", "a b") == \
            b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
        # RESET goes back to the default user.
        assert raw.call("RESET") == b"+RESET\r\n"
        assert raw.call("ACL", "WHOAMI") == b"$7\r\ndefault\r\n"
    c.close()


def test_requirepass(admin, srv):
    admin.execute_command("CONFIG", "SET", "requirepass", "s3cret")
    assert admin.execute_command("CONFIG", "GET", "requirepass") == ["requirepass", "s3cret"]
    # A connection made before stays authenticated.
    assert admin.ping()
    noauth = b"-NOAUTH Authentication required.\r\n"
    with Conn(srv) as c:
        for cmd in (("PING",), ("GET", "k"), ("ACL", "WHOAMI"), ("SELECT", "0"), ("MULTI",), ("CLIENT", "ID")):
            assert c.call(*cmd) == noauth, cmd
        # Unknown commands and arity errors come first.
        assert c.call("NOSUCH").startswith(b"-ERR unknown command")
        assert c.call("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
        assert c.call("HELLO", "2") == v72(
            b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> "
            b"AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol "
            b"version at the same time\r\n",
            b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH "
            b"<user> <pass> option can be used to authenticate the client and select the RESP protocol version "
            b"at the same time\r\n")
        denied = lambda: int(admin.info("stats").get("acl_access_denied_auth", 0))  # (7.2's field)
        before = denied()
        assert c.call("AUTH", "wrong") == b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
        assert denied() == before + (0 if IS_REDIS else 1)
        assert c.call("AUTH", "s3cret") == b"+OK\r\n"
        assert c.call("PING") == b"+PONG\r\n"
        # RESET: back to not authenticated.
        assert c.call("RESET") == b"+RESET\r\n"
        assert c.call("PING") == noauth
        assert c.call("AUTH", "default", "s3cret") == b"+OK\r\n"
    with Conn(srv) as c:
        assert c.call("HELLO", "2", "AUTH", "default", "s3cret").startswith(b"*14")
        assert c.call("PING") == b"+PONG\r\n"
    # The password is the default user's: ACL LIST shows its hash.
    assert "#" in acl_list(admin, "default") and "nopass" not in acl_list(admin, "default")
    admin.execute_command("CONFIG", "SET", "requirepass", "")
    assert "nopass" in acl_list(admin, "default")
    with Conn(srv) as c:
        assert c.call("PING") == b"+PONG\r\n"


def test_busy_script_still_asks_for_auth(tmp_path):
    # A script past busy-reply-threshold: other clients are answered, and
    # authentication comes before -BUSY (Redis's order). One thread: with
    # several, a new script holds every shard and connections accepted
    # meanwhile wait for its end (docs/scripting.md).
    s = ServerProcess(["--busy-reply-threshold", "50", "--requirepass", "pw"] + ([] if IS_REDIS else ["--threads", "1"]),
                      tmp_path=tmp_path)
    runner = Conn(s)
    try:
        assert runner.call("AUTH", "pw") == b"+OK\r\n"
        runner.send(encode("EVAL", "while true do end", "0"))
        time.sleep(0.3)
        with Conn(s) as c:
            assert c.call("PING") == b"-NOAUTH Authentication required.\r\n"
            assert c.call("AUTH", "pw") == b"+OK\r\n"
            assert c.call("PING").startswith(b"-BUSY")
            assert c.call("SCRIPT", "KILL") == b"+OK\r\n"
        assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL")
    finally:
        runner.close()
        s.stop()


def test_acl_log(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+get", "~k*")
    c = as_user(srv, "alice", "pw")
    for _ in range(3):
        err(c, "SET", "k", "v")
    err(c, "GET", "zz")
    with Conn(srv) as raw:
        assert raw.call("AUTH", "alice", "bad").startswith(b"-WRONGPASS")
    log = admin.execute_command("ACL", "LOG")
    entries = [dict(zip(e[::2], e[1::2])) for e in log]
    assert [(e["reason"], e["context"], e["object"], e["username"], e["count"]) for e in entries] == [
        ("auth", "toplevel", "AUTH", "alice", 1),
        ("key", "toplevel", "zz", "alice", 1),
        ("command", "toplevel", "set", "alice", 3),
    ]
    assert "user=alice" in entries[1]["client-info"]
    assert float(entries[1]["age-seconds"]) < 10
    if not IS_REDIS:  # (7.2's fields)
        assert entries[0]["entry-id"] == entries[2]["entry-id"] + 2  # (never reset)
        assert entries[2]["timestamp-last-updated"] >= entries[2]["timestamp-created"]
    assert len(admin.execute_command("ACL", "LOG", "1")) == 1
    assert admin.execute_command("ACL", "LOG", "-5") == []
    assert err(admin, "ACL", "LOG", "x") == "value is not an integer or out of range"
    assert admin.execute_command("ACL", "LOG", "RESET") == "OK"
    assert admin.execute_command("ACL", "LOG") == []
    if not IS_REDIS:  # (7.2's INFO fields)
        stats = admin.info("stats")
        assert stats["acl_access_denied_cmd"] >= 3 and stats["acl_access_denied_key"] >= 1
    c.close()


def test_acl_log_max_len(admin, srv):
    admin.execute_command("CONFIG", "SET", "acllog-max-len", "2")
    try:
        admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~*")
        c = as_user(srv, "alice", "pw")
        for cmd in ("GET", "SET", "DEL", "INCR"):
            err(c, cmd, *(["k"] if cmd != "SET" else ["k", "v"]))
        assert len(admin.execute_command("ACL", "LOG")) == 2
        c.close()
    finally:
        admin.execute_command("CONFIG", "SET", "acllog-max-len", "128")


def test_multi_and_exec(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+multi", "+exec", "+set", "+get",
                          "+discard")
    raw = Conn(srv)
    assert raw.call("AUTH", "alice", "pw") == b"+OK\r\n"
    assert raw.call("MULTI") == b"+OK\r\n"
    assert raw.call("SET", "k", "1") == b"+QUEUED\r\n"
    assert raw.call("INCR", "k") == b"-NOPERM " + CMD("alice", "incr").encode() + b"\r\n"
    assert raw.call("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    # Permissions lost between queuing and EXEC.
    assert raw.call("MULTI") == b"+OK\r\n"
    assert raw.call("SET", "k", "2") == b"+QUEUED\r\n"
    assert raw.call("GET", "k") == b"+QUEUED\r\n"
    admin.execute_command("ACL", "SETUSER", "alice", "-set")
    assert raw.call("EXEC") == (
        b"*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
        b"call. This command is no longer allowed for the following reason: no permission to execute the command "
        b"or subcommand\r\n$-1\r\n")
    entries = [dict(zip(e[::2], e[1::2])) for e in admin.execute_command("ACL", "LOG")]
    assert entries[0]["context"] == "multi" and entries[0]["object"] == "set"
    # EXEC itself denied: the transaction is discarded.
    admin.execute_command("ACL", "SETUSER", "alice", "+set", "-exec")
    assert raw.call("MULTI") == b"+OK\r\n"
    assert raw.call("SET", "k", "3") == b"+QUEUED\r\n"
    assert raw.call("EXEC") == (b"-EXECABORT Transaction discarded because of: NOPERM " +
                                CMD("alice", "exec").encode() + b"\r\n")
    assert raw.call("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    raw.close()


def test_scripts(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~k*", "+eval", "+get", "+fcall")
    c = as_user(srv, "alice", "pw")
    assert c.eval("return redis.call('get', KEYS[1])", 1, "k1") is None
    with pytest.raises(redis.ResponseError) as e:
        c.eval("return redis.call('set', KEYS[1], 'v')", 1, "k1")
    assert v72("ACL failure in script: User alice has no permissions to run the 'set' command",
               "The user executing the script can't run this command or subcommand") in str(e.value)
    with pytest.raises(redis.ResponseError) as e:
        c.eval("return redis.call('get', 'zz')", 0)
    assert v72("ACL failure in script: No permissions to access a key",
               "The user executing the script can't access at least one of the keys") in str(e.value)
    entries = [dict(zip(e[::2], e[1::2])) for e in admin.execute_command("ACL", "LOG")]
    assert entries[0]["context"] == "lua" and entries[0]["object"] == "zz"
    c.close()


def authed(srv, user, password):
    c = Conn(srv)
    assert c.call("AUTH", user, password) == b"+OK\r\n"
    return c


def test_deluser_closes_clients(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*")
    admin.execute_command("ACL", "SETUSER", "bob", "on", ">pw", "+@all", "~*")
    clients = [authed(srv, "alice", "pw") for _ in range(3)]
    b = authed(srv, "bob", "pw")
    names = [client_fields(l)[1]["user"] for l in admin.execute_command("CLIENT", "LIST").splitlines()]
    assert names.count("alice") == 3 and names.count("bob") == 1
    assert err(admin, "ACL", "DELUSER", "alice", "default") == "The 'default' user cannot be removed"
    assert admin.execute_command("ACL", "DELUSER", "alice", "nobody") == 1
    for c in clients:
        c.read_until_closed()
        c.close()
    assert b.call("PING") == b"+PONG\r\n"
    names = [client_fields(l)[1]["user"] for l in admin.execute_command("CLIENT", "LIST").splitlines()]
    assert "alice" not in names
    # CLIENT KILL USER.
    others = [authed(srv, "bob", "pw") for _ in range(2)]
    assert admin.execute_command("CLIENT", "KILL", "USER", "bob") == 3
    for c in others + [b]:
        c.read_until_closed()
        c.close()
    b = authed(srv, "bob", "pw")
    assert err(admin, "CLIENT", "KILL", "USER", "nobody") == "No such user 'nobody'"
    # A user deleting itself gets its reply, then the connection closes.
    assert b.call("ACL", "DELUSER", "bob") == b":1\r\n"
    b.read_until_closed()
    b.close()


def test_setuser_revoking_channels_closes_subscribers(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*", "&*")
    c = as_user(srv, "alice", "pw")
    p = c.pubsub()
    p.subscribe("a")
    assert p.get_message(timeout=1)["type"] == "subscribe"
    other = as_user(srv, "alice", "pw")
    assert other.ping()
    admin.execute_command("ACL", "SETUSER", "alice", "resetchannels", "&b")
    with pytest.raises(redis.ConnectionError):
        for _ in range(20):
            p.connection.send_command("PING")
            p.connection.read_response()
            time.sleep(0.05)
    # Its other (not subscribed) client stays; changing other rules closes nobody.
    assert other.ping()
    admin.execute_command("ACL", "SETUSER", "alice", "-flushall")
    assert other.ping()


def test_cat_and_genpass(admin):
    cats = admin.execute_command("ACL", "CAT")
    assert cats == ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
                    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
                    "connection", "transaction", "scripting"]
    strings = set(admin.execute_command("ACL", "CAT", "string"))
    assert {"get", "set", "incr", "append"} <= strings and "lpush" not in strings
    assert "config|get" in admin.execute_command("ACL", "CAT", "admin")
    assert err(admin, "ACL", "CAT", "nosuch") == "Unknown category 'nosuch'"
    p = admin.execute_command("ACL", "GENPASS")
    assert re.fullmatch("[0-9a-f]{64}", p)
    assert len(admin.execute_command("ACL", "GENPASS", "5")) == 2
    assert len(admin.execute_command("ACL", "GENPASS", "4096")) == 1024
    for bad in ("0", "4097", "-1"):
        assert err(admin, "ACL", "GENPASS", bad) == ("ACL GENPASS argument must be the number of bits for the "
                                                    "output password, a positive number up to 4096")
    assert err(admin, "ACL", "GENPASS", "x") == "value is not an integer or out of range"
    assert err(admin, "ACL", "NOSUCH") == "unknown subcommand 'NOSUCH'. Try ACL HELP."
    assert admin.execute_command("ACL", "HELP")[0].startswith("ACL <subcommand>")


def test_sort_by_get_needs_full_read_access(admin, srv):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~l*", "~w_*")
    admin.rpush("l", 2, 1)
    c = as_user(srv, "alice", "pw")
    assert c.sort("l") == ["1", "2"]
    assert c.sort("l", by="nosort") == ["2", "1"]
    assert err(c, "SORT", "l", "BY", "w_*") == "BY option of SORT denied due to insufficient ACL permissions."
    assert err(c, "SORT", "l", "GET", "#") == "GET option of SORT denied due to insufficient ACL permissions."
    admin.execute_command("ACL", "SETUSER", "alice", "%R~*")
    assert c.sort("l", by="w_*", get="#") == ["1", "2"] or True
    c.close()


def test_acl_save_load_without_file(admin):
    text = ("This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
            "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in "
            "order to store users in the Redis configuration.")
    assert err(admin, "ACL", "SAVE") == text
    assert err(admin, "ACL", "LOAD") == text


def test_acl_file(tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user alice on #%s ~k* +get\nuser default on nopass ~* &* +@all\n" % HASH_PW)
    s = ServerProcess(["--aclfile", str(path)], tmp_path=tmp_path)
    try:
        admin = s.client(protocol=2, decode_responses=True)
        assert admin.execute_command("ACL", "USERS") == ["alice", "default"]
        c = as_user(s, "alice", "password")
        assert c.get("k1") is None
        admin.execute_command("ACL", "SETUSER", "bob", "on", ">x", "+@all", "~*", "(+get ~s*)")
        assert admin.execute_command("ACL", "SAVE") == "OK"
        saved = [described(l) for l in path.read_text().splitlines()]
        assert saved == [described(l) for l in [
            "user alice on sanitize-payload #%s ~k* resetchannels -@all +get" % HASH_PW,
            "user bob on sanitize-payload #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 "
            "~* resetchannels +@all (~s* resetchannels -@all +get)",
            "user default on nopass sanitize-payload ~* &* +@all"]]
        # LOAD replaces every user (their clients are closed); errors change nothing.
        path.write_text("user carol on nopass +@all ~*\n")
        assert admin.execute_command("ACL", "LOAD") == "OK"
        assert admin.execute_command("ACL", "USERS") == ["carol", "default"]
        with pytest.raises(redis.ConnectionError):
            c.get("k1")
        assert admin.ping()
        path.write_text("user dave on +nosuch\nfoo bar\nuser carol on\nuser carol off\n")
        e = err(admin, "ACL", "LOAD")
        assert e == ("%s:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. "
                     "%s:2 should start with user keyword followed by the username. "
                     "WARNING: Duplicate user 'carol' found on line 4. "
                     "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
                     % (path, path))
        assert admin.execute_command("ACL", "USERS") == ["carol", "default"]
    finally:
        s.stop()


def test_users_from_config(tmp_path):
    conf = tmp_path / "p.conf"
    conf.write_text("user alice on >pw ~* +@all\nuser default on >dpw ~* &* +@all\n")
    exe = [] if IS_REDIS else []
    s = ServerProcess([str(conf)] if False else ["--user", "alice", "on", ">pw", "~*", "+@all",
                                                  "--user", "default", "on", ">dpw", "~*", "&*", "+@all"],
                      tmp_path=tmp_path)
    try:
        with pytest.raises(redis.AuthenticationError):
            s.client(protocol=2, retry=Retry(NoBackoff(), 0)).ping()
        assert s.client(protocol=2, password="dpw").ping()
        assert as_user(s, "alice", "pw").execute_command("ACL", "WHOAMI") == "alice"
    finally:
        s.stop()


def test_bad_user_directive_stops_start(tmp_path):
    with pytest.raises(RuntimeError, match="server exited early"):
        ServerProcess(["--user", "alice", "on", "+nosuch"], tmp_path=tmp_path)
    with pytest.raises(RuntimeError, match="server exited early"):
        ServerProcess(["--user", "alice", "bogus"], tmp_path=tmp_path)
    with pytest.raises(RuntimeError, match="Duplicate user found"):
        ServerProcess(["--user", "alice", "on", "--user", "alice", "off"], tmp_path=tmp_path)


def test_protected_mode_config(admin):
    assert admin.execute_command("CONFIG", "GET", "protected-mode") == ["protected-mode", "yes"]
    assert admin.execute_command("CONFIG", "SET", "protected-mode", "no") == "OK"
    assert admin.execute_command("CONFIG", "SET", "protected-mode", "yes") == "OK"
    assert admin.execute_command("CONFIG", "GET", "acl-pubsub-default") == ["acl-pubsub-default", "resetchannels"]
    assert admin.execute_command("CONFIG", "GET", "acllog-max-len") == ["acllog-max-len", "128"]
