"""verify.sweep: tidy table, per-row verdicts, resume after SIGKILL, Dask == local."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

import toys
import verify
from boundlab.errors import DomainError, UnknownNameError
from verify.sweep import route

BOUND = "drift.fedavg_convex"

SCRIPT = textwrap.dedent("""
    import os, sys, time
    import toys, verify

    def factory(n_clients=4, dim=2, heterogeneity=1.0):
        if os.environ.get("SWEEP_SLOW"):
            time.sleep(0.5)  # slow points, so the sweep can be killed mid-way
        return toys.quadratic(n_clients=n_clients, dim=dim, L=2.0, mu=1.0,
                              heterogeneity=heterogeneity, seed=1)

    if __name__ == "__main__":
        df = verify.sweep(factory, "fedavg", grid={"lr": [0.02, 0.05, 0.1],
                          "heterogeneity": [0.5, 2.0]}, seeds=2, rounds=6,
                          bound="drift.fedavg_convex", out=sys.argv[1], local_steps=2)
        df.to_pickle(sys.argv[2])
""")


def _run(script, out, result, slow=False):
    env = {**os.environ, "SWEEP_SLOW": "1" if slow else ""}
    return subprocess.Popen([sys.executable, str(script), str(out), str(result)], env=env)


def test_sigkill_mid_sweep_then_resume_gives_the_uninterrupted_rows(tmp_path):
    script = tmp_path / "sweep_script.py"
    script.write_text(SCRIPT)
    out = tmp_path / "killed"
    proc = _run(script, out, tmp_path / "never.pkl", slow=True)
    deadline = time.monotonic() + 60
    while len(list(out.glob("point-*"))) < 2 and time.monotonic() < deadline:
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("point-*")}
    assert 2 <= len(before) < 6, before  # killed mid-way: some points done, not all
    assert not (tmp_path / "never.pkl").exists()

    assert _run(script, out, tmp_path / "resumed.pkl").wait() == 0
    assert _run(script, tmp_path / "full", tmp_path / "full.pkl").wait() == 0
    resumed = pd.read_pickle(tmp_path / "resumed.pkl")
    full = pd.read_pickle(tmp_path / "full.pkl")
    pd.testing.assert_frame_equal(resumed, full)
    assert len(full) == 6 * 2 * 7  # points x seeds x rounds 0..6: nothing lost or duplicated
    assert not full.duplicated(["lr", "heterogeneity", "seed", "round"]).any()
    # the points finished before the kill were kept, not recomputed
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("point-*")
            if p.name in before} == before
    assert len(list(out.glob("point-*"))) == 6
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_dask_local_cluster_gives_the_local_table():
    from verify.checks._runs import DIVERGED, trace_values

    # measures run in the workers: importable functions (the checks' own)
    kw = dict(grid={"lr": [0.05, 0.2], "local_steps": [1, 3]}, seeds=[0, 3], rounds=5,
              bound=BOUND, n_clients=4, dim=2, noise_std=0.1,
              measures={**DIVERGED, **trace_values("rho_bar")})
    local = verify.sweep("quadratic", "fedavg", **kw)
    dask = verify.sweep("quadratic", "fedavg", executor="dask", n_workers=2, **kw)
    pd.testing.assert_frame_equal(local, dask)
    assert set(local["verdict"].dropna()) <= {"holds", "VIOLATED", "not-applicable"}
    assert local["rho_bar"].notna().sum() == 2 * 2 * 2  # one per run, on its final row


def _alpha_l1(trace, problem):
    return np.abs(trace.alpha - problem.p[None, :]).sum(axis=1)


def test_measures_add_per_run_per_state_and_per_round_columns_bit_for_bit():
    prob = toys.quadratic(n_clients=3, dim=2, seed=0, noise_std=0.2)
    measures = {"final_x1": lambda tr, pb: tr.final_model[1],  # per run
                "why": lambda tr, pb: "ok" if tr.diverged_at is None else "diverged",
                "gap_twice": lambda tr, pb: 2 * tr.gap,  # per state: rounds + 1 values
                "alpha_l1": _alpha_l1}  # per round: rounds values
    df = verify.sweep(prob, "fedavg", grid={"lr": [0.05, 0.1]}, seeds=[0, 2], rounds=4,
                      local_steps=2, batch_size=1, measures=measures)
    assert len(df) == 2 * 2 * 5 and "measures" in df.attrs["sweep"]
    for (lr, seed), rows in df.groupby(["lr", "seed"]):
        tr = toys.run(prob, "fedavg", rounds=4, seed=int(seed), lr=lr, local_steps=2,
                      batch_size=1)
        final = rows["round"] == 4
        assert rows.loc[final, "final_x1"].item() == tr.final_model[1]
        assert rows.loc[~final, "final_x1"].isna().all()
        assert rows["why"].iloc[:-1].isna().all() and rows["why"].iloc[-1] == "ok"
        np.testing.assert_array_equal(rows["gap_twice"], 2 * tr.gap)
        np.testing.assert_array_equal(rows["alpha_l1"][:-1], _alpha_l1(tr, prob))
        assert np.isnan(rows["alpha_l1"].iloc[-1])


def test_measures_are_checked():
    kw = dict(grid={"lr": [0.1]}, seeds=1, rounds=2, n_clients=3, dim=2)
    for bad in ({"seed": _alpha_l1}, {"lr": _alpha_l1}, {"measured": _alpha_l1},
                {"x": 3.0}):
        with pytest.raises(DomainError, match="measures"):
            verify.sweep("quadratic", "fedavg", measures=bad, **kw)
    with pytest.raises(DomainError, match="not already a column"):
        verify.sweep("quadratic", "fedavg", measures={"gap": _alpha_l1}, **kw)
    with pytest.raises(DomainError, match=r"measures\['m'\].*length 3"):
        verify.sweep("quadratic", "fedavg", measures={"m": lambda tr, pb: np.zeros(7)}, **kw)
    # no measures: the sweep's definition (sweep.json) is the one it always was
    assert "measures" not in verify.sweep("quadratic", "fedavg", **kw).attrs["sweep"]


def test_empty_grid_prebuilt_algorithm_and_toys_run_keywords_pass_through():
    prob = toys.quadratic(n_clients=4, dim=2, seed=1)
    proc = toys.participation.Bernoulli(np.full(4, 0.5))
    kw = dict(grid={}, seeds=[1, 4], rounds=3, lr=lambda t: 0.1 / (1 + t), local_steps=2,
              participation=proc, record="sync")
    df = verify.sweep(prob, "fedavg", **kw)
    assert list(df.columns[:2]) == ["seed", "round"] and len(df) == 2 * 4
    algo = toys.algorithms.get("fedavg")
    assert isinstance(algo, toys.Algorithm)
    pd.testing.assert_frame_equal(verify.sweep(prob, algo, **kw), df)
    for seed, rows in df.groupby("seed"):
        tr = toys.run(prob, "fedavg", rounds=3, seed=int(seed), lr=kw["lr"], local_steps=2,
                      participation=proc, record="sync")
        np.testing.assert_array_equal(rows["gap"], tr.gap)
        np.testing.assert_array_equal(rows["n_participants"][:-1], tr.n_participants)


def test_backend_and_device_pass_through_to_toys_run():
    pytest.importorskip("torch")
    kw = dict(grid={"lr": [0.1]}, seeds=1, rounds=2, n_clients=3, dim=2,
              measures={"backend_used": lambda tr, pb: tr.backend})
    torch_df = verify.sweep("quadratic", "fedavg", backend="torch", device="cpu", **kw)
    numpy_df = verify.sweep("quadratic", "fedavg", **kw)
    assert torch_df["backend_used"].iloc[-1] == "torch"
    assert numpy_df["backend_used"].iloc[-1] == "numpy"
    np.testing.assert_allclose(torch_df["gap"], numpy_df["gap"], rtol=1e-10)


def test_rows_are_one_per_point_seed_round_with_check_verdicts():
    prob = toys.make("seed004-toy")
    df = verify.sweep(prob, "fedavg", grid={"lr": [0.1, 0.2]}, seeds=2, rounds=8,
                      bound=BOUND, local_steps=4)
    assert list(df.columns[:3]) == ["lr", "seed", "round"]
    assert len(df) == 2 * 2 * 9
    assert np.array_equal(df["run_lr"].dropna().unique(), [0.1, 0.2])  # the run's own lr
    # a per-run quantity: judged once per run, on the final round's row
    judged = df[df["verdict"].notna()]
    assert (judged["round"] == 8).all() and len(judged) == 4
    for lr, rows in judged.groupby("lr"):
        ref = verify.check(BOUND, prob, "fedavg", rounds=8, seeds=2, lr=lr, local_steps=4)
        assert rows["measured"].tolist() == ref["measured"].tolist()
        assert rows["bound_value"].tolist() == ref["bound_value"].tolist()
        assert rows["verdict"].tolist() == ref["verdict"].tolist()
        terms = rows[[c for c in rows.columns if c.startswith("term_")]].sum(axis=1)
        np.testing.assert_allclose(terms, rows["bound_value"], rtol=1e-12)
    # the measured column is the run's avg shadow gap, from the table's own per-round rows
    one = df[(df["lr"] == 0.1) & (df["seed"] == 0)]
    assert one["measured"].dropna().iloc[0] == pytest.approx(one["shadow_gap"][:-1].mean())


def test_per_round_bound_has_a_verdict_per_round():
    # DKR Lemma 2.2: one inequality per round r < T, judged over the seeds round by round
    df = verify.sweep("seed004-toy", "fedavg", grid={"local_steps": [2, 4]}, seeds=2,
                      rounds=5, bound="drift.round_progress", lr=0.1)
    judged = df[df["verdict"].notna()]
    assert sorted(judged["round"].unique()) == [0, 1, 2, 3, 4]  # the final state has no round
    assert len(judged) == 2 * 2 * 5
    np.testing.assert_array_equal(judged["measured"], judged["shadow_gap"])
    np.testing.assert_array_equal(judged["param_drift_sum"], judged["drift_sum"])


def test_routing_between_problem_and_run():
    assert route("quadratic", {"dim": 3, "lr": 0.1, "seed": 2}) == (
        {"dim": 3, "seed": 2}, {"lr": 0.1})
    assert route(lambda n_clients=3: None, {"n_clients": 5, "lr": 0.1}) == (
        {"n_clients": 5}, {"lr": 0.1})
    assert route(toys.quadratic(3, 2, seed=0), {"dim": 3}) == ({}, {"dim": 3})


def test_bad_input_is_refused_before_any_work(tmp_path):
    with pytest.raises(UnknownNameError, match="executor"):
        verify.sweep("quadratic", "fedavg", grid={"lr": [0.1]}, seeds=1, rounds=2,
                     executor="threads")
    with pytest.raises(DomainError, match=r"grid\['lr'\]"):
        verify.sweep("quadratic", "fedavg", grid={"lr": []}, seeds=1, rounds=2)
    with pytest.raises(UnknownNameError, match="rounds"):
        verify.sweep(toys.quadratic(3, 2, seed=0), "fedavg", grid={"rounds": [1]}, seeds=1,
                     rounds=2, lr=0.1)
    with pytest.raises(UnknownNameError, match="measurable"):
        verify.sweep("quadratic", "fedavg", grid={"lr": [0.1]}, seeds=1, rounds=2,
                     bound="drift.plateau")
    kw = dict(grid={"lr": [0.1]}, seeds=1, rounds=2, n_clients=3, dim=2, out=tmp_path / "o")
    verify.sweep("quadratic", "fedavg", **kw)
    with pytest.raises(DomainError, match="different sweep"):
        verify.sweep("quadratic", "fedavg", **{**kw, "rounds": 3})


def test_cli_sweep_writes_the_table_and_errors_in_one_line(tmp_path, capsys):
    from verify.cli import main

    table = tmp_path / "t.parquet"
    argv = ["sweep", "fedavg", "--problem", "seed004-toy", "--grid", "lr=0.1,0.2", "--seeds",
            "2", "--rounds", "4", "--bound", BOUND, "--out", str(tmp_path / "o"), "--table",
            str(table), "local_steps=2", "--json"]
    assert main(argv) == 0
    import json

    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 2 * 2 * 5 and [p["lr"] for p in summary["points"]] == [0.1, 0.2]
    api = verify.sweep("seed004-toy", "fedavg", grid={"lr": [0.1, 0.2]}, seeds=2, rounds=4,
                       bound=BOUND, local_steps=2)
    pd.testing.assert_frame_equal(pd.read_parquet(table), api, check_like=False,
                                  check_frame_type=False)  # the API returns a ResultFrame
    assert main(["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.1",
                 "--executor", "threads"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1 and "executor" in err


def test_theory_vs_measured_draws_bound_terms_and_writes_png_svg(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from verify.figures import theory_vs_measured

    df = verify.sweep("seed004-toy", "fedavg", grid={"local_steps": [2, 4]}, seeds=2,
                      rounds=6, bound="drift.round_progress", lr=0.1)
    fig = theory_vs_measured(df, facet="local_steps", path=tmp_path / "fig", yscale="log")
    assert len(fig.axes) == 2 and all(ax.get_yscale() == "log" for ax in fig.axes)
    assert not any(ax.collections[1:] for ax in fig.axes)  # only the band is an area
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "bound (right-hand side)" in labels and any(s.startswith("term:") for s in labels)
    assert (tmp_path / "fig.svg").stat().st_size > 0
    from PIL import Image

    assert Image.open(tmp_path / "fig.png").info["dpi"][0] == pytest.approx(300, abs=1)
    with pytest.raises(DomainError, match="column"):
        theory_vs_measured(df, x="nope")


def test_object_grid_values_are_refused_with_the_name():
    import verify
    from boundlab.errors import DomainError

    with pytest.raises(DomainError, match=r"grid\['participation'\]"):
        verify.sweep("quadratic", "fedavg", grid={"participation": [object()]}, seeds=1,
                     rounds=2, lr=0.1)
