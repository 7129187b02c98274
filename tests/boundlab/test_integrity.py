"""boundlab.integrity: seals, bounded reads, strict JSON, private cache directories, escaping."""

import json
import os
import stat

import numpy as np
import pytest

from boundlab.errors import BoundlabError, IntegrityError
from boundlab.integrity import (
    check_seal,
    code_version,
    digest,
    escape,
    loads_plain,
    private_dir,
    read_bounded,
    seal,
)


def test_digest_is_canonical_and_sensitive():
    a = {"x": np.arange(3.0), "b": [1, 2.5], "s": "p"}
    assert digest(a) == digest({"s": "p", "b": (1, 2.5), "x": np.arange(3.0)})
    assert digest(a) != digest({**a, "x": np.array([0.0, 1.0, np.nextafter(2.0, 3.0)])})
    assert digest({"v": 0.1}) != digest({"v": 0.1 + 2**-56})  # one ulp apart
    assert digest({"x": np.zeros(2)}) != digest({"x": np.zeros(2, dtype=np.float32)})
    with pytest.raises(TypeError):
        digest({"f": print})  # plain data only: a function is never digested by name


def test_seal_names_the_first_field_that_differs():
    claim = {"problem": {"name": "q", "data": np.ones(2)}, "seed": 1}
    s = seal(claim, b"abc")
    check_seal(s, claim, b"abc", "f")
    with pytest.raises(IntegrityError, match=r"problem\.data") as e:
        check_seal(s, {**claim, "problem": {"name": "q", "data": np.zeros(2)}}, b"abc", "f")
    assert e.value.path == "f"
    with pytest.raises(IntegrityError, match="seed is 1 in the file, 2 expected"):
        check_seal(s, {**claim, "seed": 2}, b"abc", "f")
    with pytest.raises(IntegrityError, match="payload"):
        check_seal(s, claim, b"abd", "f")
    for bad in (None, {}, {"claim_sha256": 1, "payload_sha256": "x"}, "text"):
        with pytest.raises(IntegrityError):
            check_seal(bad, claim, b"abc", "f")


def test_seal_survives_a_json_round_trip():
    claim = {"x0": np.array([0.1, -2.0]), "lr": 0.1, "name": "é\x1b"}
    s = json.loads(json.dumps(seal(claim, b"z")))
    check_seal(s, claim, b"z", "f")


def test_code_version_names_the_release():
    import boundlab

    v = code_version()
    assert v.startswith(boundlab.__version__ + "+") and len(v.split("+")[1]) == 12


def test_read_bounded_refuses_before_reading(tmp_path):
    f = tmp_path / "big"
    with open(f, "wb") as fh:
        fh.truncate(1 << 30)  # a sparse 1 GiB file: refused from its size alone
    with pytest.raises(IntegrityError, match="at most 1024 bytes"):
        read_bounded(f, 1024, "checkpoint")
    with pytest.raises(IntegrityError, match="readable"):
        read_bounded(tmp_path / "missing", 10)
    with pytest.raises(IntegrityError, match="regular file"):
        read_bounded(tmp_path, 10)
    g = tmp_path / "small"
    g.write_bytes(b"abc")
    assert read_bounded(g, 3) == b"abc"


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": NaN}', "Infinity",
                                  b"\xff\xfe", "", "{", '{"a": 1}x'])
def test_loads_plain_refuses_what_is_not_strict_json(text):
    with pytest.raises(IntegrityError) as e:
        loads_plain(text, "f.json")
    assert isinstance(e.value, BoundlabError) and "f.json" in str(e.value)


def test_loads_plain_accepts_plain_json():
    assert loads_plain('{"a": [1, 2.5, null, "x"]}', "f") == {"a": [1, 2.5, None, "x"]}


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions only")
def test_private_dir_is_made_private_and_loose_ones_are_refused(tmp_path):
    d = private_dir(tmp_path / "a" / "cache")
    assert d is not None and stat.S_IMODE(d.stat().st_mode) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir()
    os.chmod(loose, 0o777)
    with pytest.warns(RuntimeWarning, match="writable by others"):
        assert private_dir(loose) is None
    assert stat.S_IMODE(loose.stat().st_mode) == 0o777  # refused, not changed
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.warns(RuntimeWarning, match="not a directory"):
        assert private_dir(f) is None


def test_escape_neutralises_terminal_control():
    text = "id\x1b]0;pwned\x07\x9b2J\u202eevil\r\n"
    out = escape(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == "\u202e" for c in out)
    assert out == "id\\x1b]0;pwned\\x07\\x9b2J\\u202eevil\\r\\n"


def test_a_float_or_array_that_differs_is_named_as_one_field():
    s = seal({"hyper": {"lr": 0.1}, "x0": np.zeros(2)}, b"")
    with pytest.raises(IntegrityError, match=r"hyper\.lr is 0\.1 in the file, 0\.2 expected"):
        check_seal(s, {"hyper": {"lr": 0.2}, "x0": np.zeros(2)}, b"", "f")
    with pytest.raises(IntegrityError, match=r"x0 is array float64 \(2,\)"):
        check_seal(s, {"hyper": {"lr": 0.1}, "x0": np.ones(2)}, b"", "f")
