"""Issue 31: nothing of the user's is ever overwritten or deleted, and no failed write looks
like success. One test per case of the issue's "12 ways to lose a user's file" and "Failures
that look like success" (the toys-side single files: tests/toys/engine/
test_single_file_writes.py). A refusal is exit 2 with one line naming the file; ``--force``
overrides it."""

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

from boundlab.errors import DomainError, OverwriteError
from boundlab.io import MANIFEST, foreign_files, output_set
from verify.cli import main

RUN = ["run", "fedavg", "--problem", "quadratic", "--rounds", "3", "lr=0.1"]
SWEEP = ["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.05,0.1", "--seeds", "1",
         "--rounds", "2", "n_clients=2", "dim=2", "--quiet"]


def _one_error(capsys, *names):
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert all(n in err[0] for n in names), err[0]
    return err[0]


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


# ------------------------------------------------------------------ 12 ways to lose a file
def test_run_out_refuses_a_users_csv_that_starts_with_round(tmp_path, capsys):
    mine = tmp_path / "my.csv"
    mine.write_text("round,accuracy\n0,0.91\n")
    assert main(RUN + ["--out", str(mine)]) == 2
    assert "--force" in _one_error(capsys, "--out", "my.csv")
    assert mine.read_text() == "round,accuracy\n0,0.91\n"
    assert main(RUN + ["--out", str(mine), "--force"]) == 0  # overridden on request
    assert mine.read_text().startswith("round,loss")


def test_run_out_refuses_a_boundlab_table_the_user_edited(tmp_path, capsys):
    f = tmp_path / "trace.csv"
    assert main(RUN + ["--out", str(f)]) == 0
    assert main(RUN + ["--out", str(f)]) == 0  # its own, unchanged: replaced
    f.write_text(f.read_text() + "0,1,2\n")
    edited = f.read_bytes()
    capsys.readouterr()
    assert main(RUN + ["--out", str(f)]) == 2
    assert "changed since" in _one_error(capsys, "trace.csv")
    assert f.read_bytes() == edited


def test_sweep_table_refuses_a_users_file(tmp_path, capsys):
    mine = tmp_path / "table.csv"
    mine.write_text("round,x\n")
    assert main(SWEEP + ["--table", str(mine)]) == 2
    _one_error(capsys, "--table", "table.csv")
    assert mine.read_text() == "round,x\n"


def test_falsify_save_refuses_a_users_json_that_looks_like_a_result(tmp_path, capsys):
    mine = tmp_path / "results.json"
    mine.write_text('{"orientation": "mine", "verdict": "my notes"}')
    assert main(["falsify", "drift.client_drift", "--budget", "10", "--no-exact",
                 "--save", str(mine)]) == 2  # refused before the search
    _one_error(capsys, "--save", "results.json")
    assert mine.read_text() == '{"orientation": "mine", "verdict": "my notes"}'


def test_worst_instance_save_refuses_a_users_json_naming_its_kind(tmp_path):
    import boundlab
    import verify
    from verify.worst.file import KIND

    w = verify.worst_instance(boundlab.get("drift.client_drift"), "quadratic", budget=10)
    mine = tmp_path / "w.json"
    mine.write_text(json.dumps({"kind": KIND, "mine": True}))
    before = mine.read_bytes()
    with pytest.raises(OverwriteError, match="w.json"):
        w.save(mine)
    assert mine.read_bytes() == before
    ours = tmp_path / "ours.json"
    w.save(ours)
    w.save(ours)


def test_sweep_rerun_keeps_files_named_like_its_temporary_files(tmp_path, capsys):
    out = tmp_path / "S"
    assert main(SWEEP + ["--out", str(out)]) == 0
    names = [".sweep.json.swp", ".sweep.json.bak", ".point-00000.parquet.orig",
             ".point-00001.parquet.boundlab-tmp-999999-x.parquet"]
    for n in names:
        (out / n).write_text("mine")
    capsys.readouterr()
    assert main(SWEEP + ["--out", str(out)]) == 2  # not boundlab's: refused, none deleted
    _one_error(capsys, ".sweep.json.swp")
    assert all((out / n).read_text() == "mine" for n in names)


@pytest.mark.parametrize("via_link", [False, True])
def test_sweep_out_refuses_a_users_folder(tmp_path, capsys, via_link):
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "thesis.tex").write_text("mine")
    out = mine
    if via_link:
        out = tmp_path / "link"
        out.symlink_to(mine, target_is_directory=True)
    assert main(SWEEP + ["--out", str(out)]) == 2
    _one_error(capsys, "thesis.tex")
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]


def test_verify_out_refused_deletes_nothing_first(tmp_path, capsys):
    user = tmp_path / "USERDIR"
    user.mkdir()
    keep = user / ".notes.boundlab-tmp-999999-keep.txt"
    keep.write_text("my notes")
    (user / "data.csv").write_text("1,2\n")
    assert main(["verify", "--quick", "--out", str(user)]) == 2
    _one_error(capsys, "--out", "data.csv")
    assert keep.read_text() == "my notes" and (user / "data.csv").exists()


def test_a_users_folder_named_like_a_staging_folder_beside_out_is_kept(tmp_path):
    out = tmp_path / "out"
    looks = [tmp_path / ".out.boundlab-staging-999999-x",
             tmp_path / ".out.boundlab-tmp-999999-0123456789abcdef-stage-x"]
    for d in looks:
        d.mkdir()
        (d / "precious.txt").write_text("mine")
    for tag in ("v1", "v2"):
        with output_set(out, kind="verify") as stage:
            (stage / "report.md").write_text(tag)
    assert (out / "report.md").read_text() == "v2"
    assert all((d / "precious.txt").read_text() == "mine" for d in looks)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["out"] + [d.name for d in looks])  # no lock nor staging folder of its own left


def test_a_killed_writers_staging_folder_is_removed_by_its_lock(tmp_path):
    out = tmp_path / "out"
    code = textwrap.dedent(f"""
        import os
        from boundlab.io import output_set
        with output_set({str(out)!r}, kind="verify") as stage:
            (stage / "report.md").write_text("half")
            os._exit(9)  # killed: no clean-up runs
    """)
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left[0] == ".out.boundlab-lock" and "stage-" in left[1] and len(left) == 2
    with output_set(out, kind="verify") as stage:
        (stage / "report.md").write_text("whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_force_lets_verify_out_replace_a_users_folder(tmp_path):
    from boundlab.io import force_overwrite

    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(DomainError, match="notes.txt"):
        with output_set(out, kind="verify") as stage:
            (stage / "report.md").write_text("x")
    with force_overwrite(), output_set(out, kind="verify") as stage:
        (stage / "report.md").write_text("x")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "report.md"]


# ------------------------------------------------------------ failures that look like success
def _limited(script, args, limit=None, timeout=120):
    def cap():
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run([sys.executable, "-c", script, *map(str, args)], preexec_fn=cap,
                          capture_output=True, text=True, timeout=timeout)


def _verify_stub(monkeypatch):
    """``boundlab verify`` with the checks replaced by one result and a figure step that, as
    the real one, only notes a figure that fails."""
    import pathlib

    import numpy as np

    import boundlab
    import verify.suite as suite
    from boundlab.io import atomic_write_bytes
    from verify.compare import compare
    from verify.report import api as report  # where write_report looks figure_list up

    r = compare(boundlab.get("drift.plateau"), np.array([0.01, 0.02]), problem="p",
                params=dict(eta=0.2, tau=10, L=0.2, zeta=0.43))
    monkeypatch.setattr(suite, "run_suite", lambda only, ctx, progress=False, jobs=1: [r])

    def figure_list(results, out_dir, jobs=1):
        out = pathlib.Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        try:
            atomic_write_bytes(out / "fig.png", b"x" * 40000)
        except Exception:  # noqa: BLE001 - as report.figure_list: the report goes on
            return []
        return [(out / "fig.png", "a figure")]
    monkeypatch.setattr(report, "figure_list", figure_list)


def _forked_main(argv, limit, err_path) -> int:
    """``main(argv)`` in a forked child (modules already loaded) whose files may grow to at
    most ``limit`` bytes (a full disk); its stderr goes to ``err_path``."""
    pid = os.fork()
    if pid == 0:  # child
        rc = 99
        try:
            fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 2)
            sys.stderr = open(2, "w", closefd=False)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            rc = main(argv)
            sys.stderr.flush()
        finally:
            os._exit(rc)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_verify_with_failing_writes_fails_and_keeps_the_complete_set(tmp_path, monkeypatch):
    _verify_stub(monkeypatch)
    out = tmp_path / "out" / "set"
    out.parent.mkdir()
    argv = ["verify", "--quick", "--no-tightness", "--out", str(out)]
    assert main(argv) in (0, 1)
    before = _files(out)
    assert "figures/fig.png" in before
    rc = _forked_main(argv, 20000, tmp_path / "err.txt")  # the disk fills up
    err = [ln for ln in (tmp_path / "err.txt").read_text().splitlines()
           if ln.startswith("error:")]
    assert rc == 2, (rc, err)
    assert len(err) == 1 and "figures/fig.png" in err[0] and "--out" in err[0], err
    assert "File too large" in err[0]
    assert _files(out) == before and not foreign_files(out, "verify")
    assert sorted(p.name for p in out.parent.iterdir()) == ["set"]


def test_sweep_out_file_too_large_names_the_file_and_option(tmp_path):
    script = "import sys; from verify.cli import main; sys.exit(main(sys.argv[1:]))"
    res = _limited(script, SWEEP + ["--out", tmp_path / "S"], limit=4000)
    assert res.returncode == 2, res.stderr
    err = res.stderr.strip().splitlines()[-1]
    assert "File too large" in err and "--out" in err and "point-00000" in err, err


def test_falsify_save_file_too_large_names_the_file_and_option(tmp_path):
    script = "import sys; from verify.cli import main; sys.exit(main(sys.argv[1:]))"
    res = _limited(script, ["falsify", "drift.client_drift", "--budget", "10", "--no-exact",
                            "--save", tmp_path / "r.json"], limit=1000)
    assert res.returncode == 2, res.stderr
    err = res.stderr.strip().splitlines()[-1]
    assert "File too large" in err and "--save" in err and "r.json" in err, err
    assert not (tmp_path / "r.json").exists()


def test_ctrl_c_in_a_weakref_callback_ends_with_130():
    script = textwrap.dedent("""
        import os, signal, sys, time, weakref
        import verify.cli.bounds_cmd as bounds_cmd
        from verify.cli import main

        class Thing:
            pass

        def interrupted_finaliser():
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, landing inside the callback
            time.sleep(1)

        def listing(args):
            t = Thing()
            weakref.finalize(t, interrupted_finaliser)
            del t  # the callback runs here: Python can only print its KeyboardInterrupt
            return 0
        bounds_cmd._list = listing
        sys.exit(main(["bounds", "list"]))
    """)
    # started as from a terminal: a test run in the background of a non-interactive shell
    # passes SIGINT on ignored, and a process keeps an ignored Ctrl-C ignored (by convention)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert res.returncode == 130, (res.returncode, res.stderr)
    assert res.stderr.strip().splitlines() == ["error: interrupted"]  # no traceback either


def test_an_interrupted_output_set_leaves_nothing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        with output_set(out, kind="verify") as stage:
            (stage / "a.txt").write_text("x")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == [] and os.listdir(tmp_path) == []
