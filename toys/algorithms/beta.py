"""Seed 003 (Buttaci & Calafiore): messages, the affinity graph and the beta-perturbed iterate.

Setup, once (spec §5.2.1):

* message m_i = unit first principal component of client i's **uncentered, unscaled** data
  (top eigenvector of X_i^T X_i), sign fixed so that m_i . mean(X_i) >= 0 (tie-break: first
  coordinate with |m_ij| > 1e-8 positive). Problems without data rows (quadratics) use the top
  eigenvector of A_i (the Hessian plays the role of X_i^T X_i / n_i; sign by the tie-break rule);
* mis(i, n) = (1 - m_i . m_n) / 2 in [0, 1]; adjacency A_in = -ln(max(mis, eps_mis)), A_ii = 0
  (mis = 0, e.g. duplicated clients, is clipped to ``eps_mis`` = 1e-12 instead of giving +inf);
* p_in = A_in / sum A, p_i = sum_n p_in (the aggregation weights). If sum A = 0 (one client, or
  all messages pairwise antipodal) p_in is undefined: p_i = 1/N and every u_i = w_bar.

Per round (§5.2.2): the gradient of local step k is taken at w~ = beta w + (1 - beta) u_i and
applied to w; after the round u_i = p_i^{-1} sum_n p_in w^n_{t-1,E} (a client with p_i = 0 gets
u_i = w_bar); absent clients contribute w^n = w_bar (assumption of the spec: thesis-code
behaviour); w_bar <- sum_{i in S_t} p_i w^i / sum_{i in S_t} p_i (normalised, as the spec
recommends for M < C; identical to the paper under full participation).

Local steps follow the engine's sampling (full batch, or a fresh uniform minibatch per step),
not the paper's partition of D_i into E minibatches per epoch; beta = 1 (allowed here, the
theorems need beta < 1) is exactly FedAvg with the graph weights.

Example
-------
>>> import numpy as np
>>> g = graph(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]))
>>> np.round(g["mis"], 3).tolist()[0]
[0.0, 0.2, 0.5]
>>> round(float(g["p"].sum()), 12)
1.0
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from .._array import array_namespace, wmatmul

__all__ = ["graph", "graph_for", "messages", "neighbour_average", "perturbed"]


def graph_for(setup, messages_=None) -> dict:
    """The graph of a run (computed once per run, shared by the pieces through
    ``setup.cache``, and recorded in ``Trace.info["graph"]``): from explicit ``messages``
    (N, D) when given, else from the problem's data (:func:`messages`). For a population
    (:func:`toys.run_many`: ``setup.problem`` has ``n_instances``) each instance's graph
    from its own problem, stacked on a leading axis (``P`` (B, N, N), ``degree`` and ``p``
    (B, N)); explicit messages give every instance the same graph."""
    if "graph" not in setup.cache:
        if messages_ is not None:
            msg = np.asarray(messages_, dtype=float)
            if msg.ndim != 2 or msg.shape[0] != setup.n_clients or not np.all(np.isfinite(msg)) \
                    or np.any(np.linalg.norm(msg, axis=1) == 0):
                raise DomainError("messages", messages_, f"finite array of shape "
                                  f"({setup.n_clients}, D) with nonzero rows")
            setup.cache["graph"] = graph(msg)
        elif hasattr(setup.problem, "n_instances"):
            setup.cache["graph"] = _population_graph(setup.problem)
        else:
            setup.cache["graph"] = graph(messages(setup.problem))
        setup.info["graph"] = setup.cache["graph"]
    return setup.cache["graph"]


def _population_graph(pop) -> dict:
    """Every instance's :func:`graph` from its own problem (``pop.problems``: the stacked
    problems, :func:`toys.problems.stacked.stack`), stacked on a leading axis: the bits of
    each instance's own run (a loop over the instances at bind time only)."""
    problems = getattr(pop, "problems", None)
    if problems is None:
        raise DomainError("problems", pop, "a population that keeps its problems "
                          "(toys.stack) for seed 003's graph", "or pass messages=...")
    graphs = [graph(messages(q)) for q in problems]
    return {k: np.stack([g[k] for g in graphs]) for k in graphs[0]}


def _fix_sign(m: np.ndarray, ref: np.ndarray | None) -> np.ndarray:
    """Flip rows of ``m`` so that m_i . ref_i >= 0; rows with |m_i . ref_i| <= 1e-12 |ref_i|
    (or ``ref`` None) get their first coordinate with |m_ij| > 1e-8 positive."""
    N = m.shape[0]
    first = np.argmax(np.abs(m) > 1e-8, axis=1)
    tie = np.sign(m[np.arange(N), first])
    if ref is None:
        s = tie
    else:
        dot = np.einsum("ij,ij->i", m, ref)
        s = np.where(np.abs(dot) > 1e-12 * np.linalg.norm(ref, axis=1), np.sign(dot), tie)
    s = np.where(s == 0, 1.0, s)
    return m * s[:, None]


def messages(problem) -> np.ndarray:
    """The unit messages m_i (N, D) of a problem (see the module docstring for the rules).

    Uses ``problem.arrays()``: data rows ``X`` (N, n_max, ...) with ``mask`` (padded rows zero),
    or quadratic Hessians ``A`` (N, d, d).

    >>> import numpy as np, toys
    >>> m = messages(toys.quadratic(n_clients=3, dim=2, seed=0))
    >>> np.round(np.linalg.norm(m, axis=1), 12).tolist()
    [1.0, 1.0, 1.0]
    """
    from .._array import one_blas_thread

    with one_blas_thread():  # many small eigh: threads only contend (1.1 s vs 0.07 s loaded)
        return _messages(problem.arrays(), getattr(problem, "name", problem))


def _messages(arr, name) -> np.ndarray:
    if "X" in arr:
        X = np.asarray(arr["X"], dtype=float)
        X = X.reshape(X.shape[0], X.shape[1], -1)
        mask = np.asarray(arr["mask"], dtype=bool)
        X = np.where(mask[..., None], X, 0.0)
        _, n, f = X.shape
        if n < f:  # Gram trick: top eigenvector of X X^T, mapped back by X^T
            Gm = np.einsum("nkf,njf->nkj", X, X)
            _, V = np.linalg.eigh(Gm)
            m = np.einsum("nkf,nk->nf", X, V[:, :, -1])
        else:
            C = np.einsum("nkf,nkg->nfg", X, X)
            _, V = np.linalg.eigh(C)
            m = V[:, :, -1]
        norms = np.linalg.norm(m, axis=1)
        if np.any(norms == 0):
            raise DomainError("X", X, "clients with at least one nonzero data row",
                              "the message of an all-zero client is undefined")
        m = m / norms[:, None]
        mean = X.sum(axis=1) / mask.sum(axis=1)[:, None]
        return _fix_sign(m, mean)
    if "A" in arr:
        _, V = np.linalg.eigh(np.asarray(arr["A"], dtype=float))
        return _fix_sign(V[:, :, -1], None)
    raise DomainError("problem", name,
                      "a problem with data rows (arrays()['X']) or Hessians (arrays()['A'])",
                      "pass messages=... explicitly")


def graph(m, eps_mis: float = 1e-12) -> dict:
    """Misalignment, adjacency and weights from unit messages ``m`` (N, D).

    Returns a dict with ``mis`` (N, N), ``A`` (N, N), ``P`` (p_in, N x N), ``degree``
    (p_i = sum_n p_in; zero for an isolated client) and ``p`` (aggregation weights: the
    degrees, or uniform when sum A = 0).

    >>> import numpy as np
    >>> g = graph(np.array([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]]))   # mis = 0 and mis = 1
    >>> bool(np.all(np.isfinite(g["P"]))), g["degree"].tolist()
    (True, [0.5, 0.5, 0.0])
    """
    m = np.asarray(m, dtype=float)
    if m.ndim != 2 or not np.all(np.isfinite(m)):
        raise DomainError("messages", m, "finite array of shape (N, D)")
    norms = np.linalg.norm(m, axis=1)
    if np.any(norms == 0):
        raise DomainError("messages", m, "nonzero rows (normalised to unit length)")
    m = m / norms[:, None]
    N = m.shape[0]
    mis = np.clip((1.0 - m @ m.T) / 2.0, 0.0, 1.0)
    mis = 0.5 * (mis + mis.T)
    np.fill_diagonal(mis, 0.0)
    A = -np.log(np.maximum(mis, eps_mis))
    A = np.where(np.eye(N, dtype=bool), 0.0, np.maximum(A, 0.0))
    total = A.sum()
    if total > 0:
        P = A / total
        degree = P.sum(axis=1)
        p = degree.copy()
    else:
        P = np.zeros((N, N))
        degree = np.zeros(N)
        p = np.full(N, 1.0 / N)
    return {"messages": m, "mis": mis, "A": A, "P": P, "degree": degree, "p": p}


def neighbour_average(P, degree, W_last, w_bar):
    """u_i = p_i^{-1} sum_n p_in W_last[n]; clients with p_i = 0 get ``w_bar``. A population
    (:func:`toys.run_many`) carries a leading instance axis: ``W_last`` (B, N, d), ``w_bar``
    (B, d), ``P`` (B, N, N) or (N, N), ``degree`` (B, N) or (N,); each instance gets the bits
    of its own (:func:`toys._array.wmatmul`).

    >>> import numpy as np
    >>> P = np.array([[0.0, 0.5], [0.5, 0.0]]); deg = P.sum(1)
    >>> neighbour_average(P, deg, np.array([[1.0], [3.0]]), np.zeros(1)).tolist()
    [[3.0], [1.0]]
    >>> neighbour_average(P, deg, np.array([[[1.0], [3.0]]]), np.zeros((1, 1))).tolist()
    [[[3.0], [1.0]]]
    """
    xp = array_namespace(W_last)
    ok = degree > 0
    U = wmatmul(P, W_last) / xp.where(ok, degree, 1.0)[..., None]
    return xp.where(ok[..., None], U, w_bar[..., None, :])


def perturbed(beta: float, W, U):
    """The perturbed iterate w~ = beta w + (1 - beta) u (what the gradient is evaluated at).

    >>> import numpy as np
    >>> perturbed(0.25, np.array([[4.0]]), np.array([[0.0]])).tolist()
    [[1.0]]
    """
    return beta * W + (1.0 - beta) * U
