"""Plain per-client reference loops for the comparison algorithms (Power-of-Choice, local work,
SCAFFOLD, FedNova, FedAdagrad / FedAdam / FedYogi), written from the papers' pseudo-code with
Python loops over clients and local steps. They share no code with toys' pieces: only the
problems' raw data (quadratic A_i, c_i, b_i; logistic rows and labels) and the documented
random streams are used.

Randomness contract (toys.algorithms.local_work / selection): participation masks come from
``SeedSequence(seed).spawn(2)[0]``; round r's local-work draws from
``default_rng(SeedSequence(seed, spawn_key=(3, r)))``: ``integers(min_steps, tau + 1)`` when
min_steps is given, then ``random(N)`` (straggler?) and ``random(N)`` (fraction u) when
straggler_prob > 0; round r's Power-of-Choice Gumbel noise is
``default_rng(SeedSequence(seed, spawn_key=(2, r))).gumbel(size=N)``.
"""

from __future__ import annotations

import math

import numpy as np


class QuadClients:
    """F_i(w) = 1/2 (w - c_i)^T A_i (w - c_i) + b_i, one client at a time."""

    def __init__(self, A, c, b, p):
        self.A, self.c, self.b = A, c, b
        self.N, self.d = c.shape
        self.p = np.asarray(p, float)

    def loss(self, i, w):
        e = w - self.c[i]
        return 0.5 * e @ self.A[i] @ e + self.b[i]

    def grad(self, i, w):
        return self.A[i] @ (w - self.c[i])


class LogisticClients:
    """Binary logistic: mean of log(1 + e^z) - y z over client i's rows, + l2/2 ||w||^2."""

    def __init__(self, Xs, ys, l2):
        self.Xs, self.ys, self.l2 = Xs, ys, l2
        self.N, self.d = len(Xs), Xs[0].shape[1]
        n = np.array([len(y) for y in ys], float)
        self.p = n / n.sum()

    def loss(self, i, w):
        z = self.Xs[i] @ w
        return np.mean(np.logaddexp(0.0, z) - self.ys[i] * z) + 0.5 * self.l2 * (w @ w)

    def grad(self, i, w):
        X, y = self.Xs[i], self.ys[i]
        s = 1.0 / (1.0 + np.exp(-(X @ w)))
        return X.T @ (s - y) / len(y) + self.l2 * w


def masks_of(process, rounds, seed, N):
    """The participation masks of toys.run (stream 0 of the run's seed), or all ones."""
    if process is None:
        return np.ones((rounds, N), bool)
    from toys.participation import sample

    ss = np.random.SeedSequence(seed).spawn(2)[0]
    return sample(process, rounds, np.random.default_rng(ss))


def steps_of(seed, r, N, tau, client_steps=None, min_steps=None, straggler_prob=0.0):
    """tau_i(r) for i = 0..N-1, as a list."""
    base = [tau] * N if client_steps is None else list(client_steps)
    if min_steps is None and straggler_prob == 0:
        return base
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(3, r)))
    out = list(base)
    if min_steps is not None:
        out = [int(v) for v in rng.integers(min_steps, np.array(base) + 1)]
    if straggler_prob > 0:
        slow, u = rng.random(N), rng.random(N)
        for i in range(N):
            if slow[i] < straggler_prob:
                out[i] = max(1, math.ceil(u[i] * out[i]))
    return out


def poc_weights(cl, x, seed, r, mask, k, d):
    """Power-of-Choice: d available clients by largest log p_i + Gumbel_i, then the k of
    largest loss at x (ties: lower index), weight 1/k each."""
    g = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2, r))).gumbel(size=cl.N)
    avail = [i for i in range(cl.N) if mask[i]]
    cand = sorted(avail, key=lambda i: (-(math.log(cl.p[i]) + g[i]), i))[:min(d, len(avail))]
    loss = {i: cl.loss(i, x) for i in cand}
    kept = sorted(cand, key=lambda i: (-loss[i], i))[:min(k, len(cand))]
    return [1.0 / len(kept) if i in kept else 0.0 for i in range(cl.N)]


def reference(cl, algo, rounds, seed, masks, lr, local_steps=None, server_lr=None, prox=0.0,
              client_steps=None, min_steps=None, straggler_prob=0.0, k=None, candidates=None,
              beta1=0.9, beta2=0.99, eps=1e-3, x0=None):
    """The final model and the per-round weights of ``algo`` (constant step size ``lr``)."""
    N, d, p = cl.N, cl.d, cl.p
    tau = local_steps or (max(client_steps) if client_steps is not None else 1)
    if server_lr is None:
        server_lr = 1e-2 if algo in ("fedadagrad", "fedadam", "fedyogi") else 1.0
    x = np.zeros(d) if x0 is None else np.array(x0, float)
    c, C = np.zeros(d), [np.zeros(d) for _ in range(N)]
    m, v = np.zeros(d), np.full(d, eps ** 2)
    alphas = np.zeros((rounds, N))
    for r in range(rounds):
        mask = masks[r]
        parts = [i for i in range(N) if mask[i]]
        taus = steps_of(seed, r, N, tau, client_steps, min_steps, straggler_prob)
        if algo == "poc":
            w = poc_weights(cl, x, seed, r, mask, k, candidates)
        else:
            tot = sum(p[i] for i in parts)
            w = [p[i] / tot if mask[i] else 0.0 for i in range(N)]
        alphas[r] = w
        Delta = [np.zeros(d) for _ in range(N)]
        C_new = list(C)
        for i in parts:
            y = x.copy()
            for _ in range(taus[i]):
                g = cl.grad(i, y)
                if algo == "scaffold":
                    g = g - C[i] + c
                y = y - lr * (g + prox * (y - x))
            Delta[i] = y - x
            if algo == "scaffold":
                C_new[i] = C[i] - c + (x - y) / (taus[i] * lr)
        if algo == "scaffold":
            c = c + sum(p[i] * (C_new[i] - C[i]) for i in parts)
            C = C_new
        if not parts and algo in ("fedadagrad", "fedadam", "fedyogi"):
            continue
        if algo == "fednova":
            a = {i: (taus[i] if prox == 0 else (1 - (1 - lr * prox) ** taus[i]) / (lr * prox))
                 for i in parts}
            tau_eff = sum(w[i] * a[i] for i in parts)
            x = x + server_lr * tau_eff * sum(w[i] * Delta[i] / a[i] for i in parts)
        elif algo in ("fedadagrad", "fedadam", "fedyogi"):
            D = sum(w[i] * Delta[i] for i in parts)
            m = beta1 * m + (1 - beta1) * D
            for j in range(d):
                if algo == "fedadagrad":
                    v[j] = v[j] + D[j] ** 2
                elif algo == "fedadam":
                    v[j] = beta2 * v[j] + (1 - beta2) * D[j] ** 2
                else:
                    v[j] = v[j] - (1 - beta2) * D[j] ** 2 * np.sign(v[j] - D[j] ** 2)
            x = x + server_lr * m / (np.sqrt(v) + eps)
        else:
            x = x + server_lr * sum(w[i] * Delta[i] for i in range(N))
    return x, alphas


# ----------------------------------------------------------------------------- test problems
def quadratic_pair(N=5, d=3, seed=0):
    """A heterogeneous quadratic with unequal weights and its per-client reference."""
    import toys

    w = np.linspace(1.0, 2.0, N)
    prob = toys.quadratic(n_clients=N, dim=d, L=4.0, mu=1.0, heterogeneity=1.0, seed=seed,
                          weights=w / w.sum())
    return prob, QuadClients(prob.A, prob.c, prob.b, prob.p)


def logistic_pair(N=5, d=3, seed=1, l2=0.1):
    """A binary logistic problem of unequal client sizes and its per-client reference."""
    import toys

    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(n, d)) + 0.4 * i for i, n in enumerate(rng.integers(6, 15, N))]
    ys = [(X @ rng.normal(size=d) + 0.5 * rng.normal(size=len(X)) > 0).astype(float)
          for X in Xs]
    return toys.logistic(Xs, ys, l2=l2), LogisticClients(Xs, ys, l2)


PAIRS = {"quadratic": quadratic_pair, "logistic": logistic_pair}
