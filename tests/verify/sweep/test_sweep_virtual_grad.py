"""A sweep of a bound on BC's virtual averages runs with record="step" by itself and judges
the same quantity as a direct toys.run (verify.sweep.run_point)."""

import numpy as np
import pytest

import toys
import verify


def test_sweep_of_a_bc_bound_measures_the_virtual_averages():
    df = verify.sweep("quadratic", "beta", grid={"lr": [0.01]}, rounds=5, seeds=[0],
                      local_steps=3, beta=0.5, bound="contraction.beta_nc")
    row = df.dropna(subset=["verdict"]).iloc[-1]
    tr = toys.run(toys.make("quadratic"), "beta", rounds=5, seed=0, lr=0.01, local_steps=3,
                  beta=0.5, record="step")
    # (1/(T E)) sum_t sum_{k<E} ||grad F(wbar_{t,k})||^2, not the server models' mean
    assert row["measured"] == np.mean(tr.grad_norm2_virtual)
    assert row["measured"] != np.mean(tr.grad_norm2[:-1])


def test_the_running_plot_of_a_bc_bound_averages_the_virtual_averages():
    import matplotlib

    matplotlib.use("Agg")
    from verify.figures.theory import _running

    df = verify.sweep("quadratic", "beta", grid={"lr": [0.01]}, rounds=5, seeds=[0],
                      local_steps=3, beta=0.5, bound="contraction.beta_nc")
    run = _running(df, "round", "measured", None)
    judged = df.dropna(subset=["verdict"]).iloc[-1]
    # the running average at T = 5 is the judged value itself (same rounds, same quantity)
    assert run.loc[run["round"] == 5, "measured"].iloc[0] == pytest.approx(judged["measured"],
                                                                            rel=1e-12)
