"""The high-precision replay behind :mod:`verify.falsify.certify`: an instance's run redone in
mpmath on the built problem's own float64 arrays (exact inputs), at a given working precision.

What it covers: gradient descent, FedAvg and FedProx (every client every round, exact gradients,
one step per instance or the plan's schedule; FedProx's local step
W <- W - eta (grad F_i(W) + alpha (W - x)) with the instance's alpha, as toys' ``fedprox``),
SCAFFOLD (option II control variates, the server step eta_g = 1, as toys' ``scaffold``),
FedNova with equal local work (its normalised average is then FedAvg's step), FedAdagrad,
FedAdam and FedYogi (their server step on FedAvg's average of the round) and
seed 003's beta algorithm (the gradient of every step at beta W + (1 - beta) u_i, u_i the
neighbour average of the clients' last models by the graph of falsify's messages, the server
step and the virtual average with the graph's weights renormalised; the graph's float64 weights
taken exactly), with Li et al.'s
Gamma = F* - sum_i p_i F_i* where the plan measures it (each client's minimum re-solved by
Newton's method), on quadratic clients (``toys.Quadratic``: A_i, c_i,
b_i), ridge sums (:class:`verify.falsify.families._ridge.RidgeSum`, Huber or softplus profile),
binary logistic regression (``toys.Logistic``: X, y, row weights, offsets, l2) and their
tilted versions (:class:`verify.falsify.families.tilt.TiltedProblem`). The optimum
x* is re-solved by Newton's method at the working precision from the float64 one. Anything else
raises :class:`Unsupported` (the verdict is then certified in float64 only).

:func:`replay` returns the run's quantities as lists of ``mpf`` in the indexing of
:func:`verify.falsify.population.quantities` (``gap``, ``dist2``, ``grad_norm2``, ``loss`` per
state; ``shadow_gap``, ``g2_max``, ``lr`` per round, and the clients' drift from the average
``drift_max``, ``drift_sum``, ``disc_max`` as ``toys.Trace`` defines them).
"""

from __future__ import annotations

import mpmath

__all__ = ["Unsupported", "replay", "ALGORITHMS"]

#: the plan algorithms replayed here (gd and fedavg run as toys' FedAvg, fedprox as its FedProx,
#: scaffold as its SCAFFOLD with the server step eta_g = 1; fednova with every client's local
#: work equal and the server step 1, where its normalised average is FedAvg's step exactly;
#: the adaptive servers run their step on FedAvg's average of the round)
ALGORITHMS = ("gd", "fedavg", "fedprox", "beta", "scaffold", "fednova", "fedadagrad", "fedadam",
              "fedyogi")
_NEWTON_STEPS = 80


class Unsupported(Exception):
    """This instance has no high-precision replay here; ``str(exc)`` says why."""


def _vec(a):
    return [mpmath.mpf(float(v)) for v in a]


def _dot(u, v):
    return mpmath.fsum(x * y for x, y in zip(u, v))


class _Clients:
    """Losses, gradients and Hessians of a problem's clients in mpmath (exact float inputs)."""

    def __init__(self, prob):
        from .families._ridge import RidgeSum
        from .families.tilt import TiltedProblem

        self.tilt, self.xs = None, None
        if isinstance(prob, TiltedProblem):
            self.tilt = [_vec(t) for t in prob.t]
            self.xs = _vec(prob.x_star)
            prob = prob.base
        self.p = _vec(prob.p)
        if getattr(prob, "kind", "") == "quadratic" and hasattr(prob, "A"):
            self.kind = "quadratic"
            self.A = [[_vec(row) for row in Ai] for Ai in prob.A]
            self.c, self.b = [_vec(ci) for ci in prob.c], _vec(prob.b)
        elif isinstance(prob, RidgeSum) and prob.arr["profile"] in ("huber", "softplus"):
            self.kind = prob.arr["profile"]
            arr = prob.arr
            self.a = [[_vec(aj) for aj in ai] for ai in arr["a"]]
            self.rb, self.w = [_vec(v) for v in arr["b"]], [_vec(v) for v in arr["w"]]
            self.delta, self.c = [_vec(v) for v in arr["delta"]], [_vec(v) for v in arr["c"]]
            self.mu = mpmath.mpf(float(arr["mu"]))
        elif getattr(prob, "kind", "") == "logistic" and hasattr(prob, "row_w"):
            self._logistic(prob)
            return
        else:
            raise Unsupported(f"no high-precision form of a {type(prob).__name__} problem")
        self.d = len(self.c[0])

    def _logistic(self, prob):
        """Binary logistic clients: sum_k w_k (softplus(z_k) - y_k z_k) + l2/2 ||x||^2, z_k =
        X_k x + offset_k (toys.Logistic's loss; padded rows have weight 0 and are dropped)."""
        self.kind, self.l2 = "logistic", mpmath.mpf(float(prob.l2))
        self.rows = []
        for i in range(prob.n_clients):
            keep = [k for k in range(prob.X.shape[1]) if prob.mask[i, k]]
            self.rows.append([(_vec(prob.X[i, k]), mpmath.mpf(float(prob.y[i, k])),
                               mpmath.mpf(float(prob.row_w[i, k])),
                               mpmath.mpf(float(prob.offset[i, k]))) for k in keep])
        self.d = prob.X.shape[2]

    def _z(self, i, x):
        return [(_dot(xk, x) + off, yk, wk) for xk, yk, wk, off in self.rows[i]]

    def loss(self, i, x):
        if self.kind == "logistic":
            v = mpmath.fsum(wk * (mpmath.log1p(mpmath.exp(z)) - yk * z)
                            for z, yk, wk in self._z(i, x)) + self.l2 / 2 * _dot(x, x)
        elif self.kind == "quadratic":
            y = [xk - ck for xk, ck in zip(x, self.c[i])]
            v = _dot(y, [_dot(row, y) for row in self.A[i]]) / 2 + self.b[i]
        else:
            v = self.mu / 2 * _dot(*[[xk - ck for xk, ck in zip(x, self.c[i])]] * 2)
            for aj, bj, wj, dj in zip(self.a[i], self.rb[i], self.w[i], self.delta[i]):
                v += wj * self._h(_dot(aj, x) - bj, dj)
        if self.tilt is not None:
            v += _dot([xk - sk for xk, sk in zip(x, self.xs)], self.tilt[i])
        return v

    def _h(self, s, dl):
        if self.kind == "huber":
            return s * s / 2 if abs(s) <= dl else dl * abs(s) - dl * dl / 2
        return dl * dl * mpmath.log(mpmath.cosh(s / dl))

    def grad(self, i, x):
        if self.kind == "logistic":
            g = [self.l2 * xk for xk in x]
            for (xk, _, _, _), (z, yk, wk) in zip(self.rows[i], self._z(i, x)):
                r = wk * (1 / (1 + mpmath.exp(-z)) - yk)
                g = [gj + r * aj for gj, aj in zip(g, xk)]
        elif self.kind == "quadratic":
            y = [xk - ck for xk, ck in zip(x, self.c[i])]
            g = [_dot(row, y) for row in self.A[i]]
        else:
            g = [self.mu * (xk - ck) for xk, ck in zip(x, self.c[i])]
            for aj, bj, wj, dj in zip(self.a[i], self.rb[i], self.w[i], self.delta[i]):
                s = _dot(aj, x) - bj
                dh = max(-dj, min(dj, s)) if self.kind == "huber" else dj * mpmath.tanh(s / dj)
                g = [gk + wj * dh * ak for gk, ak in zip(g, aj)]
        if self.tilt is not None:
            g = [gk + tk for gk, tk in zip(g, self.tilt[i])]
        return g

    def hess(self, i, x):
        d = self.d
        if self.kind == "quadratic":
            return mpmath.matrix(self.A[i])
        if self.kind == "logistic":
            H = mpmath.eye(d) * self.l2
            for (xk, _, _, _), (z, _, wk) in zip(self.rows[i], self._z(i, x)):
                s = 1 / (1 + mpmath.exp(-z))
                H += wk * s * (1 - s) * mpmath.matrix(xk) * mpmath.matrix(xk).T
            return H
        H = mpmath.eye(d) * self.mu
        for aj, bj, wj, dj in zip(self.a[i], self.rb[i], self.w[i], self.delta[i]):
            s = _dot(aj, x) - bj
            d2 = (1 if abs(s) < dj else 0) if self.kind == "huber" else \
                1 / mpmath.cosh(s / dj) ** 2
            H += wj * d2 * mpmath.matrix(aj) * mpmath.matrix(aj).T
        return H

    def F(self, x):
        return mpmath.fsum(pi * self.loss(i, x) for i, pi in enumerate(self.p))

    def gradF(self, x):
        gs = [self.grad(i, x) for i in range(len(self.p))]
        return [mpmath.fsum(pi * g[k] for pi, g in zip(self.p, gs)) for k in range(self.d)]

    def optimum(self, x0, client=None):
        """x* (or, with ``client``, that client's own minimiser) by Newton's method from
        ``x0`` (the float64 one); Unsupported if it stalls."""
        x = _vec(x0)
        tol = mpmath.mpf(10) ** (-(mpmath.mp.dps - 8))
        w = self.p if client is None else [int(i == client) for i in range(len(self.p))]
        for _ in range(_NEWTON_STEPS):
            g = self.gradF(x) if client is None else self.grad(client, x)
            if mpmath.norm(g) <= tol:
                return x
            H = sum((pi * self.hess(i, x) for i, pi in enumerate(w) if pi),
                    mpmath.zeros(self.d))
            try:
                step = mpmath.lu_solve(H, mpmath.matrix(g))
            except ZeroDivisionError as exc:
                raise Unsupported("Newton's method met a singular Hessian at x*") from exc
            x = [xk - step[k] for k, xk in enumerate(x)]
        raise Unsupported("Newton's method did not settle x* at the working precision")


#: the algorithms replayed under partial participation (FedAvg's weights renormalised over
#: the round's participants; the others stay where they are)
PARTIAL = ("gd", "fedavg", "fedprox")


def replay(plan, prob, x0, T: int, tau: int, steps, masks=None) -> dict:
    """The run of ``plan`` on ``prob`` from ``x0`` in mpmath at the current precision;
    ``steps`` the float64 step of every SGD iteration (length T tau); ``masks`` (T, N) bool
    the participants of every round (None: every client; :data:`PARTIAL` algorithms only)."""
    if plan.algorithm not in ALGORITHMS or (masks is None) != (plan.participation is None) \
            or (masks is not None and plan.algorithm not in PARTIAL):
        raise Unsupported(f"no high-precision replay of {plan.algorithm} "
                          f"(participation {plan.participation or 'full'})")
    cl = _Clients(prob)
    prox = mpmath.mpf(float(plan.hyper["alpha"])) if plan.algorithm == "fedprox" else 0
    beta = _Beta(plan, len(cl.p), x0) if plan.algorithm == "beta" else None
    if plan.algorithm in ("scaffold", "fednova") and (
            float(plan.hyper.get("server_lr", 1.0)) != 1.0 or set(plan.hyper) - {"server_lr"}):
        raise Unsupported(f"{plan.algorithm} with a server step != 1 or other "
                          f"hyper-parameters ({sorted(plan.hyper)})")
    scaf = _Scaffold(len(cl.p), cl.d, cl.p) if plan.algorithm == "scaffold" else None
    ada = _Adaptive(plan, cl.d) if plan.algorithm in _ADAPTIVE else None
    xs = cl.optimum(prob.x_star)
    Fs = cl.F(xs)
    x, out = _vec(x0), {k: [] for k in ("gap", "dist2", "grad_norm2", "loss", "shadow_gap",
                                        "g2_max", "lr", "drift_max", "drift_sum", "disc_max")}
    for r in range(T + 1):
        _state(cl, x, xs, Fs, out)
        if r == T:
            break
        xbar = _round(cl, x, Fs, [mpmath.mpf(float(s)) for s in steps[r * tau:(r + 1) * tau]],
                      out, prox, beta, scaf, None if masks is None else [bool(v) for v in masks[r]])
        x = xbar if ada is None else ada.step(x, xbar)
    out["F_star"], out["x_star"] = Fs, xs
    if "Gamma" in plan.measured:  # Li et al.'s F* - sum_i p_i F_i*, the client minima re-solved
        if getattr(prob, "x_star_i", None) is None:
            raise Unsupported("Gamma needs the clients' minimisers")
        out["Gamma"] = Fs - mpmath.fsum(
            pi * cl.loss(i, cl.optimum(prob.x_star_i[i], client=i)) for i, pi in enumerate(cl.p))
    return out


def _state(cl, x, xs, Fs, out):
    loss = cl.F(x)
    out["loss"].append(loss)
    out["gap"].append(loss - Fs)
    out["dist2"].append(mpmath.fsum((a - b) ** 2 for a, b in zip(x, xs)))
    g = cl.gradF(x)
    out["grad_norm2"].append(_dot(g, g))


class _Beta:
    """The beta algorithm's graph (toys.algorithms.beta.graph of falsify's messages, float64
    values taken exactly), its beta and the neighbour averages U (u_i = x0 before round 1)."""

    def __init__(self, plan, N, x0):
        from toys.algorithms.beta import graph

        from .toys_map import beta_messages

        g = graph(beta_messages(N))
        self.beta = mpmath.mpf(float(plan.hyper["beta"]))
        self.P = [_vec(row) for row in g["P"]]
        self.degree = _vec(g["degree"])
        w = _vec(g["p"])
        total = mpmath.fsum(w)
        self.alpha = [v / total for v in w]
        self.U = [_vec(x0) for _ in range(N)]

    def point(self, i, w):
        """Client i's perturbed iterate beta w + (1 - beta) u_i (where its gradient is taken)."""
        return [self.beta * wk + (1 - self.beta) * uk for wk, uk in zip(w, self.U[i])]

    def end_round(self, W, x):
        """u_i = p_i^{-1} sum_n p_in W_n (the round's start x where p_i = 0)."""
        N = len(W)
        self.U = [[mpmath.fsum(self.P[i][n] * W[n][j] for n in range(N)) / self.degree[i]
                   for j in range(len(x))] if self.degree[i] > 0 else list(x)
                  for i in range(N)]


class _Scaffold:
    """SCAFFOLD's control variates (option II, toys.algorithms.scaffold): the server's c and
    the clients' C_i, 0 at the start, c = sum_i p_i C_i."""

    def __init__(self, N, d, p):
        self.p = p
        self.c = [mpmath.mpf(0)] * d
        self.C = [[mpmath.mpf(0)] * d for _ in range(N)]

    def shift(self, i):
        """The correction c - c_i added to client i's every gradient."""
        return [ck - Ck for ck, Ck in zip(self.c, self.C[i])]

    def end_round(self, W, x, lrs):
        """c_i+ = c_i - c + (x - W_i) / (sum of the round's step sizes); c += sum_i p_i
        (c_i+ - c_i)."""
        s = mpmath.fsum(lrs)
        new = [[Ck - ck + (xk - wk) / s for Ck, ck, xk, wk in zip(Ci, self.c, x, Wi)]
               for Ci, Wi in zip(self.C, W)]
        self.c = [ck + mpmath.fsum(pi * (new[i][k] - self.C[i][k]) for i, pi in enumerate(self.p))
                  for k, ck in enumerate(self.c)]
        self.C = new


_ADAPTIVE = ("fedadagrad", "fedadam", "fedyogi")  # toys' AdaptiveStep servers


class _Adaptive:
    """FedAdagrad / FedAdam / FedYogi's server step (toys.algorithms.adaptive; its defaults,
    the plan's hyper-parameters over them): m, v start at 0 and eps^2."""

    def __init__(self, plan, d):
        import toys

        step = toys.algorithms.get(plan.algorithm).server
        self.kind = step.kind
        self.lr, self.b1, self.b2, self.eps = (
            mpmath.mpf(float(plan.hyper.get(k, getattr(step, k))))
            for k in ("server_lr", "beta1", "beta2", "eps"))
        self.m, self.v = [mpmath.mpf(0)] * d, [self.eps ** 2] * d

    def step(self, x, xbar):
        """x + server_lr m / (sqrt(v) + eps) on the pseudo-gradient D = xbar - x."""
        D = [b - a for a, b in zip(x, xbar)]
        self.m = [self.b1 * m + (1 - self.b1) * dk for m, dk in zip(self.m, D)]
        if self.kind == "adagrad":
            self.v = [v + dk * dk for v, dk in zip(self.v, D)]
        elif self.kind == "adam":
            self.v = [self.b2 * v + (1 - self.b2) * dk * dk for v, dk in zip(self.v, D)]
        else:
            self.v = [v - (1 - self.b2) * dk * dk * mpmath.sign(v - dk * dk)
                      for v, dk in zip(self.v, D)]
        return [xk + self.lr * m / (mpmath.sqrt(v) + self.eps)
                for xk, m, v in zip(x, self.m, self.v)]


def _weights(p, part):
    """FedAvg's weights of the round: p renormalised over the participants ``part``."""
    if part is None:
        return p
    total = mpmath.fsum(pi for pi, on in zip(p, part) if on)
    return [pi / total if on else mpmath.mpf(0) for pi, on in zip(p, part)]


def _round(cl, x, Fs, lrs, out, prox=0, beta=None, scaf=None, part=None):
    """tau local steps of every client from x (FedProx's proximal term ``prox`` (W - x)), the
    server average after each for the shadow gap; returns x + sum_i p_i (W_i - x) (toys'
    FedAvg server step). With the beta algorithm's state ``beta`` (:class:`_Beta`) each
    gradient is taken at the perturbed iterate, the averages use its aggregation weights, and
    U follows the round; with SCAFFOLD's ``scaf`` (:class:`_Scaffold`) each gradient is
    corrected by c - c_i (the gradient the step and g2_max see) and the variates follow. With
    the round's participants ``part`` (bools) the others stay at x, the weights are p
    renormalised over the participants, and the drift and g2_max are the participants'; a round
    without participants leaves x and records NaN, as toys.run."""
    N = len(cl.p)
    if part is not None and not any(part):  # toys.run: x stays, the round's values are NaN
        for k in ("shadow_gap", "g2_max", "drift_max", "drift_sum", "disc_max"):
            out[k].append(mpmath.nan)
        out["lr"].append(lrs[0])
        return list(x)
    a = _weights(cl.p, part) if beta is None else beta.alpha  # the virtual average's weights
    on = [True] * N if part is None else part
    W = [list(x) for _ in range(N)]
    shadow, g2 = mpmath.mpf(0), mpmath.mpf(0)
    dmax, dsum, disc = mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(0)
    xbar = x
    for k, lr in enumerate(lrs):
        G = [cl.grad(i, W[i] if beta is None else beta.point(i, W[i])) if on[i] else None
             for i in range(N)]
        if scaf is not None:
            G = [[g + sh for g, sh in zip(G[i], scaf.shift(i))] for i in range(N)]
        g2 = max(g2, max(_dot(g, g) for g in G if g is not None))
        W = [[w - lr * (g + prox * (w - xj)) for w, g, xj in zip(W[i], G[i], x)] if on[i]
             else W[i] for i in range(N)]
        xbar = [xk + mpmath.fsum(ai * (W[i][j] - xk) for i, ai in enumerate(a))
                for j, xk in enumerate(x)]
        shadow += cl.F(xbar) - Fs
        dn = [mpmath.fsum((u - v) ** 2 for u, v in zip(W[i], xbar)) for i in range(N)]
        dp = [v if on[i] else mpmath.mpf(0) for i, v in enumerate(dn)]  # the participants'
        dmax, disc = max(dmax, max(dp)), max(disc, mpmath.fsum(w * v for w, v in zip(a, dn)))
        if k < len(lrs) - 1:  # k = 1..tau-1 (DKR Lemma 2.2)
            dsum += mpmath.fsum(dp)
    if beta is not None:
        beta.end_round(W, x)
    if scaf is not None:
        scaf.end_round(W, x, lrs)
    out["shadow_gap"].append(shadow / len(lrs))
    out["g2_max"].append(g2)
    out["lr"].append(lrs[0])
    out["drift_max"].append(dmax)
    out["drift_sum"].append(dsum)
    out["disc_max"].append(disc)
    return xbar
