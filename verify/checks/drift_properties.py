"""DKR's textbook properties (seed 004, appendix §2.3) on the clients of real problems and runs.

Properties 2.1 (convexity), 2.2 (first-order characterization), 2.3 (L-smoothness) and 2.5
(Young's inequality) are statements about one function and chosen points, not quantities of a
run; DKR's proofs apply them to every client F_i at the iterates. They are judged where the
proofs use them: at the server models x_0..x_R of a real FedAvg run of the engine (DKR's theory
protocol: all clients, eta = 0.2, tau local steps; run one round at a time, ``toys.run`` with
``rounds=1`` started at the previous model, so that each x_t is known), the optimum x* and the
client optima x_i*, on

* the seed-004 toy (20 logistic / BCE clients, the last an outlier; L = the problem's exact
  smoothness bound of every client, ``toys.constants``), and
* seed 000's quadratic toy (N = 5, d = 2, L = 4, mu = 1; L exact).

Per property and problem one row: the comparison with the largest ratio measured / bound over
every client, every ordered pair (x, y) of distinct points and, for 2.1, lam in {0.1, 0.25,
0.5, 0.75, 0.9}. Young's inequality takes the vectors of Lemma 2.2's proof kind: a = grad F_i(x_t)
- grad F(x_t) (a client's gradient dissimilarity), b = x_t - x*, with lam = sqrt(2 eta) (the
proof's choice, DKR-8) and lam in {0.5, 1, 2}; a last row takes b = lam^2 a, where it is an
equality (ratio 1). Points at distance zero are skipped. The properties are tight (equality
for x = y, or for f affine along y - x), so ratios near 1 are expected, never above.

Example
-------
>>> from verify.suite import Context
>>> rs = drift_properties(Context(quick=True))
>>> sorted({r.verdict for r in rs}), len(rs)
(['holds'], 10)
"""

from __future__ import annotations

import numpy as np

import boundlab
import toys
from toys._array import to_numpy

from ._common import constants_record, judge
from ._registry import register

ETA = 0.2
LAMS = (0.1, 0.25, 0.5, 0.75, 0.9)
YOUNG_LAMS = (float(np.sqrt(2 * ETA)), 0.5, 1.0, 2.0)
#: (label, toys.make name, options, local steps)
PROBLEMS = (("seed004-toy (20 BCE clients)", "seed004-toy", {}, 10),
            ("quadratic (seed 000 toy: N=5, d=2, L=4, mu=1)", "quadratic",
             {"n_clients": 5, "dim": 2, "L": 4.0, "mu": 1.0, "heterogeneity": 1.0, "seed": 0},
             2))


def run_points(prob, rounds: int, tau: int, backend: str = "numpy", device=None):
    """The server models x_0..x_R of FedAvg (all clients, eta = ETA), x* and the client optima
    (those that exist), as rows of one (P, d) array; and the models alone (R + 1, d)."""
    x0 = getattr(prob, "x0", None)
    x = np.zeros(prob.dim) if x0 is None else np.asarray(x0, dtype=float).ravel()
    extra = {} if backend == "numpy" else {"backend": backend, "device": device}
    models = [x]
    for r in range(rounds):
        tr = toys.run(prob, "fedavg", rounds=1, seed=r, x0=x, lr=ETA, local_steps=tau,
                      record="none", **extra)
        x = to_numpy(tr.final_model).astype(float).ravel()
        models.append(x)
    pts = [*models, np.asarray(prob.x_star, dtype=float).ravel()]
    try:
        pts += list(np.asarray(prob.x_star_i, dtype=float).reshape(prob.n_clients, -1))
    except Exception:  # noqa: BLE001 - a client without a finite optimum: the other points
        pass
    return np.array(pts), np.array(models)


def client_rows(prob) -> tuple:
    """``(losses, grads)`` of a toys problem for client points with batch axes: ``W`` (..., N,
    d) -> (..., N) and (..., N, d) (client i of each row at its own point W[..., i, :])."""
    def losses(W):
        W = np.asarray(W, dtype=float)
        flat = W.reshape(-1, *W.shape[-2:])
        return np.array([prob.losses(w) for w in flat], dtype=float).reshape(W.shape[:-1])

    def grads(W):
        W = np.asarray(W, dtype=float)
        flat = W.reshape(-1, *W.shape[-2:])
        return np.array([prob.grads(w) for w in flat], dtype=float).reshape(W.shape)

    return losses, grads


def tangent_sides(losses, grads, x, y) -> dict:
    """The numbers Properties 2.2 and 2.3 compare, for every client at the points ``x``, ``y``
    (..., N, d): ``f_x``, ``f_y`` (= f_at_y), ``lin`` = <grad f(x), y - x>, ``tangent_value``
    = f_x + lin and ``dist_xy`` = ||y - x||^2, each (..., N). ``losses``/``grads`` map client
    points (..., N, d) to (..., N) / (..., N, d) (:func:`client_rows`, or a stacked family).

    >>> sq = (lambda W: 0.5 * np.sum(W**2, -1), lambda W: W)  # f = ||x||^2/2, one client
    >>> s = tangent_sides(*sq, np.array([[1.0, 0.0]]), np.array([[0.0, 2.0]]))
    >>> float(s["tangent_value"][0]), float(s["f_at_y"][0]), float(s["dist_xy"][0])
    (-0.5, 2.0, 5.0)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    f_x, f_y = losses(x), losses(y)
    lin = np.sum(grads(x) * (y - x), axis=-1)
    return {"f_x": f_x, "f_y": f_y, "f_at_y": f_y, "lin": lin, "tangent_value": f_x + lin,
            "dist_xy": np.sum((y - x) ** 2, axis=-1)}


def f_combination(losses, x, y, lam):
    """f(lam x + (1 - lam) y) for every client (Property 2.1's left side): points (..., N, d),
    ``lam`` broadcast against their batch axes (...)."""
    lm = np.asarray(lam, dtype=float)[..., None, None]
    return losses(lm * np.asarray(x, dtype=float) + (1 - lm) * np.asarray(y, dtype=float))


def young_sides(a, b) -> dict:
    """Property 2.5's numbers for vectors a, b (..., d): ``inner_product`` <a, b>, ``a_sq``,
    ``b_sq``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return {"inner_product": np.sum(a * b, axis=-1), "a_sq": np.sum(a * a, axis=-1),
            "b_sq": np.sum(b * b, axis=-1)}


def comparisons(prob, pts: np.ndarray, L: float) -> dict:
    """Every comparison of Properties 2.1-2.3 at the points: {bound id: (measured, params)} as
    arrays over (pair, client[, lam]); pairs are ordered pairs of distinct points."""
    P, N = len(pts), prob.n_clients
    ij = [(i, j) for i in range(P) for j in range(P)
          if i != j and np.linalg.norm(pts[i] - pts[j]) > 0]
    a, b = np.array([i for i, _ in ij]), np.array([j for _, j in ij])
    losses, grads = client_rows(prob)
    X = np.repeat(pts[a][:, None, :], N, axis=1)  # (Q, N, d)
    Y = np.repeat(pts[b][:, None, :], N, axis=1)
    s = tangent_sides(losses, grads, X, Y)
    lam = np.array(LAMS)
    K = len(lam)
    comb = f_combination(losses, X[:, None], Y[:, None], lam[None, :])  # (Q, K, N)
    return {
        "drift.convexity": (comb, {"lam": np.broadcast_to(lam[None, :, None], comb.shape),
                                   "f_x": np.repeat(s["f_x"][:, None, :], K, axis=1),
                                   "f_y": np.repeat(s["f_y"][:, None, :], K, axis=1)}),
        "drift.first_order_convexity": (s["tangent_value"], {"f_y": s["f_y"]}),
        "drift.smoothness": (s["f_y"], {"f_x": s["f_x"], "lin": s["lin"],
                                        "L": np.full_like(s["lin"], L),
                                        "dist_xy": s["dist_xy"]}),
    }


def young_vectors(prob, models: np.ndarray) -> tuple:
    """a = grad F_i(x_t) - grad F(x_t) and b = x_t - x* for every model and client: (Q, d)."""
    xs = np.asarray(prob.x_star, dtype=float).ravel()
    a = np.concatenate([np.asarray(prob.grads(x), dtype=float) - prob.grad_F(x)[None]
                        for x in models])
    b = np.concatenate([np.repeat((x - xs)[None], prob.n_clients, axis=0) for x in models])
    return a, b


def _worst(bound, measured, params):
    """The comparison with the largest excess (measured - bound)/max(|measured|, |bound|) (the
    largest ratio where the bound is positive; defined where it is 0)."""
    rhs = np.asarray(bound.evaluate(**params), dtype=float)
    scale = np.maximum(np.maximum(np.abs(measured), np.abs(rhs)), 1e-300)
    k = np.unravel_index(int(np.argmax((measured - rhs) / scale)), measured.shape)
    return float(measured[k]), {n: float(v[k]) for n, v in params.items()}, measured.size


@register("drift", "drift.convexity", "drift.first_order_convexity", "drift.smoothness",
          "drift.young")
def drift_properties(ctx) -> list:
    """Properties 2.1, 2.2, 2.3 and 2.5 on every client at a real run's iterates."""
    rounds = ctx.pick(10, 4)
    out = []
    for label, name, opts, tau in PROBLEMS:
        prob = toys.make(name, **opts)
        consts = toys.constants(prob)
        L = float(consts.L.value)
        pts, models = run_points(prob, rounds, tau, ctx.backend, ctx.device)
        kw = dict(check="drift_properties", problem=label, deterministic=True, seeds=[0],
                  setting={"method": "fedavg", "rounds": rounds, "lr": ETA, "local_steps": tau},
                  constants=constants_record(consts, ("L",)))
        where = (f"{len(pts)} points (x_0..x_{rounds} of the run, x*, the client optima), "
                 f"{prob.n_clients} clients")
        for bid, (meas, prm) in comparisons(prob, pts, L).items():
            m, p, n = _worst(boundlab.get(bid), meas, prm)
            extra = ""
            if bid == "drift.smoothness":  # how much of L the curvature uses: <= 1
                curv = (meas - prm["f_x"] - prm["lin"]) / (L / 2 * prm["dist_xy"])
                extra = (f"; largest (f(y) - f(x) - <grad f(x), y - x>)/((L/2)||y - x||^2) = "
                         f"{float(np.max(curv)):.6g}")
            out.append(judge(boundlab.get(bid), [m], p, case="worst comparison",
                             note=f"largest ratio of {n} comparisons: {where}{extra}", **kw))
        young = boundlab.get("drift.young")
        a, b = young_vectors(prob, models)
        lam = np.array(YOUNG_LAMS)[:, None]
        ys = young_sides(a, b)
        inner = np.broadcast_to(ys["inner_product"][None], (len(lam), len(a)))
        prm = {"lam_young": np.broadcast_to(lam, inner.shape),
               "a_sq": np.broadcast_to(ys["a_sq"][None], inner.shape),
               "b_sq": np.broadcast_to(ys["b_sq"][None], inner.shape)}
        m, p, n = _worst(young, inner, prm)
        out.append(judge(young, [m], p, case="worst comparison", note=(
            f"largest ratio of {n} comparisons: a = grad F_i(x_t) - grad F(x_t), b = x_t - x*, "
            f"t = 0..{rounds}, lam in {[round(v, 4) for v in YOUNG_LAMS]}"), **kw))
        i = int(np.argmax(np.sum(a * a, axis=1)))
        lm = YOUNG_LAMS[0]
        eq = young_sides(a[i], lm**2 * a[i])
        out.append(judge(young, [float(eq["inner_product"])],
                         {"lam_young": lm, "a_sq": float(eq["a_sq"]), "b_sq": float(eq["b_sq"])},
                         case="b = lam^2 a (equality)", note=(
                             "a = the largest client gradient dissimilarity of the run, lam = "
                             "sqrt(2 eta): <a, b> = (lam^2/2)||a||^2 + ||b||^2/(2 lam^2)"), **kw))
    return out
