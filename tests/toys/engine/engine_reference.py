"""Reference implementations for the engine tests: plain per-client loops, written from the
papers' pseudo-code (spec seeds-000-001-004 §5, seeds-002-003 §5), independent of toys' pieces.

Only the problems' raw arrays (``problem.arrays()``), ``p``, the exact optima and the
participation processes (to reproduce the documented random streams) are used. Randomness
contract of ``toys.run`` (documented in toys.engine): ``SeedSequence(seed).spawn(2)`` ->
(participation stream, sampling stream); the participation process consumes the first stream
round by round; each local step of a round with at least one participant draws, from the
second stream, ``random((N, n_max))`` keys (logistic minibatches; client i takes its b real rows
of smallest key) or ``standard_normal((N, d))`` noise (quadratics with noise_std > 0) — only
when the step is stochastic.
"""

from __future__ import annotations

import math

import numpy as np


# ----------------------------------------------------------------------------- client oracles
class Clients:
    """Per-client loss / gradient functions of a problem, one client at a time."""

    def __init__(self, prob):
        self.prob = prob
        a = prob.arrays()
        self.N, self.d = prob.n_clients, prob.dim
        self.p = np.asarray(prob.p, float)
        if "A" in a:
            self.kind = "quadratic"
            self.A, self.c, self.b = a["A"], a["c"], a["b"]
            self.noise = float(a.get("noise_std", 0.0))
            self.n_max = 1
        else:
            self.kind = a["kind"]
            mask = a["mask"]
            self.n = mask.sum(axis=1)
            self.n_max = mask.shape[1]
            self.rows = [np.flatnonzero(mask[i]) for i in range(self.N)]
            self.X = [a["X"][i][self.rows[i]] for i in range(self.N)]
            self.y = [a["y"][i][self.rows[i]] for i in range(self.N)]
            off = a.get("offset")
            self.off = [np.zeros(len(r)) if off is None else off[i][self.rows[i]]
                        for i, r in enumerate(self.rows)]
            self.l2, self.C = float(a["l2"]), int(a.get("classes", 2))

    def loss(self, i, w):
        if self.kind == "quadratic":
            dlt = w - self.c[i]
            return 0.5 * dlt @ self.A[i] @ dlt + self.b[i]
        return self._loss_rows(i, w, np.arange(len(self.rows[i])))

    def _loss_rows(self, i, w, sel):
        X, y = self.X[i][sel], self.y[i][sel]
        if self.kind == "logistic":
            z = X @ w + self.off[i][sel]
            ell = np.logaddexp(0.0, z) - y * z
        else:
            Z = X @ w.reshape(-1, self.C)
            ell = np.array([np.logaddexp.reduce(Z[j]) - Z[j, int(y[j])] for j in range(len(y))])
        return ell.mean() + 0.5 * self.l2 * w @ w

    def _grad_rows(self, i, w, sel):
        X, y = self.X[i][sel], self.y[i][sel]
        if self.kind == "logistic":
            z = X @ w + self.off[i][sel]
            return X.T @ (1.0 / (1.0 + np.exp(-z)) - y) / len(sel) + self.l2 * w
        Z = X @ w.reshape(-1, self.C)
        P = np.exp(Z - Z.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        P[np.arange(len(y)), y.astype(int)] -= 1.0
        return (X.T @ P / len(sel)).reshape(-1) + self.l2 * w

    def grad(self, i, w):
        if self.kind == "quadratic":
            return self.A[i] @ (w - self.c[i])
        return self._grad_rows(i, w, np.arange(len(self.rows[i])))

    def stochastic(self, batch_size):
        if batch_size is None:
            return False
        if self.kind == "quadratic":
            return self.noise > 0
        return batch_size < self.n_max

    def draw(self, rng, batch_size):
        """One step's random draw (for all N clients), or None."""
        if not self.stochastic(batch_size):
            return None
        if self.kind == "quadratic":
            return rng.standard_normal((self.N, self.d))
        return rng.random((self.N, self.n_max))

    def sgrad(self, i, w, draw, batch_size):
        g = self.grad(i, w) if draw is None or self.kind != "quadratic" else None
        if draw is None:
            return g
        if self.kind == "quadratic":
            return self.A[i] @ (w - self.c[i]) + draw[i] * (self.noise / math.sqrt(batch_size))
        keys = draw[i][self.rows[i]]
        sel = np.argsort(keys, kind="stable")[:min(batch_size, len(keys))]
        return self._grad_rows(i, w, sel)

    def F(self, w):
        return sum(self.p[i] * self.loss(i, w) for i in range(self.N))

    def gradF(self, w):
        return sum(self.p[i] * self.grad(i, w) for i in range(self.N))


# ----------------------------------------------------------------------------- weight rules
def rule_weights(rule, scores, p, mask, r, h, N):
    parts = [i for i in range(N) if mask[i]]
    a = np.zeros(N)
    if not parts:
        return a
    inv_t = h.get("inv_temperature", 1.0 / h.get("temperature", 1.0))
    if rule == "hybrid":
        rules = list(h.get("rules", ("fedsoftbetter", "fedavg")))
        sw = h.get("switch_round", 20)
        sw = [sw] if np.isscalar(sw) else list(sw)
        j = sum(1 for b in sw if r >= b)
        return rule_weights(rules[j], scores, p, mask, r, {**h, "rules": None}, N)
    if rule == "anneal":
        base = h.get("rule", "fedsoftmax")
        if h.get("schedule", "temperature") == "temperature":
            h2 = {"inv_temperature": inv_t * h.get("decay", 0.9) ** r, "k": h.get("k")}
            return rule_weights(base, scores, p, mask, r, h2, N)
        lam = min(1.0, r / h.get("mix_rounds", 10))
        return (1 - lam) * rule_weights(base, scores, p, mask, r, h, N) + \
            lam * rule_weights("fedavg", scores, p, mask, r, h, N)
    if rule in ("fedavg", "fedprox", "fedprox-bc", "average-participating"):
        s = sum(p[i] for i in parts)
        for i in parts:
            a[i] = p[i] / s
    elif rule in ("fedmax", "fedbetter"):
        sign = 1 if rule == "fedmax" else -1
        best = max(sign * scores[i] for i in parts)
        J = [i for i in parts if sign * scores[i] == best]
        for i in J:
            a[i] = 1.0 / len(J)
    elif rule in ("fedmax-k", "fedbetter-k"):
        sign = 1 if rule == "fedmax-k" else -1
        k = h["k"]
        k = int(k) if float(k) == int(k) else max(1, int(k * N))
        order = sorted(parts, key=lambda i: (-sign * scores[i], i))[:min(k, len(parts))]
        for i in order:
            a[i] = 1.0 / len(order)
    elif rule in ("fedsoftmax", "fedsoftbetter"):
        sign = 1 if rule == "fedsoftmax" else -1
        z = {i: math.log(p[i]) + sign * inv_t * scores[i] for i in parts}
        zm = max(z.values())
        e = {i: math.exp(z[i] - zm) for i in parts}
        s = sum(e.values())
        for i in parts:
            a[i] = e[i] / s
    else:
        raise ValueError(rule)
    return a


def fedau_omega_literal(chi, K):
    """Algorithm 2 of seed 002 exactly as printed (spec §5.1.2), one client; returns omega_t
    for t = 0..T-1 from the participation history chi (T,)."""
    T = len(chi)
    omega = np.empty(T)
    M, Sd = 0, 0
    omega[0] = 1.0
    for t in range(1, T):
        Sd += 1
        if chi[t - 1] or Sd == K:
            S = Sd
            omega[t] = S if M == 0 else (M * omega[t - 1] + S) / (M + 1)
            M += 1
            Sd = 0
        else:
            omega[t] = omega[t - 1]
    return omega


# ----------------------------------------------------------------------------- seed 003 graph
def bc_messages(prob):
    """First right singular vector of each client's uncentered data (SVD), sign by the mean."""
    a = prob.arrays()
    out = []
    for i in range(prob.n_clients):
        if "A" in a:
            _, vecs = np.linalg.eigh(a["A"][i])
            m = vecs[:, -1]
            j = int(np.argmax(np.abs(m) > 1e-8))
            out.append(m if m[j] > 0 else -m)
            continue
        Xi = a["X"][i][a["mask"][i]].reshape(int(a["mask"][i].sum()), -1)
        m = np.linalg.svd(Xi, full_matrices=False)[2][0]
        s = m @ Xi.mean(axis=0)
        if abs(s) <= 1e-12 * np.linalg.norm(Xi.mean(axis=0)):
            j = int(np.argmax(np.abs(m) > 1e-8))
            s = m[j]
        out.append(m if s >= 0 else -m)
    return np.array(out)


def bc_graph(m, eps=1e-12):
    N = len(m)
    m = m / np.linalg.norm(m, axis=1, keepdims=True)
    A = np.zeros((N, N))
    for i in range(N):
        for n in range(N):
            if i != n:
                mis = min(max((1 - m[i] @ m[n]) / 2, 0.0), 1.0)
                A[i, n] = max(-math.log(max(mis, eps)), 0.0)
    A = (A + A.T) / 2
    tot = A.sum()
    if tot == 0:
        return np.zeros((N, N)), np.zeros(N), np.full(N, 1.0 / N)
    P = A / tot
    deg = np.array([sum(P[i]) for i in range(N)])
    return P, deg, deg.copy()


# ----------------------------------------------------------------------------- the reference run
def reference_run(prob, algo, rounds, seed, masks=None, process=None, x0=None, **h):
    """Per-client-loop simulation; returns a dict of the Trace's quantities."""
    cl = Clients(prob)
    N, d, p = cl.N, cl.d, cl.p
    tau = int(h.get("local_steps", 1))
    lr = h["lr"]
    T_it = rounds * tau
    if callable(lr):
        lrs = [float(lr(t)) for t in range(T_it)]
    elif np.ndim(lr) == 0:
        lrs = [float(lr)] * T_it
    else:
        arr = list(np.asarray(lr, float))
        lrs = arr if len(arr) == T_it else [v for v in arr for _ in range(tau)]
    slr = float(h.get("server_lr", 1.0))
    b = h.get("batch_size")
    prox = float(h.get("prox", 0.0))
    beta = h.get("beta")
    ss_part, ss_samp = np.random.SeedSequence(seed).spawn(2)
    if masks is None:
        if process is None:
            masks = np.ones((rounds, N), bool)
        else:
            from toys.participation import sample

            masks = sample(process, rounds, np.random.default_rng(ss_part))
    samp = np.random.default_rng(ss_samp)
    x = np.array(prob.x0 if x0 is None else x0, float)
    xs, Fs, Fsi = prob.x_star, prob.F_star, np.asarray(prob.F_star_i)
    ystar = np.array([cl.loss(i, xs) - Fsi[i] for i in range(N)])
    out = {k: np.full(rounds + 1, np.nan) for k in ("gap", "dist2", "grad_dissim",
                                                    "grad_norm2", "loss")}
    for k in ("rho_sync", "rho_star", "rho_min", "shadow_gap", "drift_max", "drift_mean",
              "drift_sum", "disc_max", "g2_max", "zeta_obs"):
        out[k] = np.full(rounds, np.nan)
    out["alpha"] = np.zeros((rounds, N))
    out["omega"] = np.zeros((rounds, N))
    steps = {k: np.full((rounds, tau), np.nan) for k in ("shadow_gap", "rho", "dist2",
                                                        "drift_max", "disc", "g2_max",
                                                        "grad_norm2")}
    out["steps"] = steps
    # FedAU weights for every round from the whole participation history (omega_t uses chi_<t)
    if algo == "fedau":
        K = h.get("K", math.inf)
        omegas = np.stack([fedau_omega_literal(masks[:, i], K) for i in range(N)], axis=1)
    elif algo == "fedau-known":
        probs = process.probs if process is not None else masks.mean(axis=0)
        omegas = np.tile(np.where(probs > 0, 1.0 / np.where(probs > 0, probs, 1), 0.0),
                         (rounds, 1))
    elif algo == "average-all":
        omegas = np.ones((rounds, N))
    Ymem = [np.zeros(d) for _ in range(N)]
    if algo == "beta":
        msg = h.get("messages")
        P, deg, pg = bc_graph(bc_messages(prob) if msg is None else np.asarray(msg, float))
        U = [x.copy() for _ in range(N)]

    def metrics_at(j, point):
        L = [cl.loss(i, point) for i in range(N)]
        F = sum(p[i] * L[i] for i in range(N))
        G = [cl.grad(i, point) for i in range(N)]
        gF = sum(p[i] * G[i] for i in range(N))
        out["loss"][j] = F
        out["gap"][j] = F - Fs
        out["dist2"][j] = np.sum((point - xs) ** 2)
        out["grad_norm2"][j] = gF @ gF
        out["grad_dissim"][j] = max(np.linalg.norm(G[i] - gF) for i in range(N))
        return L, F

    def rho(a, point_losses):
        num = sum(a[i] * (point_losses[i] - Fsi[i]) for i in range(N))
        den = sum(p[i] * (point_losses[i] - Fsi[i]) for i in range(N))
        return num / den

    prev_end = None
    for r in range(rounds):
        mask = masks[r]
        parts = [i for i in range(N) if mask[i]]
        L, _ = metrics_at(r, x)
        off = h.get("loss_offset", "exact")
        vals = list(L)
        if h.get("score_point") == "local_end" and prev_end is not None:
            Wp, mp = prev_end
            vals = [cl.loss(i, Wp[i]) if mp[i] else L[i] for i in range(N)]
        if off in ("exact", "auto"):
            scores = [vals[i] - Fsi[i] for i in range(N)]
        elif off == "zero":
            scores = vals
        else:
            runmin = list(vals) if r == 0 or "_runmin" not in h else \
                [min(h["_runmin"][i], vals[i]) for i in range(N)]
            h["_runmin"] = runmin
            scores = [vals[i] - runmin[i] for i in range(N)]
        if algo == "beta":
            coef = rule_weights("fedavg", scores, pg, mask, r, h, N)
        elif algo in ("fedau", "fedau-known", "average-all"):
            out["omega"][r] = omegas[r]
            coef = np.array([p[i] * omegas[r][i] if mask[i] else 0.0 for i in range(N)])
        elif algo == "mifa":
            coef = np.array([p[i] if mask[i] else 0.0 for i in range(N)])
        elif algo == "fedvarp":
            coef = np.array([p[i] * N / len(parts) if mask[i] else 0.0 for i in range(N)])
        else:
            coef = rule_weights(algo, scores, p, mask, r, h, N)
        out["alpha"][r] = coef
        if parts:
            s = sum(coef[i] for i in parts)
            av = np.array([coef[i] / s if (mask[i] and s > 0) else 0.0 for i in range(N)])
            out["rho_sync"][r] = rho(av, L)
            out["rho_star"][r] = sum(av[i] * ystar[i] for i in range(N)) / prob.Gamma
        # local training (step-major random draws for all clients)
        W = [x.copy() for _ in range(N)]
        if parts:
            draws = [cl.draw(samp, b) for _ in range(tau)]
            traj = {i: [] for i in parts}
            gs = {i: [] for i in parts}
            for i in parts:
                w = x.copy()
                for k in range(tau):
                    pt = w if beta is None else beta * w + (1 - beta) * U[i]
                    g = cl.sgrad(i, pt, draws[k], b)
                    w = w - lrs[r * tau + k] * (g + prox * (w - x))
                    traj[i].append(w)
                    gs[i].append(g)
                W[i] = w
            rhos = []
            dsum, dmean = 0.0, 0.0
            for k in range(tau):
                wbar = sum(av[i] * traj[i][k] for i in parts)
                Lb = [cl.loss(i, wbar) for i in range(N)]
                steps["shadow_gap"][r, k] = sum(p[i] * Lb[i] for i in range(N)) - Fs
                steps["rho"][r, k] = rho(av, Lb)
                steps["dist2"][r, k] = np.sum((wbar - xs) ** 2)
                gbar = cl.gradF(wbar)
                steps["grad_norm2"][r, k] = gbar @ gbar
                dev = {i: np.sum((traj[i][k] - wbar) ** 2) for i in parts}
                steps["drift_max"][r, k] = max(dev.values())
                steps["disc"][r, k] = sum(av[i] * dev[i] for i in parts)
                steps["g2_max"][r, k] = max(gs[i][k] @ gs[i][k] for i in parts)
                dmean += sum(dev.values()) / len(parts)
                if k < tau - 1:
                    dsum += sum(dev.values())
                    rhos.append(steps["rho"][r, k])
            out["shadow_gap"][r] = np.mean(steps["shadow_gap"][r])
            out["rho_min"][r] = min([out["rho_sync"][r]] + rhos)
            out["drift_max"][r] = np.max(steps["drift_max"][r])
            out["drift_mean"][r] = dmean / tau
            out["drift_sum"][r] = dsum
            out["disc_max"][r] = np.max(steps["disc"][r])
            out["g2_max"][r] = np.max(steps["g2_max"][r])
            z = 0.0
            for i in parts:
                gi = cl.grad(i, W[i])
                gF = cl.gradF(W[i])
                z = max(z, np.linalg.norm(gi - gF))
            out["zeta_obs"][r] = z
        Delta = [W[i] - x if mask[i] else np.zeros(d) for i in range(N)]
        if algo == "mifa":
            for i in parts:
                Ymem[i] = Delta[i]
            x_new = x + slr * sum(p[i] * Ymem[i] for i in range(N))
        elif algo == "fedvarp":
            if parts:
                v = sum(p[i] * Ymem[i] for i in range(N)) + \
                    sum(N / len(parts) * p[i] * (Delta[i] - Ymem[i]) for i in parts)
                for i in parts:
                    Ymem[i] = Delta[i]
                x_new = x + slr * v
            else:
                x_new = x
        else:
            x_new = x + slr * sum(coef[i] * Delta[i] for i in range(N))
        if algo == "beta":
            Wlast = [W[i] if mask[i] else x for i in range(N)]
            U = [sum(P[i, n] * Wlast[n] for n in range(N)) / deg[i] if deg[i] > 0 else x.copy()
                 for i in range(N)]
        prev_end = (W, mask)
        x = x_new
    metrics_at(rounds, x)
    out["final"] = x
    out["masks"] = masks
    return out
