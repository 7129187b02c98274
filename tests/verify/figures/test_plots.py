"""Figures a researcher would publish: no stacked areas on log axes, legends outside the data,
titles in words, the tightness figure readable at A4 width, colours that follow the verdict,
claimed rates drawn. Small synthetic frames and results only (fast)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from PIL import Image  # noqa: E402

import boundlab  # noqa: E402
from boundlab.errors import DomainError  # noqa: E402
from verify.compare import CheckResult  # noqa: E402
from verify.figures import (  # noqa: E402
    lint,
    series,  # noqa: E402
    theory_vs_measured,
)
from verify.figures.ratios import ratio_figure  # noqa: E402
from verify.figures.style import A4_WIDTH, VERDICT_COLORS, save  # noqa: E402
from verify.report import write_report  # noqa: E402
from verify.tightness.plots import plot_brackets  # noqa: E402

BOUND = "drift.round_progress"
ID_LIKE = re.compile(r"\b[a-z][a-z0-9]*\.[a-z][a-z0-9_]+\b")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _frame(span: str, verdicts=("holds", "holds"), seeds=3):
    """Two panels (local_steps 2 and 8) x seeds x 10 rounds; ``span`` 'wide' puts the curves
    over > 2 decades (a log axis), 'narrow' within a factor 3 (a linear axis)."""
    rows = []
    t = np.arange(1, 11, dtype=float)
    for steps, verdict in zip((2, 8), verdicts):
        for seed in range(seeds):
            if span == "wide":
                terms = {"term_progress": 10 / t, "term_drift": np.full_like(t, 1e-3)}
                m = 0.01 / t * (1 + 0.05 * seed)
            else:
                terms = {"term_progress": 1 + 1 / t, "term_drift": np.full_like(t, 0.2)}
                m = 0.5 + 0.02 * seed + 0 * t
            bound = terms["term_progress"] + terms["term_drift"]
            rows.append(pd.DataFrame({"local_steps": steps, "seed": seed, "round": t,
                                      "measured": m, "bound_value": bound, "bound": BOUND,
                                      "lhs": "round_avg_gap", "verdict": verdict, **terms}))
    return pd.concat(rows, ignore_index=True)


def _polys(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _titles(fig):
    return [fig.get_suptitle()] + [ax.get_title() for ax in fig.axes]


def _assert_titles_in_words(fig):
    for text in _titles(fig):
        assert "_" not in text, text
        assert not ID_LIKE.search(text), text
        assert not any(i in text for i in boundlab.ids()), text


def _assert_legends_outside(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), "legend covers the data"


def _assert_fonts_and_nothing_clipped(fig, width=A4_WIDTH):
    assert fig.get_figwidth() <= width + 1e-9
    fig.canvas.draw()
    for text in fig.findobj(matplotlib.text.Text):
        if text.get_visible() and text.get_text().strip():
            assert text.get_fontsize() >= 8, (text.get_text(), text.get_fontsize())
    # everything drawn lies inside the figure (inches): nothing is clipped at its edges
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    tol = 0.02
    assert drawn.x0 >= -tol and drawn.x1 <= fig.get_figwidth() + tol, drawn
    assert drawn.y0 >= -tol and drawn.y1 <= fig.get_figheight() + tol, drawn


def test_log_axis_draws_terms_as_lines_never_stacked_areas():
    fig = theory_vs_measured(_frame("wide"), facet="local_steps")
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert ax.get_yscale() == "log"
        assert len(_polys(ax)) == 1  # the confidence band only
        labels = [line.get_label() for line in ax.get_lines()]
        # measured, bound, the drift term; the progress term equals the bound within 1 %
        # everywhere: it would hide under the bound's line, so it is named, not drawn
        assert len(ax.get_lines()) == 3, labels
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(s.startswith("term: client drift") for s in texts)
    assert not any(s.startswith("term: progress") for s in texts)
    assert "equal to the bound (under its line): progress" in \
        fig.legends[0].get_title().get_text()
    assert not any("stacked" in s for s in texts)
    # asking for a log axis with terms that could stack still gives lines
    fig = theory_vs_measured(_frame("narrow"), facet="local_steps", yscale="log")
    assert all(ax.get_yscale() == "log" and len(_polys(ax)) == 1 for ax in fig.axes)


def test_linear_axis_stacks_terms_up_to_the_bound():
    df = _frame("narrow")
    fig = theory_vs_measured(df, facet="local_steps")
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear"
    polys = _polys(ax)
    assert len(polys) == 3  # two stacked terms + the band
    top = max(polys[:2], key=lambda p: p.get_paths()[0].vertices[:, 1].max())
    bound = df[(df.local_steps == 2) & (df.seed == 0)]["bound_value"].to_numpy()
    assert top.get_paths()[0].vertices[:, 1].max() == pytest.approx(bound.max())


def test_terms_that_do_not_add_up_to_the_bound_are_not_stacked():
    df = _frame("narrow")
    df["bound_value"] *= 1.5  # e.g. a clipped bound: stacking would misstate it
    fig = theory_vs_measured(df, facet="local_steps")
    assert all(ax.get_yscale() == "linear" and len(_polys(ax)) == 1 for ax in fig.axes)


def test_theory_vs_measured_layout_titles_labels_and_files(tmp_path):
    fig = theory_vs_measured(_frame("wide", ("holds", "VIOLATED")), facet="local_steps",
                             path=tmp_path / "fig")
    _assert_legends_outside(fig)
    _assert_titles_in_words(fig)
    _assert_fonts_and_nothing_clipped(fig)
    assert "Dhasade" in fig.get_suptitle() and "Lemma 2.2" in fig.get_suptitle()
    assert fig.axes[0].get_ylabel().startswith("round-average gap $")
    assert fig.axes[0].get_xlabel() == "round t"
    assert [ax.get_title() for ax in fig.axes] == ["local steps \u03c4 = 2: holds",
                                                   "local steps \u03c4 = 8: VIOLATED"]
    measured = [next(ln for ln in ax.get_lines() if ln.get_zorder() == 5) for ax in fig.axes]
    assert [to_rgba(ln.get_color()) for ln in measured] == [
        to_rgba(VERDICT_COLORS["holds"]), to_rgba(VERDICT_COLORS["VIOLATED"])]
    with Image.open(tmp_path / "fig.png") as im:
        assert im.info["dpi"][0] == pytest.approx(300, abs=1)
        assert im.size[0] <= (A4_WIDTH + 0.1) * 300
    assert (tmp_path / "fig.svg").read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png", "fig.svg"]  # no temp left
    with pytest.raises(DomainError, match="yscale"):
        theory_vs_measured(_frame("wide"), facet="local_steps", yscale="sqrt")


def test_one_panel_per_grid_value_in_rows_of_at_most_three():
    frames = [_frame("wide").assign(local_steps=s) for s in range(1, 7)]
    fig = theory_vs_measured(pd.concat(frames, ignore_index=True), facet="local_steps")
    assert len(fig.axes) == 6
    assert len({round(ax.get_position().y0, 3) for ax in fig.axes}) == 2
    assert lint(fig) == []  # one y label for both rows: none printed over another
    assert fig.get_supylabel().startswith("round-average gap")


# --- the report's figures, from synthetic check results -------------------------------------

def _curve_result(case, verdict="holds", check="skew_corollary_quadratic"):
    b = boundlab.get("skew.corollary_gamma")
    T = np.arange(2, 42, 2, dtype=float)
    r = CheckResult(check, b.id, b.source, "quadratic (N=5, L=4, mu=1)", verdict,
                    ratio=20.0, case=case)
    r.series = {"kind": "curve", "x": T, "measured": 0.5 / T, "bound": 300 / T + 1.0,
                "terms": {"speed": 300 / T, "error": np.ones_like(T)},
                "xlabel": "SGD iteration T", "ylabel": "F(w_T) - F*",
                "title": f"BM corollary (corrected), {case}"}
    return r


CASES = ("fedavg", "fedsoftmax_temperature10", "fedsoftmax_temperature1",
         "fedsoftmax_temperature0.1", "fedmax", "fedmax-k_k2")


def test_near_duplicate_curves_become_one_multi_panel_figure():
    rs = [_curve_result(c) for c in CASES]
    rs[-1].verdict = "VIOLATED"
    fig = series.curve_group(rs)
    assert len(fig.axes) == 6
    _assert_titles_in_words(fig)
    _assert_legends_outside(fig)
    _assert_fonts_and_nothing_clipped(fig)
    assert "Ben Mansour" in fig.get_suptitle() and "Corollary 4" in fig.get_suptitle()
    assert fig.axes[-1].get_title().startswith("FedMax(k), k = 2")
    assert lint(fig) == []
    assert all(ax.get_yscale() == "log" and len(_polys(ax)) == 0 for ax in fig.axes)


def _claim(kind_series, statement, paper, verdict="supported", **kw):
    r = CheckResult("c_claim", "skew.rho_range", paper, "quadratic", verdict, kind="claim",
                    statement=statement, case="x_case", **kw)
    r.series = kind_series
    return r


@pytest.mark.parametrize("rate", [-1.0, -0.5])
def test_alpha_figure_draws_the_claimed_rate_as_a_labelled_reference_line(rate):
    t = np.arange(1, 801, dtype=float)
    s = {"kind": "alpha_vs_p", "t": t, "err": 2.0 * t ** -1.0,
         "title": "FedSoftMax (T = 1): mean ||alpha_t - p||_1 over 4 seeds"}
    if rate != -1.0:
        s["rate"] = rate
    r = _claim(s, "alpha_t converges to p at rate 1/t", "seed 000, Fig. 6",
               statistic=-1.02, statistic_lo=-1.1, statistic_hi=-0.95)
    fig = series.alpha_vs_p(r)
    ax = fig.axes[0]
    words = "1/t" if rate == -1.0 else "t^-0.5"
    ref = [ln for ln in ax.get_lines() if f"claimed rate {words}" in ln.get_label()]
    assert len(ref) == 1
    x, y = ref[0].get_data()
    assert np.polyfit(np.log(x), np.log(y), 1)[0] == pytest.approx(rate)
    assert any("measured slope -1.02" in ln.get_label() for ln in ax.get_lines())
    _assert_legends_outside(fig)
    _assert_titles_in_words(fig)
    _assert_fonts_and_nothing_clipped(fig)


def test_claim_figures_have_outside_legends_and_titles_in_words():
    u = _claim({"kind": "ushape", "K": [1, 2, 5, 10], "measured": [0.3, 0.2, 0.1, 0.2],
                "bound": [0.5, 0.4, 0.3, 0.35], "argmin_measured": 5, "argmin_bound": 5,
                "title": "FedAU weight error vs K (N=30)"}, "U-shaped in K",
               "seed 002, Sec. 4 (choice of K)")
    t = np.arange(0, 40)
    c = _claim({"kind": "contraction", "rounds": t,
                "curves": {"fedavg": 10 * 0.8 ** t, "beta_0.5": 10 * 0.7 ** t},
                "factors": {"fedavg": 0.9, "beta_0.5": 0.85}},
               "eq. (9): beta_0.5 <= FedAvg", "seed 003, eq. (9) (Sec. 5)", verdict="refuted")
    for fig in (series.ushape(u), series.contraction(c)):
        _assert_legends_outside(fig)
        _assert_titles_in_words(fig)
        _assert_fonts_and_nothing_clipped(fig)
        assert lint(fig) == []
    # the caption says which lines are drawn: no promise of dashed rates without factors
    assert "dashed" in series.contraction(c).caption
    c.series = {k: v for k, v in c.series.items() if k != "factors"}
    bare = series.contraction(c)
    assert "dashed" not in bare.caption
    assert all(ln.get_linestyle() == "-" for ln in bare.axes[0].get_lines())
    refuted = series.contraction(c).axes[0]
    assert all(to_rgba(s.get_edgecolor()) == to_rgba(VERDICT_COLORS["refuted"])
               for s in refuted.spines.values())


def test_search_figures_of_one_check_form_one_figure():
    rs = []
    for bid in ("drift.plateau", "drift.client_drift"):
        b = boundlab.get(bid)
        r = CheckResult("drift_worst_instance", bid, b.source, "worst instance of quadratic",
                        "holds", ratio=5.0, case=bid)
        r.series = {"kind": "search", "trace": np.linspace(0.01, 0.2, 12),
                    "title": f"worst-instance search: {bid} (12 instances)"}
        rs.append(r)
    fig = series.search_group(rs)
    assert len(fig.axes) == 2
    _assert_legends_outside(fig)
    _assert_titles_in_words(fig)
    _assert_fonts_and_nothing_clipped(fig)


def _bound_result(bid, verdict, ratio, case, problem="toy", **kw):
    b = boundlab.get(bid)
    return CheckResult("chk", bid, b.source, problem, verdict, ratio=ratio, case=case, **kw)


def _many_results(n_per_family=15):
    rs = []
    for i in range(n_per_family):
        rs.append(_bound_result("drift.fedavg_convex", "holds", 10.0 ** -(i % 7), f"tau={i}"))
        rs.append(_bound_result("skew.corollary_gamma", "holds", 3.0 + i,
                                "fedsoftmax_temperature0.1",
                                problem=("quadratic (N=5)", "logistic-synthetic")[i % 2]))
        rs.append(_bound_result("weight_error.average", "holds", 1.5, f"K={i}"))
        rs.append(_bound_result("contraction.beta_sc", "holds", 100.0, "beta_0.5",
                                tightness={"ratio_lo": 1 / 40, "ratio_hi": 1 / 20}))
    return rs


def test_tightness_figure_is_readable_at_a4_width(tmp_path):
    rs = _many_results(4)
    rs.append(_bound_result("drift.plateau", "VIOLATED", 0.5, "tau=50"))
    rs.append(_bound_result("drift.plateau", "not-applicable", 3.0, "paper protocol"))
    fig = ratio_figure(rs)
    _assert_fonts_and_nothing_clipped(fig)
    _assert_legends_outside(fig)
    for ax in fig.axes:
        for label in ax.get_yticklabels():
            assert "_" not in label.get_text() and not ID_LIKE.search(label.get_text())
    # every bar explained: its colour is a verdict named in the legend
    legend = fig.legends[0]
    explained = {to_rgba(h.get_facecolor()) for h in legend.legend_handles
                 if isinstance(h, matplotlib.patches.Patch)}
    bars = [p for ax in fig.axes for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)
            and p.get_width() > 0 and p.get_height() < 1]
    assert len(bars) == len(rs) - 1  # the not-applicable check has no bar ...
    assert {to_rgba(b.get_facecolor()) for b in bars} <= explained
    assert "not applicable" in legend.get_title().get_text()  # ... and is counted
    with Image.open(save(fig, tmp_path / "tightness")) as im:
        assert im.size[0] <= (A4_WIDTH + 0.1) * 300


def test_bar_colour_follows_the_verdict_not_the_ratio():
    rs = [_bound_result("drift.plateau", "holds", 0.9, "within noise"),
          _bound_result("drift.plateau", "VIOLATED", 1.5, "on a worse instance"),
          _bound_result("drift.plateau", "holds", 3.0, "plain")]
    bars = [p for p in ratio_figure(rs).axes[0].patches if p.get_height() < 1]
    assert [to_rgba(b.get_facecolor()) for b in bars] == [
        to_rgba(VERDICT_COLORS[v]) for v in ("holds", "VIOLATED", "holds")]


def test_report_lists_each_figure_with_its_caption_and_svg(tmp_path):
    rs = [_curve_result(c) for c in CASES[:2]] + _many_results(1)
    out = write_report(rs, tmp_path / "out")
    md = (out / "report.md").read_text()
    listed = re.findall(r"^\*(\S+\.png)\* \u2014 (.+)$", md, flags=re.M)
    assert [name for name, _ in listed] == ["curve_skew_corollary_quadratic.png",
                                           "tightness_ratios.png"]
    for name, caption in listed:
        assert f"](figures/{name})" in md
        assert (out / "figures" / name).exists()
        assert (out / "figures" / name.replace(".png", ".svg")).exists()
        assert "_" not in caption and not ID_LIKE.search(caption)
    assert "Ben Mansour" in listed[0][1]


def test_bracket_plot_in_words_at_a4_width(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(plt, "close", drawn.append)
    rows = [{"bound_id": "drift.plateau",
             "params": {"eta": 0.1, "L": 1.0, "zeta": 1.0, "tau": tau},
             "bound_value": 0.2 * tau, "worst_case_upper": 0.01 * tau,
             "worst_case_lower": 0.009 * tau, "ratio_lo": 0.045, "ratio_hi": 0.05,
             "exact": True, "relaxed": [], "scope": [],
             "ordering": {"holds": True}} for tau in (1, 2, 3)]
    path = plot_brackets(rows, "tau", tmp_path / "b.png")
    with Image.open(path) as im:
        assert im.size[0] <= (A4_WIDTH + 0.1) * 300
        assert im.info["dpi"][0] == pytest.approx(300, abs=1)
    # like every figure: 300 dpi PNG + SVG through verify.figures.save
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.png", "b.svg"]
    assert (tmp_path / "b.svg").read_text().lstrip().startswith("<?xml")
    assert drawn[0].axes[1].get_ylabel() == "worst case / bound B"  # measured / bound
    fig = drawn[0]
    _assert_titles_in_words(fig)
    _assert_legends_outside(fig)
    assert "Dhasade" in fig.get_suptitle() and "\u03b7 = 0.1" in fig.get_suptitle()
    assert fig.axes[1].get_xlabel() == "local steps per round \u03c4"
    for text in fig.findobj(matplotlib.text.Text):
        assert not text.get_text().strip() or text.get_fontsize() >= 8


# --- issue 22: the bound on top, terms never lost, running averages, A4 ----------------------

def test_the_bound_is_drawn_on_top_of_its_terms():
    fig = theory_vs_measured(_frame("wide"), facet="local_steps")
    for ax in fig.axes:
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        bound = next(ln for ln in ax.get_lines() if to_rgba(ln.get_color()) == to_rgba("k"))
        terms = [ln for ln in ax.get_lines() if ln.get_linestyle() not in ("-", "solid")]
        assert terms and all(bound.get_zorder() > t.get_zorder() for t in terms), lines


def test_a_term_zero_everywhere_is_named_not_promised():
    df = _frame("wide")
    df["term_noise"] = 0.0
    fig = theory_vs_measured(df, facet="local_steps")
    leg = fig.legends[0]
    texts = [t.get_text() for t in leg.get_texts()]
    assert not any("noise" in t or "some panels" in t for t in texts), texts
    assert "= 0 everywhere, not drawn: gradient noise" in leg.get_title().get_text()


def test_a_geometric_grid_gets_a_log_x_axis():
    frames = [_frame("wide").assign(tau=v) for v in (1, 10, 100, 1000)]
    df = pd.concat(frames, ignore_index=True)
    df = df[df["round"] == 10].assign(local_steps=2)
    fig = theory_vs_measured(df[df.seed < 3], x="tau")
    assert fig.axes[0].get_xscale() == "log"
    assert theory_vs_measured(_frame("wide"), facet="local_steps").axes[0].get_xscale() \
        == "linear"  # rounds 1..10: an arithmetic grid


def test_a_time_averaged_bound_against_rounds_is_drawn_at_every_T():
    import verify

    df = verify.sweep("seed004-toy", "fedavg", grid={"local_steps": [2, 4]}, seeds=1, rounds=8,
                      bound="drift.fedavg_convex", lr=0.1)
    fig = theory_vs_measured(df, facet="local_steps")
    b = boundlab.get("drift.fedavg_convex")
    for ax, steps in zip(fig.axes, (2, 4)):
        run = df[df.local_steps == steps].sort_values("round")
        judged = run.dropna(subset=["measured"]).iloc[0]
        bound = next(ln for ln in ax.get_lines() if to_rgba(ln.get_color()) == to_rgba("k"))
        measured = next(ln for ln in ax.get_lines() if ln.get_zorder() == 5)
        T, y = measured.get_data()
        assert list(T) == list(range(1, 9))  # every T, not one point
        gap = run["shadow_gap"].to_numpy()
        assert y == pytest.approx([gap[:t].mean() for t in range(1, 9)])  # running averages
        assert y[-1] == pytest.approx(judged["measured"])
        params = {n: judged[f"param_{n}"] for n in b.params}
        assert bound.get_ydata()[-1] == pytest.approx(judged["bound_value"])
        assert bound.get_ydata()[2] == pytest.approx(b.evaluate(**{**params, "T": 3}))


def test_the_tightness_figure_bands_clips_and_fits_a_page():
    rs = [_bound_result("drift.fedavg_convex", "holds", r, f"tau={i}")
          for i, r in enumerate((0.5, 0.02, 2e-5, 1e-18))]  # measured / bound
    rs += [_bound_result("skew.corollary_gamma", "holds", 1 / (3.0 + i), f"fedmax_k{i}")
           for i in range(80)]
    fig = ratio_figure(rs)
    assert fig.get_figheight() <= 9.7
    colors = {to_rgba(p.get_facecolor()) for ax in fig.axes for p in ax.patches}
    assert len(colors) == 3  # tight, loose, vacuous: not all one green
    lo, hi = fig.axes[-1].get_xlim()
    assert lo >= 1e-9 and hi <= 10  # the 1e-18 ratio is clipped, the axis follows the data
    assert "drawn at it" in fig.legends[0].get_title().get_text()
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert any("tightest of" in s for s in labels)  # 80 cases of one statement: one bar
    assert lint(fig) == []
