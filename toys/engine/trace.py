"""The measurements of one run: per-round numpy arrays of everything a bound's LHS needs.

Indexing. Round r = 0..R-1 moves the server model from x_r to x_{r+1}.

* state arrays, length R + 1, measured at x_r (r = 0..R; x_R = ``final_model``):
  ``loss`` F(x_r), ``gap`` F(x_r) - F*, ``dist2`` ||x_r - x*||^2, ``grad_norm2`` ||grad F(x_r)||^2,
  ``grad_dissim`` max_i ||grad F_i(x_r) - grad F(x_r)|| (DKR's zeta at the iterates);
* round arrays, length R: ``rho_sync`` rho(r, x_r) with the round's alpha (BM's sync-point
  value), ``rho_star`` rho(r, x*), ``rho_min`` min of rho(t, w_t) over the round's iterations
  t = t0..t0+E-1 (virtual average w_t = sum_i alpha_i w_t^i, BM-13), ``shadow_gap``
  (1/tau) sum_{k=1..tau} F(xbar^(r,k)) - F* (DKR shadow sequence), ``drift_max`` / ``drift_mean``
  max / mean over participants and k = 1..tau of ||x_i^(r,k) - xbar^(r,k)||^2, ``drift_sum``
  sum_{i in S_r} sum_{k=1}^{tau-1} ||x_i^(r,k) - xbar^(r,k)||^2 (DKR Lemma 2.2),
  ``disc_max`` max_k sum_i alpha_i ||xbar^(r,k) - x_i^(r,k)||^2 (BM Lemma 2), ``g2_max``
  max_{i,k} ||g_i||^2 of the gradients used (a-posteriori G^2), ``lr`` the step size of the
  round's first iteration, ``n_participants``; ``zeta_obs`` (record="step") max over
  participants of ||grad F_i(x_i^(r,tau)) - grad F(x_i^(r,tau))|| (DKR's observed zeta);
* client arrays (R, N): ``participation`` (bool), ``alpha`` (the coefficient of Delta_i in the
  server step x + server_lr sum_i alpha_i Delta_i; on the simplex for the loss-weighted rules),
  ``omega`` (seed-002 weights, None for other algorithms);
* ``steps`` (record="step"): dict of (R, tau) arrays, column k-1 = after local step k:
  ``shadow_gap``, ``rho``, ``dist2`` (virtual / shadow sequence), ``drift_max``, ``disc``,
  ``g2_max``, ``lr`` (the step size used by step k, i.e. eta_t at t = r*tau + k - 1) and
  ``grad_norm2`` ||grad F(xbar^(r,k))||^2 = ||sum_i p_i grad F_i(xbar^(r,k))||^2 at the virtual
  average (BC's wbar_{r,k} with full participation and alpha = p; with ``grad_norm2`` at x_r,
  k = 0, the average over k = 0..tau-1 and the rounds is what BC's E||grad f(w_hat_T)||^2
  bounds); with ``toys.run(..., extra_steps=...)`` also ``pairwise_drift`` max over pairs of
  participants of ||x_i^(r,k) - x_j^(r,k)||^2 (DKR's d_k) and ``local_deviation`` max over
  participants of ||x_i^(r,k) - x_r||^2 (BC's distance to the round's start model), and for the
  beta algorithm ``perturbed_divergence`` (column k-1: max over participants of ||wbar_{r,k-1}
  - w~^i_{r,k-1}||^2 at the perturbed point where step k takes its gradient, BC's Lemma B.2)
  and ``neighbour_avg_deviation`` (max over pairs of clients of ||u_i - u_j||^2, the round's
  neighbour averages, BC's Lemma B.1; every column the same).

The virtual/shadow average uses the round's alpha normalised over the participants (the BM
virtual sequence; DKR's uniform shadow sequence when alpha = 1/M). Quantities that were not
recorded (``record`` too coarse, no exact optimum) are NaN. After a divergence (``diverged_at``
= the round whose end model was not finite or grew past :data:`toys.engine.DIVERGENCE`) every
later entry is NaN; likewise after a callback stopped the run (``info["stopped_at"]``).
``metrics`` holds the per-round values recorded by callbacks (e.g. ``test_accuracy`` after
round r at index r; :meth:`rounds_to` gives R_x).

Example
-------
>>> import toys
>>> tr = toys.run(toys.quadratic(n_clients=3, dim=2, seed=0), "fedavg", rounds=5, seed=0,
...               lr=0.05, local_steps=2)
>>> tr.gap.shape, tr.alpha.shape, tr.diverged_at
((6,), (5, 3), None)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from boundlab.errors import DomainError
from boundlab.io import atomic_path, check_replaceable

__all__ = ["Trace"]

STATE_FIELDS = ("loss", "gap", "dist2", "grad_norm2", "grad_dissim")
ROUND_FIELDS = ("rho_sync", "rho_star", "rho_min", "shadow_gap", "drift_max", "drift_mean",
                "drift_sum", "disc_max", "g2_max", "lr", "n_participants", "zeta_obs")
STEP_FIELDS = ("shadow_gap", "rho", "dist2", "drift_max", "disc", "g2_max", "lr", "grad_norm2")


@dataclass
class Trace:
    """Per-round measurements of one run (see the module docstring for every field).

    >>> import numpy as np
    >>> tr = Trace.empty(rounds=2, n_clients=3, local_steps=1, record="round")
    >>> tr.to_frame().shape[0]
    3
    """

    algorithm: str
    problem: str
    rounds: int
    n_clients: int
    local_steps: int
    record: str
    seed: int | None = None
    backend: str = "numpy"
    hyper: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)
    per_round: dict = field(default_factory=dict)
    participation: np.ndarray | None = None
    alpha: np.ndarray | None = None
    omega: np.ndarray | None = None
    steps: dict | None = None
    final_model: np.ndarray | None = None
    diverged_at: int | None = None
    metrics: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, rounds: int, n_clients: int, local_steps: int, record: str, **meta):
        """A trace with NaN-filled (preallocated) arrays.

        >>> Trace.empty(3, 2, 1, "round").rho_sync.shape
        (3,)
        """
        extra = tuple(meta.pop("extra_steps", ()))  # names of measure.EXTRA_STEPS
        tr = cls(rounds=rounds, n_clients=n_clients, local_steps=local_steps, record=record,
                 algorithm=meta.pop("algorithm", ""), problem=meta.pop("problem", ""), **meta)
        tr.state = {k: np.full(rounds + 1, np.nan) for k in STATE_FIELDS}
        tr.per_round = {k: np.full(rounds, np.nan) for k in ROUND_FIELDS}
        tr.participation = np.zeros((rounds, n_clients), dtype=bool)
        tr.alpha = np.full((rounds, n_clients), np.nan)
        if record == "step":
            tr.steps = {k: np.full((rounds, local_steps), np.nan)
                        for k in (*STEP_FIELDS, *extra)}
        return tr

    def __getattr__(self, name):
        d = self.__dict__
        if name in STATE_FIELDS and name in d.get("state", {}):
            return d["state"][name]
        if name in ROUND_FIELDS and name in d.get("per_round", {}):
            return d["per_round"][name]
        raise AttributeError(f"'Trace' object has no attribute {name!r}")

    # ---------------------------------------------------------------- derived quantities
    @property
    def iterations(self) -> int:
        """Total number of local SGD iterations, rounds x local_steps (BM's TE).

        >>> Trace.empty(3, 2, 4, "round").iterations
        12
        """
        return self.rounds * self.local_steps

    @property
    def avg_shadow_gap(self) -> float:
        """DKR Theorem 2.1 LHS: (1/(tau T)) sum_t sum_{k=1..tau} F(xbar^(t,k)) - F*.

        >>> import numpy as np
        >>> tr = Trace.empty(2, 1, 1, "round"); tr.shadow_gap[:] = [1.0, 3.0]
        >>> tr.avg_shadow_gap
        2.0
        """
        return float(np.mean(self.shadow_gap))

    @property
    def grad_norm2_virtual(self) -> np.ndarray:
        """Per round r (record="step"): (1/tau) sum_{k=0}^{tau-1} ||grad F(xbar^(r,k))||^2 over
        the virtual averages, xbar^(r,0) = x_r (``grad_norm2[r]``), the others from
        ``steps["grad_norm2"]``; a round without participants leaves them at x_r. Its mean
        over the rounds is what BC's non-convex theorems bound (E||grad f(w_hat_T)||^2).

        >>> import toys
        >>> tr = toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=2, seed=0, lr=0.05,
        ...               local_steps=1, record="step")
        >>> bool((tr.grad_norm2_virtual == tr.grad_norm2[:-1]).all())  # tau = 1: x_r only
        True
        """
        if self.steps is None or "grad_norm2" not in self.steps:
            raise DomainError("record", self.record, "'step' (the gradients at the virtual "
                                                     "averages were not recorded)")
        return virtual_grad_norm2(self.state["grad_norm2"][:-1], self.steps["grad_norm2"],
                                  self.per_round["n_participants"], self.local_steps)

    @property
    def rho_max(self) -> np.ndarray:
        """Per round r (record="step"): the largest skew rho(t, w_t) over the round's
        iterations (``steps["rho"]``, virtual averages), NaN where none is defined.

        >>> import toys
        >>> tr = toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=2, seed=0, lr=0.05,
        ...               local_steps=2, record="step")
        >>> [round(float(v), 12) for v in tr.rho_max]  # FedAvg: alpha = p, rho = 1
        [1.0, 1.0]
        """
        if self.steps is None or "rho" not in self.steps:
            raise DomainError("record", self.record, "'step' (the skew at every iteration was "
                                                     "not recorded)")
        return max_skew(self.steps["rho"])

    @property
    def rho_bar(self) -> float:
        """min over all iterations of rho(t, w_t) (corrected BM rho_bar, BM-13).

        >>> tr = Trace.empty(2, 1, 1, "round"); tr.rho_min[:] = [1.5, 0.5]
        >>> tr.rho_bar
        0.5
        """
        return float(np.nanmin(self.rho_min)) if np.any(np.isfinite(self.rho_min)) else np.nan

    @property
    def rho_tilde(self) -> float:
        """max over rounds of rho(t, w*) (BM rho_tilde).

        >>> tr = Trace.empty(2, 1, 1, "round"); tr.rho_star[:] = [1.5, 0.5]
        >>> tr.rho_tilde
        1.5
        """
        return float(np.nanmax(self.rho_star)) if np.any(np.isfinite(self.rho_star)) else np.nan

    # ---------------------------------------------------------------- tables
    def to_frame(self):
        """Per-round table (pandas): one row per r = 0..R with the state at x_r and the events
        of round r (NaN on the last row).

        >>> Trace.empty(2, 3, 1, "round").to_frame().columns[:3].tolist()
        ['round', 'loss', 'gap']
        """
        import pandas as pd

        R = self.rounds
        cols = {"round": np.arange(R + 1)}
        for k in STATE_FIELDS:
            cols[k] = self.state[k]
        for k in ROUND_FIELDS:
            cols[k] = np.append(self.per_round[k], np.nan)
        for k, v in self.metrics.items():  # callback metrics: after round r -> row r + 1
            cols[k] = np.insert(np.asarray(v, dtype=float), 0, np.nan)
        return pd.DataFrame(cols)

    def rounds_to(self, target: float, metric: str = "test_accuracy") -> int | None:
        """Rounds to reach ``target`` (the papers' R_x): the smallest number of rounds after
        which ``metrics[metric]`` >= target, or None if never reached.

        >>> tr = Trace.empty(3, 1, 1, "round"); tr.metrics["test_accuracy"] = np.array(
        ...     [0.5, 0.92, 0.95])
        >>> tr.rounds_to(0.9), tr.rounds_to(0.99)
        (2, None)
        """
        if metric not in self.metrics:
            raise DomainError("metric", metric, "a recorded metric: "
                              + (", ".join(sorted(self.metrics)) or "none recorded "
                                 "(pass callbacks=[toys.engine.TestMetrics(...)])"))
        hit = np.flatnonzero(np.asarray(self.metrics[metric]) >= target)
        return int(hit[0]) + 1 if hit.size else None

    def clients_frame(self):
        """Long table (pandas): round, client, participated, alpha (and omega when present).

        >>> Trace.empty(2, 3, 1, "round").clients_frame().shape
        (6, 4)
        """
        import pandas as pd

        R, N = self.rounds, self.n_clients
        cols = {"round": np.repeat(np.arange(R), N), "client": np.tile(np.arange(N), R),
                "participated": self.participation.ravel(), "alpha": self.alpha.ravel()}
        if self.omega is not None:
            cols["omega"] = self.omega.ravel()
        return pd.DataFrame(cols)

    def steps_frame(self):
        """Long per-iteration table (record="step" only): round, k (1..tau), t (global
        iteration index of the step), and the ``steps`` arrays.

        >>> Trace.empty(2, 1, 3, "step").steps_frame().shape
        (6, 11)
        """
        import pandas as pd

        if self.steps is None:
            raise DomainError("record", self.record, "'step' (per-step arrays were not kept)")
        R, tau = self.rounds, self.local_steps
        cols = {"round": np.repeat(np.arange(R), tau), "k": np.tile(np.arange(1, tau + 1), R)}
        cols["t"] = cols["round"] * tau + cols["k"] - 1
        for k, v in self.steps.items():
            cols[k] = v.ravel()
        return pd.DataFrame(cols)

    def save(self, path, what: str = "rounds") -> str:
        """Write a table atomically (temp file + rename): CSV, or Parquet for ``*.parquet``
        (needs pyarrow). ``what`` is ``"rounds"`` (:meth:`to_frame`), ``"clients"`` or
        ``"steps"``. Returns the path.

        >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> p = Trace.empty(2, 1, 1, "round").save(os.path.join(d, "t.csv"))
        >>> open(p).readline().split(",")[:2]
        ['round', 'loss']
        """
        frames = {"rounds": self.to_frame, "clients": self.clients_frame,
                  "steps": self.steps_frame}
        if what not in frames:
            from boundlab.errors import UnknownNameError

            raise UnknownNameError("trace table", what, list(frames))
        path = os.fspath(path)
        parquet = path.lower().endswith((".parquet", ".pq"))
        if parquet:
            import importlib.util

            if importlib.util.find_spec("pyarrow") is None:
                raise DomainError("path", path, "a .csv path (Parquet needs pyarrow, "
                                                "which is not installed)")
        check_replaceable(path, "path", "a trace table")  # before the work: refused early
        frame = frames[what]()
        with atomic_path(path, name="path", owned=True) as tmp:
            if parquet:
                frame.to_parquet(tmp, index=False)
            else:
                frame.to_csv(tmp, index=False)
        return path

    def to_log(self, p=None):
        """The per-round log (pandas) that :func:`verify.check_log` reads
        (:func:`toys.engine.trace_io.to_log`)."""
        from .trace_io import to_log

        return to_log(self, p)

    def write_log(self, path, p=None) -> str:
        """Write the per-round log atomically: CSV, Parquet or JSON by the suffix
        (:func:`toys.engine.trace_io.write_log`). Returns the path."""
        from .trace_io import write_log

        return write_log(self, path, p)

    def summary(self) -> str:
        """A few-line human summary.

        >>> print(Trace.empty(1, 1, 1, "round", algorithm="fedavg").summary().splitlines()[0])
        fedavg on '': 1 rounds x 1 local steps, N = 1, record = round
        """
        head = (f"{self.algorithm} on {self.problem!r}: {self.rounds} rounds x "
                f"{self.local_steps} local steps, N = {self.n_clients}, record = {self.record}")
        lines = [head]
        if self.diverged_at is not None:
            lines.append(f"DIVERGED in round {self.diverged_at} (toys.engine.DIVERGENCE)")
        for name in ("loss", "gap", "dist2"):
            v = self.state[name]
            if np.isfinite(v[0]) or np.isfinite(v[-1]):
                lines.append(f"{name}: {v[0]:.6g} -> {v[-1]:.6g}")
        if np.any(np.isfinite(self.shadow_gap)):
            lines.append(f"avg shadow gap (DKR LHS): {self.avg_shadow_gap:.6g}")
        if np.any(np.isfinite(self.rho_min)):
            lines.append(f"rho_bar (all t) = {self.rho_bar:.6g}, rho_tilde = {self.rho_tilde:.6g}")
        return "\n".join(lines)


def max_skew(steps_rho):
    """The largest of the per-step skews ``steps_rho`` (..., R, tau) per round (..., R) (leading
    axes: the instances of a population), NaN where none is defined.

    >>> max_skew(np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])).tolist()
    [3.0, nan]
    """
    v = np.asarray(steps_rho, dtype=float)
    seen = np.isfinite(v).any(axis=-1)
    return np.where(seen, np.max(np.where(np.isnan(v), -np.inf, v), axis=-1), np.nan)


def virtual_grad_norm2(g, steps_gn, n_part, tau):
    """(1/tau) sum_{k<tau} ||grad F(xbar^(r,k))||^2 per round from ``g`` = ||grad F(x_r)||^2
    (..., R) and the per-step values ``steps_gn`` (..., R, tau) (leading axes: the instances of
    a population); x_r where a round had no participants (``n_part`` 0)."""
    inner = np.sum(steps_gn[..., :tau - 1], axis=-1)
    return np.where(n_part == 0, g, (g + inner) / tau)
