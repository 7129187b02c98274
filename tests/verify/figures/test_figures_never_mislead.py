"""Figures never mislead (issue 31, item 5): each fix on the figure that showed it, and the lint
rule that now catches it on a figure made to break it. Small synthetic data only (fast)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from boundlab.errors import DomainError  # noqa: E402
from verify.compare import CheckResult  # noqa: E402
from verify.figures import (  # noqa: E402,E501
    VERDICT_COLORS,
    lint,
    plot_brackets,
    series,  # noqa: E402
    style,
    theory_vs_measured,
)
from verify.figures.lint import collecting  # noqa: E402
from verify.figures.style import case_words, suptitle  # noqa: E402
from verify.tightness.plots import BracketGrid  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _fig(w=4.0, h=3.0):
    with style():
        return plt.subplots(figsize=(w, h))


# --- the tightness plot: a verdict only where the data support it; missing points listed -----

def _row(tau, *, inaccurate=False):
    B, ub, lb = 0.2 * tau, 0.0008 * tau, 0.00081 * tau if inaccurate else 0.0007 * tau
    return {"bound_id": "drift.plateau", "params": {"eta": 0.1, "L": 1.0, "zeta": 1.0,
                                                     "tau": tau},
            "bound_value": B, "worst_case_upper": ub, "worst_case_lower": lb,
            "ratio_lo": lb / B, "ratio_hi": ub / B, "exact": True, "relaxed": [], "scope": [],
            "bracket": "inaccurate" if inaccurate else "ok",
            "verdict": "inaccurate: LB > UB" if inaccurate else "bound holds on the PEP class",
            "ordering": {"holds": not inaccurate}}


def _bracket_figure(rows, tmp_path, vary="tau", **kw):
    drawn = []
    with collecting() as found, pytest.MonkeyPatch.context() as mp:
        mp.setattr(plt, "close", drawn.append)
        plot_brackets(rows, vary, tmp_path / "b.png", **kw)
    return drawn[0], found[0][1]


def test_an_inaccurate_solve_of_a_bound_that_holds_250x_is_not_violated(tmp_path):
    """The record's ordering says holds False (LB > UB by solver noise) although UB/B = 1/250:
    the figure says 'inaccurate solve', frames it so, and marks the point hollow."""
    fig, problems = _bracket_figure([_row(2), _row(4, inaccurate=True)], tmp_path)
    title = fig.get_suptitle()
    assert "VIOLATED" not in title and "inaccurate solve at" in title, title
    assert "holds at" in title
    assert all(to_rgba(s.get_edgecolor()) == to_rgba(VERDICT_COLORS["inaccurate"])
               for ax in fig.axes for s in ax.spines.values())
    rings = [ln for ax in fig.axes for ln in ax.lines if ln.get_label().startswith("inaccurate")]
    assert len(rings) == 2 and list(rings[0].get_xdata()) == [4]
    assert fig.data_verdicts == {"holds", "inaccurate"}
    assert problems == []


def test_missing_points_are_listed_not_dropped(tmp_path):
    grid = BracketGrid([None, _row(2), None, None], "tau", [1, 2, 3, 4])
    fig, problems = _bracket_figure(grid, tmp_path)
    note = " ".join(t.get_text() for t in fig.texts)
    assert "not plotted" in note and "\u03c4 = 1, 3, 4" in note, note
    assert fig.missing_points == [1, 3, 4] and problems == []
    # without the requested values (a plain list), the count is still said
    fig, problems = _bracket_figure([None, _row(2)], tmp_path)
    assert "point 1 of 2" in " ".join(t.get_text() for t in fig.texts) and problems == []
    fig, problems = _bracket_figure([_row(2), None], tmp_path, requested=[2, 8])
    assert "\u03c4 = 8" in " ".join(t.get_text() for t in fig.texts)


def test_lint_catches_an_unsupported_verdict_and_an_unlisted_missing_point():
    fig, ax = _fig()
    ax.plot([1, 2], [1, 2])
    ax.set(xlabel="round t", ylabel="gap")
    fig.suptitle("PEP tightness (VIOLATED)")
    assert any("no data verdicts" in p for p in lint(fig))
    fig.data_verdicts = {"holds", "inaccurate"}
    assert any("title says VIOLATED but the data's verdicts are holds, inaccurate" in p
               for p in lint(fig))
    fig.suptitle("PEP tightness (holds)")
    fig.missing_points = [3]
    assert any("requested point 3 is missing" in p for p in lint(fig))


def test_bracket_axis_labels_are_words_not_doc_strings(tmp_path):
    rows = [dict(_row(2), params={"eta": 0.1, "t": t}) for t in (0, 1, 2, 3)]
    fig, problems = _bracket_figure(rows, tmp_path, vary="t")
    assert fig.axes[1].get_xlabel() == "round t" and problems == []
    assert all(float(v).is_integer() for v in fig.axes[1].get_xticks())
    fig, ax = _fig()
    ax.plot([0, 1], [1, 2])
    ax.set(xlabel="round index t >= 0 t", ylabel="gap")
    assert any("statement, not a name" in p for p in lint(fig))


# --- no symmetric-log axis ---------------------------------------------------------------

def _negative_term_frame():
    t = np.arange(1, 21, dtype=float)
    df = pd.DataFrame({"round": t, "seed": 0, "measured": 1 / t ** 2, "term_speed": 10 / t,
                       "term_correction": -0.5 / t, "verdict": "holds"})
    df["bound_value"] = df["term_speed"] + df["term_correction"]
    return df


def test_a_negative_term_is_drawn_as_its_magnitude_with_the_sign_marked():
    fig = theory_vs_measured(_negative_term_frame())
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"  # never symlog
    marks = [ln for ln in ax.lines if ln.get_marker() == "v"]
    assert len(marks) == 1 and np.all(marks[0].get_ydata() > 0)
    assert any("value < 0" in t.get_text() for t in fig.legends[0].get_texts())
    assert lint(fig) == []
    # asking for symlog gives the same honest axis
    assert theory_vs_measured(_negative_term_frame(), yscale="symlog").axes[0].get_yscale() \
        == "log"


def test_thirty_decades_are_floored_not_spread():
    df = _negative_term_frame()
    df["measured"] = 10.0 ** -(df["round"] * 1.5)  # down to 1e-30
    fig = theory_vs_measured(df)
    lo, hi = fig.axes[0].get_ylim()
    assert np.log10(hi / lo) < 12
    assert "numerical zero" in fig.legends[0].get_title().get_text()
    assert lint(fig) == []


def test_lint_rejects_a_symlog_axis():
    fig, ax = _fig()
    ax.plot([1, 2, 3], [1.0, -1.0, 1e-3])
    ax.set(yscale="symlog", xlabel="round t", ylabel="gap")
    assert any("symmetric-log y axis" in p for p in lint(fig))


# --- bands only where seeds vary; legends list only what is drawn ----------------------------

def _seeds_frame(identical):
    t = np.arange(1, 11, dtype=float)
    return pd.concat([pd.DataFrame({"round": t, "seed": s, "gap": 1 / t + (0 if identical
                                                                            else 0.01 * s)})
                      for s in range(3)], ignore_index=True)


def test_identical_runs_get_no_band_and_say_they_are_deterministic():
    fig = theory_vs_measured(_seeds_frame(True), measured="gap")
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert not fig.axes[0].collections and not any("band" in s for s in texts)
    assert any("identical: deterministic runs" in s for s in texts), texts
    fig = theory_vs_measured(_seeds_frame(False), measured="gap")
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("confidence band over seeds" in s for s in texts) and lint(fig) == []


def test_lint_catches_a_band_of_zero_width_and_a_line_hidden_under_another():
    fig, ax = _fig()
    x = np.arange(5.0)
    ax.plot(x, x + 1, "k-", lw=2, zorder=3, label="bound")
    ax.plot(x, x + 1, "C0--", lw=1, zorder=2, label="a term equal to it")
    ax.fill_between(x, x + 1, x + 1, color="C1", label="95 % confidence band")
    ax.set(xlabel="round t", ylabel="gap")
    fig.legend(loc="outside lower center")
    problems = lint(fig)
    assert any("area of zero width" in p for p in problems), problems
    assert any("'a term equal to it' is hidden" in p for p in problems), problems


def test_a_line_of_nan_in_a_legend_is_not_drawn():
    fig, ax = _fig()
    ax.plot([1, 2], [1, 2], label="measured")
    ax.plot([1, 2], [np.nan, np.nan], label="a term never computed")
    ax.set(xlabel="round t", ylabel="gap")
    fig.legend(loc="outside lower center")
    assert any("'a term never computed' is not drawn" in p for p in lint(fig))


# --- a rate line carries its floor --------------------------------------------------------

def _contraction(verdict="supported"):
    t = np.arange(0, 150)
    r = CheckResult("c", "contraction.beta_factor", "seed 003, eq. (9)", "quadratic",
                    verdict, kind="claim", statement="contracts at least as fast", case="x")
    r.series = {"kind": "contraction", "rounds": t,
                "curves": {"fedavg": 10 * 0.8 ** t + 1e-4}, "factors": {"fedavg": 0.9}}
    return r


def test_the_rate_line_keeps_its_floor_and_the_lint_checks_it():
    fig = series.contraction(_contraction())
    ax = fig.axes[0]
    rate = next(ln for ln in ax.lines if ln.get_gid() == "rate")
    measured = next(ln for ln in ax.lines if ln.get_gid() == "measured")
    assert np.all(rate.get_ydata() >= measured.get_ydata() * (1 - 1e-9))
    assert rate.get_ydata()[-1] == pytest.approx(1e-4, rel=2e-2)
    assert lint(fig) == []
    rate.set_ydata(10 * 0.9 ** np.arange(150))  # the floor dropped: crosses the curve
    assert any("rate line crosses below" in p for p in lint(fig))


# --- labels, ticks, titles, names -----------------------------------------------------------

def test_a_time_average_over_T_is_not_labelled_round_t():
    fig, ax = _fig()
    ax.plot([1, 2, 3], [1.0, 0.5, 0.3])
    ax.set(xlabel="round t", ylabel=r"average gap $(1/T)\sum_{t<T} F(x_t)$")
    assert any("time average" in p for p in lint(fig))
    r = CheckResult("c", "drift.fedavg_convex", "seed 004", "toy", "holds", ratio=0.5, case="a")
    r.series = {"kind": "curve", "x": np.arange(1, 6), "measured": np.ones(5),
                "bound": 2 * np.ones(5)}
    assert series.curve_group([r]).axes[0].get_xlabel() == "rounds T"


def test_integer_axes_get_integer_ticks():
    df = pd.DataFrame({"round": [0, 1, 2, 3], "seed": 0, "gap": [1.0, 0.7, 0.5, 0.4]})
    fig = theory_vs_measured(df, measured="gap")
    fig.canvas.draw()
    assert all(float(v).is_integer() for v in fig.axes[0].get_xticks())
    assert lint(fig) == []
    fig, ax = _fig()
    ax.plot([0, 1, 2, 3], [1.0, 0.7, 0.5, 0.45])
    ax.set(xlabel="round t", ylabel="gap")
    assert any("fractional ticks" in p for p in lint(fig))


def test_titles_are_never_cut():
    fig, ax = _fig(6.3, 3.0)
    text = " ".join(["a long title in words"] * 14)
    suptitle(fig, text)
    assert "\u2026" not in fig.get_suptitle() and fig.get_suptitle().split() == text.split()
    fig.suptitle("a title that was cut \u2026")
    assert any("title is cut" in p for p in lint(fig))


def test_raw_ids_become_names_and_the_lint_finds_them():
    assert case_words("fedsoftworse") == "FedSoftWorse"
    assert case_words("fedsoftbetteravgsoftworse") == "FedSoftBetterAvgSoftWorse"
    from verify.figures.reproduce import finish, paper_axes

    fig, axes = paper_axes(1)
    axes[0, 0].plot([1, 2], [0.5, 0.6], label="fedsoftworse")
    axes[0, 0].set(xlabel="round t", ylabel="accuracy")
    axes[0, 0].legend()
    fig = finish(fig)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["FedSoftWorse"]
    assert lint(fig) == []
    fig, ax = _fig()
    ax.plot([1, 2], [1, 2], label="drift.plateau on avg_shadow_gap")
    ax.set(xlabel="round t", ylabel="gap")
    ax.legend()
    problems = lint(fig)
    assert any('"drift.plateau"' in p for p in problems), problems
    assert any('"avg_shadow_gap"' in p for p in problems), problems


def test_every_axis_with_numbers_has_a_label():
    fig, ax = _fig()
    ax.plot([1, 10, 100], [1.5, 2.5, 3.2])
    ax.set_xlabel("local steps \u03c4")
    assert any("y axis without a label" in p for p in lint(fig))
    ax.set_ylabel("plateau of the gap")
    assert lint(fig) == []


# --- overlay and a two-way facet ------------------------------------------------------------

def _algos():
    t = np.arange(1, 9, dtype=float)
    rows = []
    for algo, k in (("fedavg", 1.0), ("fedprox", 2.0)):
        for lr in (0.1, 0.2):
            for steps in (2, 4):
                rows.append(pd.DataFrame({"round": t, "seed": 0, "algorithm": algo, "lr": lr,
                                          "local_steps": steps, "measured": k * lr / t,
                                          "bound_value": 5.0 * k / t, "verdict": "holds"}))
    return pd.concat(rows, ignore_index=True)


def test_overlay_compares_algorithms_on_one_axes():
    df = _algos()
    df = df[(df.lr == 0.1) & (df.local_steps == 2)]
    fig = theory_vs_measured(df, overlay="algorithm")
    assert len(fig.axes) == 1
    colours = {to_rgba(ln.get_color()) for ln in fig.axes[0].lines}
    assert len(colours) == 2  # one colour per algorithm, its bound dashed in it
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(s.startswith("FedAvg") for s in texts) and any(s.startswith("FedProx")
                                                               for s in texts)
    assert "dashed: bound" in texts and lint(fig) == []


def test_a_two_way_facet_draws_rows_by_columns():
    fig = theory_vs_measured(_algos(), facet=["lr", "local_steps"], overlay="algorithm")
    assert len(fig.axes) == 4
    titles = [ax.get_title().replace("\n", " ") for ax in fig.axes]
    assert titles[1].startswith("step size \u03b7 = 0.1, local steps \u03c4 = 4"), titles
    assert len({round(ax.get_position().y0, 3) for ax in fig.axes}) == 2
    assert lint(fig) == []
    with pytest.raises(DomainError, match="facet"):
        theory_vs_measured(_algos(), facet=["lr", "local_steps", "algorithm"])
