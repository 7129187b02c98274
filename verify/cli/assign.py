"""The one parser of the command line's ``name=value`` words (every command uses it).

A word is split at its first ``=`` into a name and a raw value; the name must be a Python
identifier and given once. The raw value is then read as data, never as code (no ``eval``, no
sympy parsing; an expression such as ``run``'s ``lr="1/(t+40)"`` goes through the whitelist
grammar of :mod:`boundlab.expr`), in one of three ways:

=====================  =================================================================
:func:`numbers`        a float each (``bounds eval``, ``tightness``, ``falsify``); with a
                       bound, every name must be one of its parameters ("did you mean")
:func:`options`        typed (``toys constants``, ``run``, ``sweep``): ``true`` / ``false``
                       / ``none``, an int, a float, a comma list (a tuple), else the text
:func:`grid`           ``name=v1,v2,...`` -> a list of typed values (``sweep --grid``);
                       :func:`number_list` the same as floats (``tightness --vary``)
=====================  =================================================================

A malformed word is an :class:`AssignmentError` (a :class:`~boundlab.errors.DomainError`, so
exit status 2 with one ``error:`` line) that says how to write it.

Example
-------
>>> numbers(["eta=0.2", "tau=10"])
{'eta': 0.2, 'tau': 10.0}
>>> options(["n_clients=5", "w=1,1", "spread=std_quarter", "iid=true"])
{'n_clients': 5, 'w': (1, 1), 'spread': 'std_quarter', 'iid': True}
>>> grid(["lr=0.05,0.1", "local_steps=5"])
{'lr': [0.05, 0.1], 'local_steps': [5]}
>>> grid(["lr"])
Traceback (most recent call last):
...
verify.cli.assign.AssignmentError: --grid: 'lr' is not name=v1,v2,...: write it as one word, \
e.g. --grid lr=v1,v2
"""

from __future__ import annotations

import math

from boundlab.errors import BoundlabError, DomainError, UnknownNameError

__all__ = ["AssignmentError", "grid", "number", "number_list", "numbers", "options", "split",
           "typed"]


class AssignmentError(DomainError):
    """A command-line word that is not ``name=value``: says what was given and how to write it.

    >>> str(AssignmentError("option", "lr", "name=value", "lr=0.1"))
    "option: 'lr' is not name=value: write it as one word, e.g. lr=0.1"
    """

    def __init__(self, what: str, word, form: str, example: str, detail: str = ""):
        self.name, self.value, self.domain = what, word, form
        shown = str(word) if len(str(word)) <= 60 else str(word)[:60] + "..."
        why = f" ({detail})" if detail else ""
        BoundlabError.__init__(self, f"{what}: {shown!r} is not {form}{why}: write it as one "
                                     f"word, e.g. {example}")


def _malformed(what: str, item, form: str, hint: str, prefix: str = "") -> AssignmentError:
    """The error for a word without ``=`` or without an identifier before it."""
    name, sep, _ = str(item).partition("=")
    name = name.strip()
    guess = name if name.isidentifier() else "name"
    detail = "" if not sep else ("no name before '='" if not name
                                 else "the name is not a Python identifier")
    return AssignmentError(what, item, form, f"{prefix}{guess}={hint}", detail)


def split(items, *, what: str = "option", form: str = "name=value", hint: str = "value",
          prefix: str = "") -> dict[str, str]:
    """``name=value`` words -> ``{name: raw value}`` (stripped), in order; every name a Python
    identifier and given once.

    >>> split(["lr=0.1", " tau = 5"])
    {'lr': '0.1', 'tau': '5'}
    """
    out: dict[str, str] = {}
    for item in items:
        name, sep, raw = str(item).partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise _malformed(what, item, form, hint, prefix)
        if name in out:
            raise DomainError(name, item, "given once", f"duplicate {what}")
        out[name] = raw.strip()
    return out


def number(name: str, raw: str, domain: str = "a number") -> float:
    """``raw`` as a float64, naming ``name`` on error: not NaN; infinite only when written so
    (``inf``), never by overflow.

    >>> number("eta", "1e-3"), number("K", "inf")
    (0.001, inf)
    """
    try:
        value = float(raw)
    except ValueError:
        raise DomainError(name, raw, domain, "not a number") from None
    if math.isnan(value):
        raise DomainError(name, raw, domain, "not a number")
    if math.isinf(value) and raw.strip().lower().lstrip("+-") not in ("inf", "infinity"):
        raise DomainError(name, raw[:40] + ("..." if len(raw) > 40 else ""), domain,
                          "too large for float64")
    return value


def numbers(items, bound=None, *, what: str = "parameter") -> dict[str, float]:
    """``name=value`` words -> ``{name: float}``; with ``bound`` every name must be one of its
    parameters (an :class:`~boundlab.errors.UnknownNameError` suggests the closest) and the
    error names its domain.

    >>> numbers(["eta=0.2", "tau=10"])
    {'eta': 0.2, 'tau': 10.0}
    """
    known = None if bound is None else {**bound.params, **bound.extra_params}
    out: dict[str, float] = {}
    for name, raw in split(items, what=what, hint="0.1").items():
        domain = "a number"
        if known is not None:
            if name not in known:
                raise UnknownNameError(f"parameter of {bound.id}", name, list(known))
            domain = known[name].domain.describe()
        out[name] = number(name, raw, domain)
    return out


def typed(raw: str):
    """One raw value as data: ``true`` / ``false`` / ``none``, a comma list (a tuple of typed
    values), an int, a float, else the text itself (checked by whoever uses it).

    >>> typed("3"), typed("0.5"), typed("1,x"), typed("None"), typed("std_quarter")
    (3, 0.5, (1, 'x'), None, 'std_quarter')
    """
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    if "," in raw:
        return tuple(typed(part.strip()) for part in raw.split(",") if part.strip())
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


def options(items, *, what: str = "option") -> dict:
    """``name=value`` words -> ``{name: typed value}`` (:func:`typed`).

    >>> options(["n_clients=5", "L=4.0", "iid=true"])
    {'n_clients': 5, 'L': 4.0, 'iid': True}
    """
    return {k: typed(v) for k, v in split(items, what=what).items()}


def grid(items, *, what: str = "--grid") -> dict[str, list]:
    """``name=v1,v2,...`` words -> ``{name: [v1, v2, ...]}`` (typed values; one value is a list
    of one); at least one word.

    >>> grid(["lr=0.05,0.1", "participation=full"])
    {'lr': [0.05, 0.1], 'participation': ['full']}
    """
    items = list(items)
    if not items:
        raise DomainError(what, "", "at least one name=v1,v2,... word")
    words = split(items, what=what, form="name=v1,v2,...", hint="v1,v2", prefix=f"{what} ")
    out = {}
    for k, v in words.items():
        value = typed(v)
        out[k] = list(value) if isinstance(value, tuple) else [value]
        if not out[k]:
            raise DomainError(k, v, "one or more comma-separated values")
    return out


def number_list(word: str, names=None, owner: str = "", *, what: str = "--vary"):
    """``name=v1,v2,...`` -> ``(name, [floats])``; with ``names`` the name must be one of them
    (``owner`` names whose).

    >>> number_list("eta=0.1,0.2")
    ('eta', [0.1, 0.2])
    """
    name, sep, raw = str(word).partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not raw.strip():
        raise _malformed(what, word, "name=v1,v2,...", "0.1,0.2", f"{what} ")
    if names is not None and name not in names:
        raise UnknownNameError(f"parameter of {owner}" if owner else "parameter", name,
                               list(names))
    values = [number(name, v.strip(), "comma-separated numbers")
              for v in raw.split(",") if v.strip()]
    if not values:
        raise DomainError(name, raw, "comma-separated numbers")
    return name, values
