"""Saved worst instances: sealed on save, validated on load, constants recomputed on replay."""

import json

import numpy as np
import pytest

import boundlab
import verify
from boundlab.errors import IntegrityError
from verify.worst import load, replay
from verify.worst.file import seal_document


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("worst") / "w.json"
    w = verify.worst_instance("drift.client_drift", budget=10, seed=0, save=path,
                              setting={"rounds": 3, "L": 2.0, "zeta": 0.3, "save_always": True})
    return path, w


def _forge(doc, tmp_path, **edits):
    doc = json.loads(json.dumps(doc))
    for dotted, value in edits.items():
        node = doc
        *parents, last = dotted.split("__")
        for p in parents:
            node = node[p]
        node[last] = value
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(seal_document(doc)))  # hashes recomputed, as a forger would
    return path


def test_the_file_is_sealed_and_replays(saved):
    path, w = saved
    doc = json.loads(path.read_text())
    claim = doc["seal"]["claim"]
    assert claim["bound_id"] == "drift.client_drift" and claim["lhs"] == "max_client_drift"
    assert claim["release"] == boundlab.__version__ and len(claim["matrices"]) == 64
    assert load(path)["instance"]["run"]["cfg"]["zeta"] == 0.3
    assert replay(path)["ratio"] == pytest.approx(w.ratio, rel=1e-9)


def test_claimed_l_and_zeta_that_the_matrices_do_not_have_are_refused(saved, tmp_path):
    """Issue 20: replay used to trust the claimed L and zeta."""
    path, _ = saved
    doc = json.loads(path.read_text())
    A = np.asarray(doc["instance"]["A"])
    c = np.asarray(doc["instance"]["c"])
    p = np.asarray(doc["instance"]["weights"])
    true_zeta = max(np.linalg.norm(A[i] @ (c[i] - p @ c)) for i in range(len(c)))
    forged = _forge(doc, tmp_path, instance__run__cfg__zeta=0.6, params__zeta=0.6)
    with pytest.raises(IntegrityError, match="zeta does not match") as info:
        replay(forged)
    msg = str(info.value)
    assert "zeta is 0.6 in the file" in msg and "forged.json" in msg
    assert float(msg.rsplit(" ", 1)[1]) == pytest.approx(true_zeta, rel=1e-12)
    top = float(np.linalg.eigvalsh(A[0]).max())
    forged = _forge(doc, tmp_path, instance__run__cfg__L=top / 2, params__L=top / 2)
    with pytest.raises(IntegrityError, match="L does not match.*largest eigenvalue"):
        replay(forged)


def test_edits_without_new_hashes_and_old_files_are_refused(saved, tmp_path):
    path, _ = saved
    doc = json.loads(path.read_text())
    doc["seconds"] = 0.0
    (tmp_path / "edited.json").write_text(json.dumps(doc))
    with pytest.raises(IntegrityError, match="payload"):
        replay(tmp_path / "edited.json")
    del doc["seal"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    with pytest.raises(IntegrityError, match="seal"):
        replay(tmp_path / "old.json")


def test_size_bounds_hold_before_anything_is_built(saved, tmp_path):
    path, _ = saved
    doc = json.loads(path.read_text())
    big = _forge(doc, tmp_path, instance__run__cfg__tau=10 ** 6)
    with pytest.raises(IntegrityError, match=r"tau is not valid: an integer in 1\.\.10000"):
        load(big)
    dims = _forge(doc, tmp_path, instance__x0=[0.0] * 3)
    with pytest.raises(IntegrityError, match=r"instance.x0 is not valid.*shape \(2,\)"):
        load(dims)
