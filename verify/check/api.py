"""A generic check of any bound (catalogue or user) on a run or on a recorded log.

:func:`check` runs an algorithm on a problem over seeds, measures the bound's left-hand side
(``bound.lhs``) from the run, evaluates the right-hand side with the problem's constants, the
run's hyper-parameters and measured quantities, checks every precondition and judges with
:func:`verify.compare.compare` (the main job's rules). :func:`check_log` does the same for a
per-round log of any simulator (``toys.engine.trace_io`` writes one from a Trace).

Left-hand sides (``bound.lhs``) that a run measures
--------------------------------------------------
Per run (one row per seed; T = rounds):

* ``avg_shadow_gap`` -- (1/T) sum_{r<T} shadow_gap_r, with shadow_gap_r = (1/tau) sum_{k=1..tau}
  F(xbar^(r,k)) - F* (DKR's shadow sequence; ``Trace.avg_shadow_gap``);
* ``final_gap`` -- gap_T = F(x_T) - F* of the final server model;
* ``max_client_drift`` -- max over rounds of drift_max_r = max_{i,k} ||x_i^(r,k) - xbar^(r,k)||^2;
* ``avg_grad_norm2`` -- (1/T) sum_{t<T} ||grad F(x_t)||^2 (the server models: FedAU's
  Theorem 2 / Corollary 4); for a bound in BC's notation (:data:`PAPER_LHS`: its metadata's
  algorithm is fedprox, fedprox-bc or beta) ``avg_grad_norm2_virtual`` instead;
* ``avg_grad_norm2_virtual`` -- (1/(T E)) sum_{t<T} sum_{k=0}^{E-1} ||grad F(wbar_{t,k})||^2
  over the virtual averages after k local steps (wbar_{t,0} = x_t): BC's E||grad f(w_hat_T)||^2,
  w_hat_T uniform over them. Measured from the per-step gradients, so :func:`check` runs it
  with ``record="step"`` (the log column ``grad_norm2_virtual``,
  :attr:`toys.Trace.grad_norm2_virtual`); at E = 1 it is the server models' value;
* ``Pi`` -- max over rounds of kappa_max_r = max over participants of alpha_i / p_i.

Per round (one row per seed and round; the round enters the right side as below):

* ``gap_t`` -- gap_t = F(x_t) - F*, t = 0..T (the bound's ``t`` = the round);
* ``round_avg_gap`` -- shadow_gap_r, r < T, with ``dist0`` = dist2_r, ``dist_tau`` = dist2_{r+1},
  ``drift_sum`` = drift_sum_r (DKR Lemma 2.2);
* ``dist_next`` -- dist2_{r+1} = ||x_{r+1} - x*||^2 with ``dist_t`` = dist2_r (BC Lemmas A.3/B.3);
* ``grad_norm_sq`` -- grad_norm2_r with ``f_w`` = loss_r, ``f_star`` = loss_r - gap_r;
* ``client_discrepancy`` -- disc_max_r = max_k sum_i alpha_i ||xbar^(r,k) - x_i^(r,k)||^2.

Also measured, from the per-round columns they read: ``local_divergence`` (drift_max_r) and
``round_avg_grad_norm2`` (grad_norm2_virtual_r, a ``record="step"`` run, with ``decrease`` =
loss_r - loss_{r+1}).

Not measurable from a per-round log (:data:`NOT_MEASURABLE` = :data:`verify.measures.NOT_MEASURED`
says why; :func:`check` raises an error listing the measurable ones): ``plateau_gap``,
``avg_grad_norm2_h``, ``neighbour_avg_deviation``, ``perturbed_divergence``, ``local_drift``,
``one_round_descent``, ``contraction_factor``, ``rounds_to_eps``, ``inv_pi``,
``reweighted_divergence_sq``, the properties of one function ``f_combination``,
``tangent_value``, ``f_at_y``, ``inner_product``, and the constants and identities
``speed_constant``, ``error_constant``, ``e_opt``, ``cutoff``, ``lemma_kappa``,
``interval_mean``, ``interval_var``, ``interval_factorial_moment``, ``interval_second_moment``,
``interval_bias_sq``. Registered, but with no column in a per-round log: the per-step
quantities of a ``record="step"`` run (``next_sq_dist``, ``pairwise_drift``,
``pairwise_drift_next``, ``local_deviation``, ``rho``) and FedAU's weight errors
``avg_weight_error`` / ``round_weight_error`` (an expectation over the participation process,
which :func:`verify.falsify` computes exactly; a log would need a ``weight_error`` column).

Right-hand side parameters
--------------------------
In increasing priority: the problem's constants (``toys.constants``: L, mu, Gamma, zeta, sigma,
G, D; D0 = D), the run's hyper-parameters through :data:`HYPER` and the bound's symbol table
(:func:`symbols`: where the papers' symbols clash), the measured ones (``rho_bar`` = min
rho_min, ``rho_tilde`` = max rho_star, ``pi`` = min kappa_min, ``Pi`` = max kappa_max,
``p_min`` = min p, ``S`` = sum p^2, a symbol mapped to ``"gap_0"`` = F(x_0) - F* (BC's
``Delta``, FedAU's ``F``), and the per-round ones above), then ``params``.
Only scalar ``lr`` maps (a schedule needs ``params``). The symbol table comes from the bound's
metadata (:func:`boundlab.registry.meta`: the paper's notation for a catalogue bound), else
from its registered algorithm (:data:`ALGORITHM_SYMBOLS`), never from its id; a registered
bound with neither, whose id is in a built-in family, keeps that family's table (deprecated:
register it with ``algorithm=``).

Layout
------
This module holds the two entry points; the tables and the judging live in the package's other
modules, one subject each, whose public names :mod:`verify.check` re-exports:
``verify.check.lhs`` (:data:`LHS`, :data:`NOT_MEASURABLE`), ``verify.check.rhs``
(:data:`HYPER`, :data:`ALGORITHM_SYMBOLS`, :func:`symbols`, :func:`rhs_params`) and
``verify.check.judge`` (measure each seed's log, evaluate the right side, judge the seeds of a
round together, the rows in the schema of :mod:`verify.schema`).

Example
-------
>>> import boundlab, toys
>>> from verify.check import check
>>> prob = toys.make("seed004-toy")
>>> df = check("drift.fedavg_convex", prob, "fedavg", rounds=20, seeds=1, lr=0.2,
...            local_steps=10)
>>> df[["seed", "measured", "verdict"]].shape, df["verdict"].iloc[0]
((1, 3), 'holds')
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

# the tables and helpers live in the package's other modules (one subject each); the package
# re-exports the public names
from .judge import judge as _judge
from .judge import need_columns as _need_columns
from .judge import trace_diverged as _trace_diverged
from .lhs import LHS, NOT_MEASURABLE, PAPER_LHS, Quantity, _bound, _quantity
from .rhs import ALGORITHM_SYMBOLS, HYPER, rhs_params, symbols

__all__ = ["check", "check_log", "LHS", "NOT_MEASURABLE", "PAPER_LHS", "HYPER",
           "ALGORITHM_SYMBOLS", "rhs_params", "symbols", "Quantity"]


def check(bound, problem, algorithm, *, rounds: int, seeds=1, params=None, constants=None,
          level: float = 0.95, **hyper):
    """Run ``algorithm`` on ``problem`` for each seed and judge ``bound`` on the runs.

    Parameters
    ----------
    bound : Bound or str
        A catalogue or registered bound whose ``lhs`` is in :data:`LHS`.
    problem : FederatedProblem or str
        A problem, or a ``toys.make`` name.
    algorithm : str or toys.Algorithm
        Passed to ``toys.run`` as is.
    rounds : int
        Rounds of each run (T).
    seeds : int or sequence of int
        A count (seeds 0..n-1) or the seeds themselves.
    params : dict, optional
        Values of the bound's parameters that override everything measured or mapped.
    constants : dict or toys.Constants, optional
        Constants to use instead of ``toys.constants(problem, batch_size=...)``.
    **hyper
        ``toys.run`` keywords (``lr``, ``local_steps``, ``participation``, ...); ``record``
        defaults to the one the left-hand side needs (``"step"`` for
        ``avg_grad_norm2_virtual``, else ``toys.run``'s default), a coarser one is refused.

    Returns a :class:`verify.schema.ResultFrame`, one row per seed (and per round for
    per-round quantities), in the schema of :mod:`verify.schema`: ``bound_id``, ``lhs``,
    ``seed``, ``round`` (empty for a per-run quantity), ``measured`` (this seed's value),
    ``measured_mean`` / ``measured_lo`` / ``measured_hi`` (over the seeds), ``bound_value``,
    ``ratio`` (measured / bound_value), ``verdict`` (judged over the seeds per round),
    ``reason``, ``n_seeds``, ``term_<name>`` and ``param_<name>`` (every right-hand-side
    parameter); ``df.attrs["params"]`` holds the scalar parameters shared by every row. The
    old names (``bound``, a bare parameter name) still read, with a DeprecationWarning.
    """
    import toys

    bound = _bound(bound)
    run_kw = _record_for(_quantity(bound), bound, hyper)
    prob = toys.make(problem) if isinstance(problem, str) else problem
    seed_list = list(range(seeds)) if isinstance(seeds, (int, np.integer)) else list(seeds)
    if not seed_list:
        raise DomainError("seeds", seeds, "a count >= 1 or a non-empty list of seeds")
    traces = [toys.run(prob, algorithm, rounds=rounds, seed=int(s), **run_kw)
              for s in seed_list]
    if constants is None:
        consts = toys.constants(prob, batch_size=hyper.get("batch_size")).as_params()
    else:
        consts = constants.as_params() if hasattr(constants, "as_params") else dict(constants)
    from toys.engine.trace_io import to_log

    logs = [to_log(tr, p=prob.p) for tr in traces]
    setting = {**hyper, "rounds": rounds, "n_clients": prob.n_clients, "p": prob.p}
    name = getattr(prob, "name", type(prob).__name__)
    algo = algorithm if isinstance(algorithm, str) else getattr(algorithm, "name", "algorithm")
    return _judge(bound, logs, setting, consts, params, level, problem=name, algorithm=algo,
                  diverged=[_trace_diverged(tr) for tr in traces])


def _record_for(q: Quantity, bound, hyper: dict) -> dict:
    """``hyper`` with the record mode the quantity ``q`` needs (a coarser one is refused)."""
    if q.record != "step":
        return hyper
    if hyper.get("record", "step") != "step":
        raise DomainError("record", hyper["record"], f"'step' ({bound.id}'s left-hand side "
                          f"{q.doc} needs the per-step gradients)")
    return {**hyper, "record": "step"}


def check_log(bound, log, params=None, *, columns=None, level: float = 0.95,
              max_bytes: int | None = None):
    """Judge ``bound`` on a recorded run: a per-round log (path to CSV / Parquet / JSON, a
    DataFrame or a dict of columns) with a ``round`` column, an optional ``seed`` column, and
    either the bound's ``lhs`` column or the columns :data:`LHS` derives it from.

    ``params`` gives every right-hand-side parameter the log does not measure (constants,
    step size, rounds, ...); ``columns`` maps names used here to the log's column names,
    e.g. ``{"gap": "train_gap"}``. Preconditions are always checked. Returns the same frame as
    :func:`check`.

    The log is untrusted data and is judged only when whole (``verify.check.log``): every
    seed with rounds 0..R exactly once, integer seeds, numbers in the measured columns, finite
    unless the run diverged (then the verdict is ``diverged``), and ``params`` that do not
    contradict it (``T`` = R, ``D`` >= sqrt(dist2_0), ...); ``T`` defaults to R. A file is read
    up to ``max_bytes`` (default 256 MiB). Anything else is a boundlab error naming the file,
    the column or parameter and the value.

    >>> import boundlab
    >>> log = {"round": [0, 1, 2], "shadow_gap": [0.3, 0.1, float("nan")]}
    >>> check_log("drift.plateau_finite", log, dict(D=1.0, eta=0.1, tau=2, T=2, L=1.0,
    ...           zeta=0.5))["verdict"].tolist()
    ['holds']
    """
    from toys.engine.trace_io import read_log

    from . import log as recorded_log

    bound = _bound(bound)
    q = _quantity(bound)
    frame = recorded_log.rename(read_log(log, max_bytes=max_bytes), columns)
    _need_columns(q, frame, bound)
    table = symbols(bound)
    logs, derived = recorded_log.prepare(bound, q, frame, params, table)
    return _judge(bound, logs, {}, derived, params, level, problem="log", algorithm="log",
                  check="check_log")
