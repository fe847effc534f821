# OBJECT ENCODING / REFCOUNT / HELP: the encodings Redis reports for strings.
import pytest
import redis


@pytest.fixture
def rc(r):
    return r


@pytest.mark.parametrize("value,encoding", [
    (b"123", b"int"),
    (b"-9223372036854775808", b"int"),
    (b"0123", b"embstr"),
    (b"12345678901234567890123", b"embstr"),
    (b"hello", b"embstr"),
    (b"x" * 15, b"embstr"),
    (b"x" * 16, b"embstr"),
    (b"x" * 44, b"embstr"),
    (b"x" * 45, b"raw"),
    (b"x" * 1000, b"raw"),
])
def test_object_encoding_after_set(rc, value, encoding):
    rc.set("k", value)
    assert rc.execute_command("OBJECT", "ENCODING", "k") == encoding
    assert rc.get("k") == value


def test_object_encoding_follows_writes(rc):
    rc.set("n", "41")
    assert rc.incr("n") == 42
    assert rc.execute_command("OBJECT", "ENCODING", "n") == b"int"
    rc.set("s", "abc")
    rc.append("s", "def")
    assert rc.execute_command("OBJECT", "ENCODING", "s") == b"raw"
    assert rc.get("s") == b"abcdef"
    rc.set("r", "abc")
    rc.setrange("r", 1, "Z")
    assert rc.execute_command("OBJECT", "ENCODING", "r") == b"raw"
    assert rc.get("r") == b"aZc"
    rc.set("i", "10")
    rc.append("i", "5")
    assert rc.get("i") == b"105"
    assert rc.incr("i") == 106
    assert rc.execute_command("OBJECT", "ENCODING", "i") == b"int"


def test_object_missing_key_and_refcount(rc):
    assert rc.execute_command("OBJECT", "ENCODING", "nokey") is None
    assert rc.execute_command("OBJECT", "REFCOUNT", "nokey") is None
    rc.set("k", "some longer string value")
    assert rc.execute_command("OBJECT", "REFCOUNT", "k") == 1


def test_object_errors(rc):
    with pytest.raises(redis.ResponseError, match=r"^unknown subcommand 'FOO'. Try OBJECT HELP.$"):
        rc.execute_command("OBJECT", "FOO", "k")
    with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for 'object\|encoding' command$"):
        rc.execute_command("OBJECT", "ENCODING")
    help_lines = rc.execute_command("OBJECT", "HELP")
    assert help_lines[0].startswith(b"OBJECT <subcommand>")
    assert any(line.startswith(b"ENCODING") for line in help_lines)


def test_append_creating_a_key_encodes_it_as_set_does(rc):
    # Redis runs tryObjectEncoding on the value APPEND stores for a new key.
    rc.execute_command("APPEND", "n", "12")
    assert rc.execute_command("OBJECT", "ENCODING", "n") == b"int"
    rc.execute_command("APPEND", "s", "hello")
    assert rc.execute_command("OBJECT", "ENCODING", "s") == b"embstr"
    # Appending to an existing key makes it raw, as before.
    rc.execute_command("APPEND", "n", "3")
    assert rc.execute_command("OBJECT", "ENCODING", "n") == b"raw"
    assert rc.execute_command("GET", "n") == b"123"
