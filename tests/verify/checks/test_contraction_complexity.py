"""Seed 003's T_eps (verify.checks.contraction_complexity): the measured rounds are the first
grid point whose own run reaches eps (checked by separate runs), and a T_eps 1000x too small
is VIOLATED."""

from __future__ import annotations

import dataclasses

import numpy as np

import boundlab
import toys
from verify.checks import contraction_complexity as cc
from verify.checks.contraction import NEAR, E, _problem
from verify.compare import compare


def _avg(prob, T, L):
    tr = toys.run(prob, "fedavg", rounds=T, seed=0, local_steps=E,
                  lr=1.0 / (2.0 * L * np.sqrt(T * E)), x0=prob.x_star + NEAR)
    return float(np.mean(tr.grad_norm2[:-1]))


def test_rounds_needed_is_the_first_grid_point_reaching_eps():
    prob, consts = _problem()
    L = consts.L.value
    eps = cc.EPS_REL * float(np.sum(prob.grad_F(prob.x_star + NEAR) ** 2))
    T, _, _ = cc.rounds_needed(prob, "fedavg", {}, L, eps, 4096)
    assert _avg(prob, T, L) <= eps < _avg(prob, T // 2, L)


def test_a_t_eps_far_too_small_is_violated():
    """On the check's own result at the main job's quick size (the session's quick main job
    is a fixture of another file: with --dist loadfile it would run twice)."""
    from verify.suite import Context

    rs = cc.contraction_rounds_to_eps(Context(quick=True))
    assert sorted({x.verdict for x in rs}) == ["holds", "order-only"]
    r = next(x for x in rs if x.bound_id == "contraction.t_eps_fedprox")
    assert r.verdict == "holds" and r.measured <= r.bound_value
    b = boundlab.get("contraction.t_eps_fedprox")
    wrong = dataclasses.replace(b, id="mine.t_eps_small", expr=b.expr / 1000, stable=None,
                                terms={})
    res = compare(wrong, [r.measured], params=dict(r.params), deterministic=True)
    assert res.verdict == "VIOLATED"
