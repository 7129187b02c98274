"""The main job's write phase under interruption: old set or new set, never a mix, no temp files.

``verify.report.write_report`` (what ``boundlab verify`` calls to write report.md, results.csv,
figures/ and worst/) runs in a forked child that is killed (SIGKILL, then SIGTERM / SIGINT) at
many points of its write phase; the figure step is slowed down so that the kills land before,
during and after every file. After each kill the output directory must hold exactly one whole
set (every figure the report names exists, no figure it does not name, results.csv of the same
run) and nothing temporary; a SIGKILL may leave a hidden staging directory *beside* the output
(it cannot be caught), which the next write removes — checked too.
"""

import os
import pathlib
import select
import signal
import sys
import time

import numpy as np
import pandas  # noqa: F401 - imported before the forks, so the children only write
import pytest

import boundlab
from boundlab.io import MANIFEST, foreign_files
from verify import report
from verify.compare import compare

N_FIGS = 6
STEP = 0.02  # seconds per slowed figure


def _results(tag):
    r = compare(boundlab.get("drift.plateau"), np.array([0.01, 0.02]), problem=tag,
                params=dict(eta=0.2, tau=10, L=0.2, zeta=0.43))
    return [r]


def _slow_figures(tag, hold=None):
    """A stand-in for ``report.figure_list``: (path, caption) of each figure, slowly written;
    with ``hold`` (a pipe's read end that is never written), the first figure waits there until
    the signal arrives, so that one kill lands inside the write phase however loaded the
    machine is (a sleep alone let a descheduled parent signal after the swap)."""
    def figure_list(results, out_dir, jobs=1):
        out = pathlib.Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        pairs = []
        for i in range(N_FIGS):
            if hold is not None and i == 0:
                select.select([hold], [], [], 120.0)  # returns early only on the signal
            time.sleep(STEP)
            p = out / f"{tag}_{i}.png"
            p.write_bytes(b"png " + tag.encode())
            pairs.append((p, f"figure {i} of run {tag}"))
        return pairs
    return figure_list


#: the module whose ``figure_list`` the write phase calls (``verify.report`` re-exports it)
_WRITER = sys.modules[report.write_report.__module__]


@pytest.fixture(scope="module", autouse=True)
def _imports_done_before_the_forks(tmp_path_factory):
    """One write in this process first: the lazy imports of the compare and write steps (tens
    of seconds on a loaded machine) are then done once, not again in every forked child."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_WRITER, "figure_list", _slow_figures("warm"))
        report.write_report(_results("warm"), tmp_path_factory.mktemp("warm") / "out")


def _write(out, tag, ready=None, hold=None):
    _WRITER.figure_list = _slow_figures(tag, hold)  # the child's copy only (forked)
    results = _results(tag)
    if ready is not None:
        os.write(ready, b"x")  # the write phase starts now
    report.write_report(results, out, title=f"run {tag}")


def _consistent(out: pathlib.Path) -> str:
    md = (out / "report.md").read_text()
    tag = "old" if "# run old" in md else "new" if "# run new" in md else None
    if tag is None:
        return None
    figs = sorted(p.name for p in (out / "figures").iterdir())
    want = sorted(f"{tag}_{i}.png" for i in range(N_FIGS))
    assert figs == want, f"figures {figs} do not belong to the {tag} report"
    assert all(f"figures/{f}" in md for f in want)
    csv = (out / "results.csv").read_text()
    assert tag in csv, "results.csv of another run"
    names = {p.name for p in out.iterdir()}
    assert names <= {"report.md", "results.csv", "figures", "worst", MANIFEST}, names
    assert not foreign_files(out, "verify"), "the manifest does not list the set as it is"
    for p in out.rglob("*"):
        assert not p.name.startswith(".tmp") and ".boundlab-staging" not in p.name, p
        assert p.is_dir() or p.stat().st_size > 0, f"empty file {p}"
    return tag


def _fork_and_kill(out, delay, sig):
    """Fork a writer of the "new" set and send it ``sig`` ``delay`` s after its write phase
    starts; at ``delay`` 0 the writer waits inside the phase for the signal."""
    r, w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        os.close(hold_w)
        # Ctrl-C as a terminal delivers it: a process started in the background by a
        # non-interactive shell inherits SIGINT ignored, and Python then keeps it ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            _write(out, "new", ready=w, hold=hold_r if delay == 0 else None)
        finally:
            os._exit(0)
    os.close(w)
    os.close(hold_r)
    os.read(r, 1)  # the child is about to write
    os.close(r)
    time.sleep(delay)
    os.kill(pid, sig)
    _, status = os.waitpid(pid, 0)
    os.close(hold_w)
    return status


def _timed_write(out, tag) -> float:
    """Write the ``tag`` set in a forked child; the seconds its write phase took (from its
    start to the child's exit: on a loaded machine far more than the figures' sleeps)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            _write(out, tag, ready=w)
        finally:
            os._exit(0)
    os.close(w)
    os.read(r, 1)
    start = time.monotonic()
    os.waitpid(pid, 0)
    os.close(r)
    return time.monotonic() - start


@pytest.fixture
def old_set(tmp_path):
    out = tmp_path / "out"
    _PHASE["seconds"] = _timed_write(out, "old")
    assert _consistent(out) == "old"
    return out


#: how long the old set's write phase took (set by ``old_set``)
_PHASE = {}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_killed_write_phase_leaves_one_whole_set(old_set, sig):
    # the kills span the write phase as long as it took here (a fixed span missed its end on
    # a loaded machine, or with pytest-xdist's second worker)
    total = max(N_FIGS * STEP + 0.3, 1.5 * _PHASE["seconds"])
    seen = set()
    for delay in np.linspace(0.0, total, 10 if sig == signal.SIGKILL else 2):
        _fork_and_kill(old_set, float(delay), sig)
        seen.add(_consistent(old_set))
        leftovers = [p for p in old_set.parent.iterdir() if p.name != "out"]
        if sig != signal.SIGKILL:
            assert not leftovers, f"temp files left after {sig.name}: {leftovers}"
    assert seen <= {"old", "new"} and "old" in seen
    if sig == signal.SIGKILL:
        assert seen == {"old", "new"}, "the kills did not span the write phase"
    # a normal write after the kills: the new set, and no staging directory of the dead runs
    pid = os.fork()
    if pid == 0:
        try:
            _write(old_set, "new")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert _consistent(old_set) == "new"
    assert [p.name for p in old_set.parent.iterdir()] == ["out"]


def test_new_run_drops_figures_of_the_old_one(old_set):
    pid = os.fork()
    if pid == 0:
        try:
            _write(old_set, "new")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert _consistent(old_set) == "new"
    assert not any(p.name.startswith("old") for p in (old_set / "figures").iterdir())


def test_output_dir_with_foreign_files_is_refused(tmp_path):
    from boundlab.errors import DomainError

    (tmp_path / "thesis.tex").write_text("mine")
    with pytest.raises(DomainError, match="did not write: thesis.tex"):
        report.write_report(_results("x"), tmp_path)
    assert (tmp_path / "thesis.tex").read_text() == "mine"
