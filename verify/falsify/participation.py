"""Partial participation in :func:`verify.falsify`: the patterns a search varies, and the masks
of each instance, drawn once and shared by the batched engine and the replay on ``toys.run``.

No catalogue bound that the batched search runs with these patterns allows partial
participation: seeds 000/001 (BM), 003 (BC) and DKR's Theorem 2.1 analyse every client in every
round; seed 002's FedAU theorems (Bernoulli participation, bounds in expectation) are searched
by :mod:`verify.falsify.algorithms_fedau`, which enumerates every Bernoulli path instead of
drawing one. A *registered* bound can declare that it holds for any participation pattern:
``verify.falsify(b, participation=...)`` with

* ``"full"`` (the default): every client every round;
* ``"bernoulli"``, ``"cyclic"``, ``"markov"``: the search varies the pattern's parameters over
  :data:`GRIDS` (one point of the plan's grid each: Bernoulli probabilities; a cycle of
  :data:`CYCLE` rounds with a fraction p active; a two-state chain with stationary p);
  ``"any"``: every point of the three grids;
* ``"name:key=value,..."``: one pattern of ``toys.participation`` with those options (e.g.
  ``"bernoulli:p=0.3"``, ``"uniform:m=2"``), the others at toys' defaults.

The masks of an instance are drawn from ``toys.participation``'s process with a generator
seeded by the instance's search point z (its bytes) and the pattern: the same z gives the same
(rounds, N) masks in the search and in the replay, which passes them to ``toys.run`` as its
explicit participation matrix. Perturbing z draws new masks: the search explores the draws
with the instances.

>>> canonical("bernoulli", 3)
('bernoulli:p=0.25', 'bernoulli:p=0.5', 'bernoulli:p=0.9')
>>> import numpy as np
>>> m = masks("bernoulli:p=0.5", np.zeros((2, 4)), rounds=3, n_clients=2)
>>> m.shape, bool(np.array_equal(m[0], m[1]))   # the same z, the same draw
((2, 3, 2), True)
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

__all__ = ["GRIDS", "CYCLE", "canonical", "masks", "ALGORITHMS"]

#: the cycle length (rounds) of the searched cyclic patterns: a horizon of 4..64 rounds sees
#: whole cycles (toys' default, 100, is longer than every horizon searched)
CYCLE = 4
GRIDS = {"bernoulli": ({"p": 0.25}, {"p": 0.5}, {"p": 0.9}),
         "cyclic": ({"p": 0.25, "cycle": CYCLE}, {"p": 0.5, "cycle": CYCLE}),
         "markov": ({"p": 0.25, "rate": 0.25}, {"p": 0.5, "rate": 0.25})}
#: the algorithms the batched engine runs with partial participation (beta's neighbour
#: averages of absent clients are not modelled)
ALGORITHMS = ("gd", "fedavg", "fedprox", "fedsoftmax")
_SALT = 0x5EED_FA15


def _text(name: str, opts: dict) -> str:
    return name + (":" + ",".join(f"{k}={v:g}" for k, v in opts.items()) if opts else "")


def canonical(spec, n_clients: int) -> tuple:
    """The pattern texts a participation setting ``spec`` stands for (module docstring); ()
    for full participation. Each is checked by building its ``toys.participation`` process
    (errors name the option, its value and domain)."""
    from toys import participation as part

    if spec is None or spec == "full":
        return ()
    if not isinstance(spec, str):
        raise DomainError("participation", spec, "a pattern name: 'full', 'any', "
                          f"{', '.join(map(repr, GRIDS))} or 'name:key=value,...'")
    name, opts = part.parse(spec)
    if name == "full" and not opts:
        return ()
    if name == "any" and not opts:
        pts = [(n, o) for n in GRIDS for o in GRIDS[n]]
    elif name in GRIDS and not opts:
        pts = [(name, o) for o in GRIDS[name]]
    else:
        pts = [(name, opts)]
    for n, o in pts:
        part.make(n, int(n_clients), **o)
    return tuple(_text(n, o) for n, o in pts)


def masks(pattern: str, Z, rounds: int, n_clients: int) -> np.ndarray:
    """(P, rounds, N) participation masks of the instances ``Z`` (P, n) under ``pattern`` (a
    text of :func:`canonical`): row k drawn by ``toys.participation.sample`` with a generator
    seeded by the bytes of Z[k] and the pattern."""
    from toys import participation as part

    name, opts = part.parse(pattern)
    proc = part.make(name, int(n_clients), **opts)
    Z = np.ascontiguousarray(np.atleast_2d(np.asarray(Z, dtype=np.float64)))
    tag = [int(b) for b in pattern.encode()]
    out = np.zeros((Z.shape[0], int(rounds), int(n_clients)), dtype=bool)
    for k in range(Z.shape[0]):
        words = np.frombuffer(Z[k].tobytes(), dtype=np.uint32).tolist()
        ss = np.random.SeedSequence([_SALT, *tag, int(rounds), *words])
        out[k] = part.sample(proc, int(rounds), np.random.default_rng(ss))
    return out
