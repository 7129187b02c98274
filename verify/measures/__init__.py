"""ONE registry of what a bound's left-hand side (``bound.lhs``) measures on a run.

Every name a bound may give as its ``lhs`` is either a :class:`Measure` here (how it is
computed from a run's arrays; the built-in ones in ``_builtin.py``) or listed in
:data:`NOT_MEASURED` with the reason no run gives it. :func:`verify.check` (and
:func:`verify.sweep` through it), the search and the replay of :func:`verify.falsify` all
measure through :func:`measure`; a user adds a quantity with :func:`register` and can then
check and falsify bounds on it.

The run arrays (``q``) are a dict of float arrays with a leading instance axis P: the *state*
arrays (:data:`STATE_ARRAYS`, (P, T + 1), one value per server model x_0..x_T) and the *round*
arrays (:data:`ROUND_ARRAYS`, (P, T), one value per round), as ``toys.Trace`` defines them
(:func:`verify.falsify.population.quantities` reads them from a ``toys.run_many`` population
or a ``toys.Trace``; :func:`from_log` from one seed's per-round log). A measure returns
``(values (P, K), per-round parameters {name: (P, K)})``: K = 1 for a per-run quantity.

This package imports numpy only (no toys, sympy or pandas): it is the shared definition, not a
runner, and ``verify.check`` / ``verify.falsify`` both depend on it.

Example
-------
>>> q = {"gap": np.array([[2.0, 1.0, 0.5]])}
>>> measure("final_gap", q)[0].tolist()
[[0.5]]
>>> register("gap_drop", lambda q: q["gap"][:, :1] - q["gap"][:, -1:], needs=("gap",),
...          doc="F(x_0) - F(x_T)")
>>> measure("gap_drop", q)[0].tolist()
[[1.5]]
>>> unregister("gap_drop")
"""

from __future__ import annotations

import re

import numpy as np

from boundlab.errors import DomainError, UnknownNameError

from ._builtin import (
    BUILTIN,
    NOT_MEASURED,
    PAPER_LHS,
    ROUND_ARRAYS,
    STATE_ARRAYS,
    STEP_ARRAYS,
    VIRTUAL,
    Measure,
)

__all__ = ["Measure", "STATE_ARRAYS", "ROUND_ARRAYS", "STEP_ARRAYS", "NOT_MEASURED", "PAPER_LHS",
           "VIRTUAL", "measure", "get", "names", "register", "unregister", "reason", "paper_name",
           "from_log", "table"]


_REGISTRY = {m.name: m for m in BUILTIN}


def names() -> tuple:
    """The measured left-hand sides, in registration order.

    >>> names()[:3]
    ('final_gap', 'gap_t', 'dist_next')
    """
    return tuple(_REGISTRY)


def get(name: str) -> Measure:
    """The :class:`Measure` of ``name``; UnknownNameError with :func:`reason` otherwise."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    raise UnknownNameError(f"measured left-hand side ({name!r}: {reason(name)})", name,
                           sorted(_REGISTRY))


def reason(name: str) -> str:
    """Why ``name`` is not measured (empty for a measured one).

    >>> reason("plateau_gap")[:45]
    'a limit T -> inf, not a value of a finite run'
    """
    if name in _REGISTRY:
        return ""
    return NOT_MEASURED.get(name, "not a quantity of verify.measures (add one with "
                                  "verify.measures.register)")


def paper_name(lhs: str, algorithm) -> str:
    """The quantity measured for ``lhs`` of a bound about ``algorithm``: ``lhs``, or what
    :data:`PAPER_LHS` maps it to.

    >>> paper_name("avg_grad_norm2", "beta"), paper_name("avg_grad_norm2", "fedau")
    ('avg_grad_norm2_virtual', 'avg_grad_norm2')
    """
    return PAPER_LHS.get((lhs, algorithm), lhs)


def measure(name: str, q: dict):
    """``(values (P, K), per-round parameters {name: (P, K)})`` of ``name`` on the run arrays
    ``q``. Raises UnknownNameError for a name not registered, DomainError when ``q`` lacks an
    array the measure needs or a user's measure returns another shape."""
    m = get(name)
    missing = [k for k in m.needs if k not in q]
    if missing:
        raise DomainError(f"run arrays for {name!r}", f"missing {', '.join(missing)}",
                          f"arrays {', '.join(m.needs)} ({m.doc})")
    P = np.shape(q[m.needs[0]])[0] if m.needs else None
    v = np.asarray(m.fn(q))
    v = v if v.dtype == object else v.astype(float)  # object: mpmath values (certify)
    if v.ndim != 2 or (P is not None and v.shape[0] != P) or (not m.per_round and
                                                              v.shape[1] != 1):
        want = f"({P}, 1)" if not m.per_round else f"({P}, K)"
        raise DomainError(f"value of measure {name!r}", f"an array of shape {v.shape}", want)
    per = {} if m.params is None else dict(m.params(q))
    return v, per


def from_log(columns: dict) -> dict:
    """The run arrays (P = 1) of one seed's per-round log ``columns`` (name -> array over the
    rows r = 0..R): state arrays whole, round arrays without the final row (its state only).

    >>> q = from_log({"gap": np.array([2.0, 1.0]), "shadow_gap": np.array([1.5, np.nan])})
    >>> q["gap"].tolist(), q["shadow_gap"].tolist()
    ([[2.0, 1.0]], [[1.5]])
    """
    out = {}
    for k, v in columns.items():
        if k in STATE_ARRAYS:
            out[k] = np.asarray(v, dtype=float)[None]
        elif k in ROUND_ARRAYS:
            out[k] = np.asarray(v, dtype=float)[None, :-1]
    return out


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def register(name: str, fn, *, needs, doc: str, per_round: bool = False, params=None,
             gives=(), record: str = "round", signed: bool = False,
             replace: bool = False) -> None:
    """Register the left-hand side ``name``: ``fn(q) -> (P, K)`` on the run arrays (K = 1 unless
    ``per_round``), reading the arrays ``needs`` (of :data:`STATE_ARRAYS`,
    :data:`ROUND_ARRAYS` and, from a record="step" run, :data:`STEP_ARRAYS`); ``params(q) ->
    {name: (P, K)}`` the per-round parameters it gives the bound, named in ``gives``;
    ``record`` the run's record mode ("round" or "step"); ``signed``: the value may be negative
    (a descent) and a negative bound is judged (:class:`Measure`). A built-in, an existing name
    (unless ``replace``) or a name of :data:`NOT_MEASURED` is refused with a DomainError."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise DomainError("name", name, "an identifier (letters, digits, _)")
    if name in NOT_MEASURED or any(m.name == name for m in BUILTIN) or (
            name in _REGISTRY and not replace):
        raise DomainError("name", name, "a name that is not a built-in, not a left-hand side "
                          "of NOT_MEASURED and not registered (replace=True to re-register)")
    for label, f in (("fn", fn), ("params", params)):
        if not callable(f) and not (label == "params" and f is None):
            raise DomainError(label, f, "a callable of the run arrays q")
    known = STATE_ARRAYS + ROUND_ARRAYS + STEP_ARRAYS
    needs = (needs,) if isinstance(needs, str) else tuple(needs)
    bad = [k for k in needs if k not in known]
    if bad or not needs:
        raise DomainError("needs", bad[0] if bad else needs, f"names of {', '.join(known)}")
    if record not in ("round", "step"):
        raise DomainError("record", record, "'round' or 'step'")
    if not isinstance(doc, str) or not doc.strip():
        raise DomainError("doc", doc, "a non-empty text saying what is measured")
    gives = (gives,) if isinstance(gives, str) else tuple(gives)
    if (params is None) != (not gives) or not all(isinstance(g, str) for g in gives):
        raise DomainError("gives", gives, "the parameter names params(q) gives (empty "
                          "exactly when params is None)")
    if not isinstance(signed, bool):
        raise DomainError("signed", signed, "True or False")
    _REGISTRY[name] = Measure(name, doc, needs, fn, bool(per_round), params, record, gives,
                              signed)


def unregister(name: str) -> None:
    """Remove a quantity added by :func:`register` (built-ins stay)."""
    if any(m.name == name for m in BUILTIN) or name not in _REGISTRY:
        raise DomainError("name", name, "a quantity added by verify.measures.register")
    del _REGISTRY[name]


def table() -> str:
    """The registry as a Markdown table (the README's section is this text).

    >>> table().splitlines()[0]
    '| lhs | per round | run arrays | what is measured |'
    """
    rows = ["| lhs | per round | run arrays | what is measured |", "|---|---|---|---|"]
    for m in BUILTIN:
        doc = m.doc.replace("|", "\\|")
        rows.append(f"| `{m.name}` | {'yes' if m.per_round else 'no'} | "
                    f"{', '.join(m.needs)} | {doc} |")
    return "\n".join(rows)
