"""verify.sweep.store: a sweep folder is sealed to what made it, checked file by file, and
cleaned of a killed run's temporary files (the hostile cases are in tests/fuzz/test_fuzz_sweep)."""

import hashlib
import json

import pandas as pd
import pytest

import toys
import verify
from boundlab.errors import DomainError, IntegrityError

KW = dict(grid={"lr": [0.05, 0.1]}, seeds=[0, 2], rounds=2, n_clients=2, dim=2)


def _sweep(out, **kw):
    return verify.sweep("quadratic", "fedavg", out=out, **{**KW, **kw})


def test_layout_seals_and_hashes(tmp_path):
    from boundlab.integrity import code_version

    _sweep(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "boundlab-manifest.json", "point-00000.parquet", "point-00001.parquet",
        "seal-00000.json", "seal-00001.json", "sweep.json"]
    meta = json.loads((tmp_path / "sweep.json").read_text())
    assert meta["format"] == "boundlab-sweep/2" and meta["sweep"]["rounds"] == 2
    assert meta["seal"]["claim"]["version"] == code_version()
    seal = json.loads((tmp_path / "seal-00001.json").read_text())["seal"]
    data = (tmp_path / "point-00001.parquet").read_bytes()
    assert seal["payload_sha256"] == hashlib.sha256(data).hexdigest()
    assert seal["claim"]["index"] == 1 and seal["claim"]["file"] == "point-00001.parquet"
    assert seal["claim"]["params"] == {"lr": {"f": (0.1).hex()}}  # floats stored exactly


def test_an_orphan_seal_of_a_killed_write_is_replaced_on_resume(tmp_path):
    full = _sweep(tmp_path / "full")
    _sweep(tmp_path / "o")
    (tmp_path / "o" / "point-00001.parquet").unlink()  # killed after its seal was written
    pd.testing.assert_frame_equal(_sweep(tmp_path / "o"), full)


def test_a_resumed_folder_gives_the_table_of_an_uninterrupted_sweep(tmp_path):
    first = _sweep(tmp_path)
    stamps = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    pd.testing.assert_frame_equal(_sweep(tmp_path), first)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == stamps


def test_the_data_of_a_problem_object_is_part_of_the_claim(tmp_path):
    def run(seed):
        return verify.sweep(toys.quadratic(2, 2, seed=seed), "fedavg", grid={"lr": [0.1]},
                            seeds=1, rounds=2, out=tmp_path)

    first = run(0)
    pd.testing.assert_frame_equal(run(0), first)  # the same data, rebuilt: resumed
    with pytest.raises(DomainError, match=r"sweep_data\.problem .* in the file"):
        run(1)  # same name and sizes, other matrices


def test_the_data_of_a_participation_process_is_part_of_the_claim(tmp_path):
    def run(p):
        return verify.sweep("quadratic", "fedavg", grid={"lr": [0.1]}, seeds=1, rounds=2,
                            n_clients=2, dim=2, out=tmp_path,
                            participation=toys.participation.Bernoulli([p, p]))

    run(0.5)
    with pytest.raises(DomainError, match=r"sweep_data\.fixed\.participation"):
        run(0.9)


def test_another_code_version_is_another_sweep(tmp_path, monkeypatch):
    import boundlab.integrity

    _sweep(tmp_path)
    monkeypatch.setattr(boundlab.integrity, "code_version", lambda: "0.0+000000000000")
    with pytest.raises(DomainError, match=r"version is .* in the file, '0\.0\+0+' expected"):
        _sweep(tmp_path)


def test_a_different_sweep_names_its_first_differing_setting(tmp_path):
    _sweep(tmp_path)
    with pytest.raises(DomainError, match=r"sweep\.json: sweep\.rounds is 2 in the file, 3 "):
        _sweep(tmp_path, rounds=3)


def test_a_folder_of_the_previous_format_is_refused_with_advice(tmp_path):
    _sweep(tmp_path)  # listed in the manifest, so its own seal check speaks
    (tmp_path / "sweep.json").write_text(json.dumps({"problem": "quadratic", "rounds": 2}))
    with pytest.raises(IntegrityError, match="format .*use another out directory or delete"):
        _sweep(tmp_path)


def test_files_named_like_temporary_files_are_never_deleted(tmp_path):
    # issue 31: only what a dead writer's lock proves its own is removed (tests/verify/
    # test_no_overwrite.py), never a file by its name: the folder is refused, nothing lost
    _sweep(tmp_path)
    names = [".point-00001.parquet.boundlab-tmp-999999999-x.parquet", ".sweep.json.swp",
             ".point-00000.parquet.orig"]
    for name in names:
        (tmp_path / name).write_bytes(b"partial")
    with pytest.raises(DomainError, match="did not write"):
        _sweep(tmp_path)
    assert all((tmp_path / n).read_bytes() == b"partial" for n in names)


def test_the_csv_store_is_checked_too(tmp_path, monkeypatch):
    from verify.sweep import store

    monkeypatch.setattr(store, "_has_pyarrow", lambda: False)
    kw = dict(grid={"lr": [0.05, 0.1], "participation": ["full", "bernoulli:p=0.5"]})
    first = _sweep(tmp_path, **kw)
    assert (tmp_path / "point-00003.csv").exists()
    pd.testing.assert_frame_equal(_sweep(tmp_path, **kw), first)
    path = tmp_path / "point-00002.csv"
    path.write_text(path.read_text().replace("0.1,", "0.2,", 1))
    with pytest.raises(IntegrityError, match="point-00002.csv: payload"):
        _sweep(tmp_path, **kw)


def test_a_resealed_forgery_must_still_be_the_points_frame(tmp_path):
    _sweep(tmp_path)
    path, seal_path = tmp_path / "point-00000.parquet", tmp_path / "seal-00000.json"
    frame = pd.read_parquet(path)
    frame["gap"] = frame["gap"].astype(str)  # a text column where numbers belong
    frame.to_parquet(path, index=False)
    doc = json.loads(seal_path.read_text())
    doc["seal"]["payload_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    seal_path.write_text(json.dumps(doc))
    with pytest.raises(IntegrityError, match="point-00000.parquet: gap .*numbers.*delete it"):
        _sweep(tmp_path)
