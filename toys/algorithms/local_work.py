"""Per-client local work: heterogeneous local steps and stragglers (the "computational
heterogeneity" of seed 000's title; FedNova's setting, Wang et al. 2020).

:class:`LocalWork` says how many local steps tau_i(r) each client does in round r:

* ``client_steps`` — fixed per-client counts tau_i (default: every client does
  ``local_steps``);
* ``min_steps`` — each round, tau_i(r) uniform on {min_steps, ..., tau_i} (FedNova's
  experiments draw the local epochs uniformly from an interval);
* ``straggler_prob`` — each round, each client is a straggler with this probability and does
  max(1, ceil(u tau_i(r))) steps, u ~ U(0, 1): a random fraction of its steps.

The draws of round r come from :func:`round_rng` (seed, ``"work"``, r), a child of the run's
``SeedSequence`` that the engine's own streams never use: they do not depend on the backend,
on the minibatch stream or on the rounds before (so a resumed run draws the same), and every
piece that needs tau_i(r) (the client update, FedNova's server step) recomputes the same
values. Order of the draws of a round: ``integers(min_steps, tau + 1)`` (when ``min_steps``),
then ``random(N)`` (who straggles) and ``random(N)`` (u) (when ``straggler_prob > 0``).

:class:`HeteroSteps` is :class:`~toys.algorithms.client.LocalSteps` with a LocalWork: all the
clients run ``local_steps`` = max tau_i steps at once, with a per-client step mask (a client
that has done its tau_i(r) steps keeps its model; no loop over clients). Without heterogeneity
it is LocalSteps bit for bit. The registry's ``fedavg-hetero`` is FedAvg with it.

Example
-------
>>> import numpy as np
>>> work = LocalWork(local_steps=4, client_steps=(4, 2, 1))
>>> work.steps(0).tolist()
[4, 2, 1]
>>> work_sums(np.array([0.1, 0.1, 0.2, 0.2]), work.steps(0)).round(12).tolist()
[0.6, 0.2, 0.1]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from array_api_compat import device

from boundlab.errors import DomainError

from .._array import array_namespace, broadcast_rows, count
from ._hyper import client_steps_of, value
from .client import LocalSteps, participants_update

__all__ = ["STREAMS", "WORK_NAMES", "HeteroSteps", "LocalWork", "bind_work", "check_seeds",
           "instance_draws", "round_rng", "steps_like", "work_sums"]

STREAMS = {"selection": 2, "work": 3}
"""The children of ``SeedSequence(seed)`` that pieces draw from (the engine uses 0:
participation and 1: sampling)."""

WORK_NAMES = ("client_steps", "min_steps", "straggler_prob")
"""The hyper-parameters of :class:`LocalWork`."""
_MAX_SCHEDULE_BYTES = 1 << 32  # as toys.engine.run.MAX_BUFFER_BYTES (checked there for tau)


def round_rng(seed: int, stream: str, round: int) -> np.random.Generator:
    """The numpy Generator of ``stream`` (a key of :data:`STREAMS`) in round ``round``:
    ``default_rng(SeedSequence(seed, spawn_key=(STREAMS[stream], round)))``, i.e. child
    ``round`` of child ``STREAMS[stream]`` of the run's ``SeedSequence(seed)``.

    >>> a = round_rng(0, "work", 3).random(); b = round_rng(0, "work", 3).random()
    >>> a == b, a == round_rng(0, "work", 4).random()
    (True, False)
    """
    if seed is None:
        raise DomainError("seed", seed, "an integer >= 0 (the run's seed, Setup.seed)")
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(STREAMS[stream],
                                                                          int(round))))


def instance_draws(seed, stream: str, round: int, draw):
    """``draw(round_rng(seed, stream, round))``; for a population's seeds (a tuple:
    ``Setup.seed`` of :func:`toys.run_many`) every instance's own draw, stacked on a leading
    axis (a loop over the instances for the draws only).

    >>> instance_draws((0, 0, 1), "work", 2, lambda g: g.random(2)).shape
    (3, 2)
    """
    if isinstance(seed, tuple):
        return np.stack([draw(round_rng(s, stream, round)) for s in seed])
    return draw(round_rng(seed, stream, round))


def check_seeds(seed, stream: str) -> None:
    """Refuse a run without a seed (or a population with an instance without one) before any
    work, as :func:`round_rng` does."""
    for s in seed if isinstance(seed, tuple) else (seed,):
        round_rng(s, stream, 0)


@dataclass(frozen=True)
class LocalWork:
    """Each client's local steps per round (see the module docstring). ``local_steps`` is the
    largest count (the engine's tau); ``seed`` the run's seed (needed only for draws; a
    population's tuple of seeds: then the drawn counts are (B, N), each instance's own)."""

    local_steps: int = 1
    client_steps: tuple | None = None
    min_steps: int | None = None
    straggler_prob: float = 0.0
    seed: int | None = None

    @property
    def random(self) -> bool:
        """Whether tau_i(r) is drawn (else it is the same every round)."""
        return self.min_steps is not None or self.straggler_prob > 0

    def base(self) -> np.ndarray:
        """The fixed per-client counts tau_i, an int array (N,) (needs ``client_steps``)."""
        return np.asarray(self.client_steps, dtype=np.int64)

    def steps(self, round: int, n_clients: int | None = None) -> np.ndarray:
        """tau_i(r) for every client, an int array (N,) (``n_clients`` when no
        ``client_steps`` fixes N); drawn for a population: (B, N)."""
        tau = (self.base() if self.client_steps is not None
               else np.full(n_clients, self.local_steps, dtype=np.int64))
        if not self.random:
            return tau
        return instance_draws(self.seed, "work", round, lambda rng: self._draw(rng, tau))

    def _draw(self, rng, tau):
        """The round's counts from its Generator (the order of the module docstring)."""
        if self.min_steps is not None:
            tau = rng.integers(self.min_steps, tau + 1)
        if self.straggler_prob > 0:
            slow = rng.random(tau.shape[0]) < self.straggler_prob
            u = rng.random(tau.shape[0])
            tau = np.where(slow, np.maximum(1, np.ceil(u * tau)).astype(np.int64), tau)
        return tau


def bind_work(hyper: dict, setup) -> LocalWork:
    """The LocalWork of the hyper-parameters (``local_steps`` defaults to max tau_i; it must
    be >= every tau_i; ``min_steps`` <= min tau_i), validated before any work."""
    cs = client_steps_of(hyper, setup.n_clients)
    default = 1 if cs is None else max(cs)
    tau = value(hyper, "local_steps", default)
    if cs is not None and 8 * setup.rounds * tau > _MAX_SCHEDULE_BYTES:
        raise DomainError("client_steps", hyper["client_steps"], "step counts whose "
                          f"schedule (rounds x max tau_i x 8 bytes) fits {_MAX_SCHEDULE_BYTES} "
                          "bytes")
    if cs is not None and max(cs) > tau:
        raise DomainError("client_steps", hyper["client_steps"],
                          f"integers in [1, local_steps] = [1, {tau}]")
    lo = tau if cs is None else min(cs)
    mn = value(hyper, "min_steps", None)
    if mn is not None and mn > lo:
        raise DomainError("min_steps", mn, f"integer in [1, {lo}] (the smallest client's "
                                           "steps)")
    q = value(hyper, "straggler_prob", 0.0)
    work = LocalWork(tau, cs, mn, q, setup.seed)
    if work.random:
        check_seeds(setup.seed, "work")  # a run without a seed is refused here
    return work


def work_sums(lrs, steps, prox: float = 0.0) -> np.ndarray:
    """||a_i||_1 of FedNova for vanilla local (S)GD with step sizes ``lrs`` (the round's),
    in step-size units: sum_{k < tau_i} lrs[k] prod_{k < j < tau_i} (1 - lrs[j] prox)
    (= lr tau_i for a constant lr and no proximal term). ``x - W_i = sum_k a_ik g_ik``.
    A population's (:func:`toys.run_many`) ``lrs`` (B, tau) and / or ``steps`` (B, N) give
    (B, N), instance by instance the same arithmetic.

    >>> work_sums([0.5, 0.5], np.array([1, 2]), prox=1.0).tolist()
    [0.5, 0.75]
    >>> work_sums([[0.5, 0.5], [1.0, 1.0]], np.array([1, 2])).tolist()
    [[0.5, 1.0], [1.0, 2.0]]
    """
    lrs = np.asarray(lrs, dtype=float)
    acc, S = 0.0, np.empty(lrs.shape)
    for k in range(lrs.shape[-1]):  # a loop over the local steps, never over the clients
        lr = lrs[..., k]
        acc = (1.0 - lr * prox) * acc + lr
        S[..., k] = acc
    idx = np.asarray(steps) - 1
    if S.ndim == 1:
        return S[idx]
    idx = np.broadcast_to(idx, (S.shape[0], idx.shape[-1]))
    return np.take_along_axis(S, idx, axis=-1)


def steps_like(x, steps: np.ndarray):
    """``steps`` (numpy ints) on the backend and device of ``x``."""
    return array_namespace(x).asarray(steps, device=device(x))


@dataclass(frozen=True)
class HeteroSteps(LocalSteps):
    """LocalSteps with per-client local work (``work``: :class:`LocalWork`): client i does
    tau_i(r) of the round's ``local_steps`` steps (a step mask over the client axis; a
    population's (B, N), each instance's draws from its own seed: :func:`toys.run_many`)."""

    work: LocalWork | None = None
    hyper_names = LocalSteps.hyper_names + WORK_NAMES

    def bind(self, hyper, setup):
        """LocalSteps' parameters (``local_steps`` defaults to max ``client_steps``) and the
        local work's."""
        work = bind_work(hyper, setup)
        piece = LocalSteps.bind(self, {**hyper, "local_steps": work.local_steps}, setup)
        return replace(piece, work=work)

    def round_steps(self, round: int, n_clients: int):
        """tau_i(r) (numpy ints), or None when every client does all ``local_steps``."""
        if self.work is None:
            return None
        steps = self.work.steps(round, n_clients)
        return None if bool(np.all(steps == self.local_steps)) else steps

    def update(self, state, *, x, oracle, round, rng, mask, start=None, grads=None,
               observer=None, **_):
        if count(mask) == 0:
            return (broadcast_rows(x, oracle.n_clients) if start is None else start), state
        steps = self.round_steps(round, oracle.n_clients)
        G0 = grads if self.batch_size is None else None
        W = participants_update(oracle, x, self.round_lrs(round), rng, mask, self.batch_size,
                                self.prox, observer=observer, G0=G0, W0=start,
                                steps=None if steps is None else steps_like(x, steps))
        return W, state
