"""verify.figures.report_figures.figure_list with ``jobs``: figures drawn side by side in forked
processes give the files, captions, notes and lint records of one process."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import boundlab  # noqa: E402
from verify.compare import CheckResult  # noqa: E402
from verify.figures.lint import ENV, captured, collecting, deliver, record  # noqa: E402
from verify.figures.report_figures import figure_list  # noqa: E402


def _results():
    """Four figures' results (two curves of one check, a search, a U-shape) and one whose
    series is broken (its figure fails)."""
    out = []
    for i, verdict in enumerate(("holds", "VIOLATED")):
        r = CheckResult("c", "drift.plateau", "seed 004", "toy", verdict, ratio=0.5 + i,
                        case=f"tau={i + 2}")
        t = np.arange(1, 9)
        r.series = {"kind": "curve", "x": t, "measured": (1.0 + i) / t, "bound": 2.0 / t ** 0.5}
        out.append(r)
    b = boundlab.get("drift.client_drift")
    s = CheckResult("s", b.id, b.source, "worst instance", "holds", ratio=0.2, case=b.id)
    s.series = {"kind": "search", "trace": np.linspace(0.01, 0.2, 12),
                "title": f"worst-instance search: {b.id} (12 instances)"}
    u = CheckResult("u", "", "seed 002, Sec. 4", "toy", "supported", kind="claim")
    u.series = {"kind": "ushape", "K": [1, 2, 5, 10], "measured": [0.3, 0.2, 0.1, 0.2],
                "bound": [0.5, 0.4, 0.3, 0.35], "argmin_measured": 5, "argmin_bound": 5,
                "title": "FedAU weight error vs K (N=30)"}
    bad = CheckResult("bad", "", "seed 002", "toy", "supported", kind="claim", note="kept")
    bad.series = {"kind": "ushape"}  # no K: this figure fails, the report goes on
    return out + [s, u, bad]


def test_two_jobs_draw_the_figures_of_one(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    rs1 = _results()
    items1 = figure_list(rs1, tmp_path / "jobs1", jobs=1)  # not linted here: faster
    rs2 = _results()
    with collecting() as found2:  # linted in the workers
        items2 = figure_list(rs2, tmp_path / "jobs2", jobs=2)
    names = [p.name for p, _ in items1]
    assert names == ["curve_c.png", "search_s.png", "ushape_u.png", "tightness_ratios.png"]
    assert [p.name for p, _ in items2] == names
    assert [c for _, c in items2] == [c for _, c in items1]
    for (p1, _), (p2, _) in zip(items1, items2):  # the same pixels, bit for bit
        assert p2.parent == tmp_path / "jobs2" and p2.read_bytes() == p1.read_bytes()
        assert p2.with_suffix(".svg").exists()
    # the failed figure's note, made in a worker, reaches the parent's result
    assert rs1[-1].note.startswith("kept [figure failed: ") and rs2[-1].note == rs1[-1].note
    assert [r.note for r in rs2] == [r.note for r in rs1]
    # the figures linted in the workers are delivered to the parent's collecting block
    assert sorted(n for n, _ in found2) == sorted(p.stem for p, _ in items1)
    assert all(isinstance(problems, list) for _, problems in found2)


def test_captured_returns_the_worker_lint_and_deliver_adds_it(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert captured(lambda x: x + 1, 1) == (2, [])  # nothing collecting: no lint
    with collecting() as found:
        value, linted = captured(lambda: record(_figure(), "w") or 7)
        assert value == 7 and [n for n, _ in linted] == ["w"]
        assert found == []  # captured in the (would-be) worker, not here ...
        deliver(linted)
    assert found == linted  # ... until delivered


def _figure():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2], [1, 2])
    return fig


@pytest.fixture(autouse=True)
def _close():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")
