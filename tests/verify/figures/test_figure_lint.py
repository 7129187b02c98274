"""The figure lint (verify.figures.lint): each rule catches a figure built to break it, and every
figure the project produces passes it -- the report's (one quick verify run), the tightness
brackets; every ``reproduce`` item's figure is linted by tests/verify/reproduce/conftest.py while
the tiny-size tests run them, the notebooks' figures by tests/verify/test_notebooks.py, both
through the same hook."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from verify.cli import main  # noqa: E402
from verify.figures import lint, style  # noqa: E402
from verify.figures.lint import collecting, record  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _fig(w=4.0, h=3.0):
    with style():
        return plt.subplots(figsize=(w, h))


# --- each rule, on a figure made to break it ------------------------------------------------

def test_a_clean_figure_passes():
    fig, ax = _fig()
    ax.plot([0.1, 0.2, 0.3], [1.5, 2.2, 3.1], label="measured")
    ax.set(xlabel="step size \u03b7", ylabel="gap", title="holds")
    fig.legend(loc="outside lower center")
    assert lint(fig) == []


def test_overlapping_text_is_found():
    fig, ax = _fig()
    ax.plot([1, 2], [1, 2])
    ax.set_title("a title")
    fig.text(0.5, ax.title.get_position()[1], "over the title", transform=ax.transAxes,
             ha="center", va="bottom")
    assert any("overlaps" in p and "a title" in p for p in lint(fig))


def test_crowded_tick_labels_are_found():
    fig, ax = _fig(3.0, 2.0)
    ax.plot(range(40), range(40))
    ax.set_xticks(range(40), [f"label {i}" for i in range(40)])
    assert any("overlaps" in p and "label" in p for p in lint(fig))


def test_a_figure_taller_than_a4_or_wider_than_the_text_is_found():
    fig, _ = _fig(6.3, 11.0)
    assert any("tall" in p for p in lint(fig))
    fig, _ = _fig(9.0, 3.0)
    assert any("wide" in p for p in lint(fig))


def test_a_legend_over_a_third_of_the_figure_is_found():
    fig, ax = _fig()
    for i in range(8):
        ax.plot([0, 1], [i, i], label=f"a long legend entry number {i}")
    fig.legend(loc="outside lower center", ncols=1)
    assert any("legend takes" in p for p in lint(fig))


def test_a_legend_entry_not_drawn_is_found():
    from matplotlib.lines import Line2D

    fig, ax = _fig()
    ax.plot([1, 2], [1, 2], color="C0", label="measured")
    hidden, = ax.plot([1, 2], [5, 6], label="outside the view")
    ax.set_ylim(0, 3)
    dashed = Line2D([], [], color="C3", ls="--", label="a dashed rate never drawn")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles + [dashed], labels + [dashed.get_label()], loc="outside lower center")
    problems = lint(fig)
    assert any("'outside the view' is not drawn" in p for p in problems), problems
    assert any("'a dashed rate never drawn' is not drawn" in p for p in problems), problems
    assert not any("'measured'" in p for p in problems), problems


def test_values_dropped_on_a_log_axis_are_found():
    fig, ax = _fig()
    ax.plot([0.1, 0.2, 0.3], [1.0, -0.5, 0.0], label="a term negative somewhere")
    ax.set(yscale="log", xlabel="step size \u03b7", ylabel="gap")
    assert lint(fig) == ['log y axis drops 2 value(s) <= 0 of "a term negative somewhere"']


def test_a_log_axis_stretched_by_a_numerical_zero_is_found():
    fig, ax = _fig()
    ax.plot([1, 2], [1e-18, 1.0])
    ax.set_yscale("log")
    assert any("log y axis spans" in p and "decades" in p for p in lint(fig))


def test_a_title_of_four_lines_is_found():
    fig, ax = _fig()
    fig.suptitle("one\ntwo\nthree\nfour")
    assert any("title of 4 lines" in p for p in lint(fig))


def test_record_reports_only_when_asked(tmp_path, monkeypatch):
    fig, ax = _fig()
    ax.plot([1, 2], [0.0, 1.0])
    ax.set_yscale("log")
    monkeypatch.delenv("BOUNDLAB_FIGURE_LINT", raising=False)
    record(fig, "silent")  # nothing active: nothing happens
    with collecting() as found:
        record(fig, "bad")
    assert found[0][0] == "bad" and "drops 1 value" in found[0][1][0]
    target = tmp_path / "lint.jsonl"
    monkeypatch.setenv("BOUNDLAB_FIGURE_LINT", str(target))
    record(fig, "to a file")
    assert '"name": "to a file"' in target.read_text()


# --- every figure the project produces --------------------------------------------------------

def _assert_clean(found, at_least):
    assert len(found) >= at_least, [n for n, _ in found]
    bad = {name: problems for name, problems in found if problems}
    assert not bad, bad


@pytest.fixture
def report_figures(quick_main_job):
    """The session's quick verify run (every family, no PEP brackets; tests/verify/conftest.py),
    its figures linted as saved."""
    return quick_main_job.figures


def test_every_report_figure_passes_the_lint(report_figures):
    names = {n for n, _ in report_figures}
    assert {"tightness_ratios", "contraction_contraction_rates",
            "curve_drift_theorem_seed004"} <= names, names
    _assert_clean(report_figures, 8)


def test_a_reproduce_figure_is_linted_as_it_is_saved(tmp_path):
    """Every item's figure is linted by tests/verify/reproduce/conftest.py while the tiny-size
    tests run them all; here one item through the CLI: linted, in the house style, PNG + SVG."""
    from PIL import Image

    with collecting() as found:
        assert main(["reproduce", "004:fig3", "--size", "tiny", "--backend", "numpy", "--out",
                     str(tmp_path / "r")]) == 0
    assert [n for n, _ in found] == ["004:fig3"]
    _assert_clean(found, 1)
    with Image.open(tmp_path / "r" / "004-fig3" / "figure.png") as im:
        assert im.info["dpi"][0] == pytest.approx(300, abs=1)
        assert im.size[0] <= 6.45 * 300
    assert (tmp_path / "r" / "004-fig3" / "figure.svg").read_text().lstrip().startswith("<?xml")


def test_the_tightness_bracket_figure_passes_the_lint(tmp_path):
    """plot_brackets saves through verify.figures.save like every figure: linted as saved, 300
    dpi PNG + SVG (asked for as .svg too), A4 text width."""
    from PIL import Image

    from verify.figures import plot_brackets

    rows = [{"bound_id": "drift.plateau",
             "params": {"eta": 0.1, "L": 1.0, "zeta": 1.0, "tau": tau},
             "bound_value": 0.2 * tau, "worst_case_upper": 0.01 * tau,
             "worst_case_lower": 0.009 * tau * (tau > 1), "ratio_lo": 0.045 * (tau > 1),
             "ratio_hi": 0.05, "exact": True, "relaxed": [], "scope": [],
             "ordering": {"holds": True}} for tau in (1, 2, 4, 8)]
    with collecting() as found:
        png = plot_brackets(rows, "tau", tmp_path / "b.png")
        svg = plot_brackets(rows, "tau", tmp_path / "c.svg")
    assert [n for n, _ in found] == ["b", "c"]
    _assert_clean(found, 2)
    assert png == tmp_path / "b.png" and svg == tmp_path / "c.svg"
    for stem in ("b", "c"):
        with Image.open(tmp_path / f"{stem}.png") as im:
            assert im.info["dpi"][0] == pytest.approx(300, abs=1)
            assert im.size[0] <= 6.45 * 300
        assert (tmp_path / f"{stem}.svg").read_text().lstrip().startswith("<?xml")


def test_theory_vs_measured_with_a_negative_term_passes_the_lint():
    """A term < 0 somewhere is drawn as its magnitude on a log axis with the sign marked
    (never a symmetric-log axis, never dropped)."""
    import pandas as pd

    from verify.figures import theory_vs_measured

    t = np.arange(1, 21, dtype=float)
    df = pd.DataFrame({"round": t, "seed": 0, "measured": 1 / t ** 2, "term_speed": 10 / t,
                       "term_correction": -0.5 / t, "verdict": "holds"})
    df["bound_value"] = df["term_speed"] + df["term_correction"]
    fig = theory_vs_measured(df)
    assert fig.axes[0].get_yscale() == "log"
    assert any(ln.get_marker() == "v" for ln in fig.axes[0].lines)
    assert lint(fig) == []
