"""No command deletes or overwrites a file it did not write: every ``--out`` and ``out=``.

Output folders are replaced or updated only when they hold boundlab's manifest listing every
file in them, unchanged; single-file outputs replace only a file boundlab wrote (its header).
(Sweep folders: tests/verify/sweep/test_sweep_store.py; reproduce: tests/verify/reproduce/.)
"""

import os
import subprocess
import sys

import pytest

from boundlab.errors import BoundlabError, DomainError
from boundlab.io import MANIFEST, TMP_MARK, check_output_dir, clean_temps, output_set
from verify.cli import main

VERIFY = ["verify", "--quick", "--only", "drift.client_drift", "--no-tightness"]


def _user_folder(root):
    (root / "data").mkdir(parents=True)
    (root / "thesis.tex").write_text("\\chapter{mine}")
    (root / "data" / "raw.csv").write_text("a,b\n1,2\n")
    (root / "results.csv").write_text("my own results\n")
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _intact(before):
    return all(p.exists() and p.read_bytes() == b for p, b in before.items())


def test_verify_refuses_a_folder_of_the_users_files(tmp_path, capsys):
    out = tmp_path / "thesis"
    before = _user_folder(out)
    rc = main(VERIFY + ["--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: --out")
    assert "thesis.tex" in err[0] and "data/raw.csv" in err[0]
    assert _intact(before) and sorted(p.name for p in out.iterdir()) == [
        "data", "results.csv", "thesis.tex"]


def test_verify_replaces_its_own_set_and_then_refuses_a_user_file(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(VERIFY + ["--out", str(out)]) == 0
    assert (out / MANIFEST).exists() and (out / "report.md").exists()
    assert main(VERIFY + ["--out", str(out)]) == 0  # its own set: replaced
    (out / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(VERIFY + ["--out", str(out)]) == 2
    assert "notes.txt" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine"


def test_a_boundlab_file_the_user_edited_is_not_replaced(tmp_path):
    out = tmp_path / "set"
    with output_set(out, kind="verify") as stage:
        (stage / "results.csv").write_text("a\n1\n")
        (stage / "figures").mkdir()
        (stage / "figures" / "f.png").write_bytes(b"png")
    check_output_dir(out, "out", "verify")  # untouched: may be replaced
    (out / "figures" / "f.png").write_bytes(b"my edit")
    with pytest.raises(DomainError, match="figures/f.png"):
        check_output_dir(out, "out", "verify")
    with pytest.raises(DomainError):  # and another kind's manifest does not vouch for it
        check_output_dir(out, "out", "reproduce")


def test_a_forged_manifest_listing_a_wrong_hash_does_not_vouch(tmp_path):
    out = tmp_path / "set"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    (out / MANIFEST).write_text('{"format": "boundlab-manifest/1", "kind": "verify", '
                                '"files": {"thesis.tex": "' + "0" * 64 + '"}}')
    with pytest.raises(DomainError, match="thesis.tex"):
        check_output_dir(out, "out", "verify")


def test_temp_files_of_a_killed_writer_are_removed_only_when_its_lock_proves_them(tmp_path):
    code = ("import sys, pathlib; from boundlab.io import LOCK, hold_lock, process_mark; "
            "d = pathlib.Path(sys.argv[1]); hold_lock(d / LOCK); "
            "(d / f'.point-00043.parquet{process_mark()}abc.parquet').write_text('half'); "
            "(d / f'.004-fig2{process_mark()}xyz').mkdir(); import os; os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    named = tmp_path / f".point-00044.parquet{TMP_MARK}{dead}-abc.parquet"  # a name only
    named.write_text("mine")
    live = tmp_path / f".x.csv{TMP_MARK}{os.getpid()}-q.csv"
    live.write_text("being written")
    removed = clean_temps(tmp_path)
    assert len(removed) == 2 and all(r.startswith((".point-00043", ".004-fig2")) for r in removed)
    assert named.read_text() == "mine" and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([named.name, live.name])


def test_run_out_never_overwrites_a_users_file(tmp_path, capsys):
    mine = tmp_path / "mine.csv"
    mine.write_text("x,y\n1,2\n")
    run = ["run", "fedavg", "--problem", "quadratic", "--problem-opt", "n_clients=3",
           "--problem-opt", "dim=2", "--rounds", "2", "lr=0.05"]
    assert main(run + ["--out", str(mine)]) == 2
    assert "mine.csv" in capsys.readouterr().err and mine.read_text() == "x,y\n1,2\n"
    ours = tmp_path / "trace.csv"
    assert main(run + ["--out", str(ours)]) == 0
    assert main(run + ["--out", str(ours)]) == 0  # a table boundlab wrote: replaced
    assert ours.read_text().startswith("round,")


def test_trace_save_refuses_a_users_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    import toys

    f = tmp_path / "mine.parquet"
    pd.DataFrame({"a": [1.0]}).to_parquet(f)
    before = f.read_bytes()
    tr = toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=2, seed=0, lr=0.1)
    with pytest.raises(DomainError, match="did not write it"):
        tr.save(f)
    assert f.read_bytes() == before
    g = tmp_path / "t.parquet"
    tr.save(g)
    tr.save(g)  # its own table: replaced


def test_checkpoint_path_never_overwrites_a_users_file(tmp_path):
    import toys

    mine = tmp_path / "notes.npz"
    mine.write_bytes(b"my own archive")
    prob = toys.quadratic(3, 2, seed=0)
    with pytest.raises(DomainError, match="checkpoint"):
        toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, checkpoint=mine, checkpoint_every=1)
    assert mine.read_bytes() == b"my own archive"
    ck = tmp_path / "ck.npz"
    for _ in range(2):  # its own checkpoint: replaced
        toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, checkpoint=ck, checkpoint_every=1)
    toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, resume=ck)


def test_worst_instance_save_and_write_log_never_overwrite_a_users_file(tmp_path):
    import boundlab
    import toys
    import verify
    from toys.engine.trace_io import write_log

    mine = tmp_path / "mine.json"
    mine.write_text('{"my": "data"}')
    w = verify.worst_instance(boundlab.get("drift.client_drift"), "quadratic", budget=10)
    with pytest.raises(DomainError, match="did not write it"):
        w.save(mine)
    assert mine.read_text() == '{"my": "data"}'
    ours = tmp_path / "w.json"
    w.save(ours)
    w.save(ours)  # its own instance: replaced
    tr = toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=2, seed=0, lr=0.1)
    for suffix in ("csv", "json"):
        f = tmp_path / f"log.{suffix}"
        f.write_text("mine")
        with pytest.raises(DomainError, match="did not write it"):
            write_log(tr, f)
        assert f.read_text() == "mine"
        g = tmp_path / f"ours.{suffix}"
        write_log(tr, g)
        write_log(tr, g)


def test_sweep_out_keeps_the_users_files(tmp_path):
    import verify

    out = tmp_path / "sweeps"
    before = _user_folder(out)
    (out / "sweep.json").write_text('{"my": "notes"}')
    before[out / "sweep.json"] = (out / "sweep.json").read_bytes()
    with pytest.raises(BoundlabError, match="sweep.json"):  # not boundlab's: refused, kept
        verify.sweep("seed004-toy", "fedavg", grid={"local_steps": [2]}, seeds=1, rounds=2,
                     out=out, lr=0.1)
    assert _intact(before)
    (out / "sweep.json").unlink()
    del before[out / "sweep.json"]
    with pytest.raises(DomainError, match="thesis.tex"):  # issue 31: the folder rule of verify
        verify.sweep("seed004-toy", "fedavg", grid={"local_steps": [2]}, seeds=1, rounds=2,
                     out=out, lr=0.1)
    assert _intact(before) and sorted(p.name for p in out.iterdir()) == [
        "data", "results.csv", "thesis.tex"]


def test_falsify_save_never_overwrites_a_users_file(tmp_path):
    import verify

    mine = tmp_path / "result.json"
    mine.write_text('{"mine": 1}')
    with pytest.raises(DomainError, match="did not write it"):
        verify.falsify("drift.client_drift", budget=10, exact=False, save=mine)
    assert mine.read_text() == '{"mine": 1}'
    ours = tmp_path / "ours.json"
    for _ in range(2):
        verify.falsify("drift.client_drift", budget=10, exact=False, save=ours)
