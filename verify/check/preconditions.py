"""A bound's preconditions evaluated at given parameter values (:func:`verify.compare.compare`
judges with them: a verdict is never given under assumptions nobody checked)."""

from __future__ import annotations

import numpy as np


def precondition_status(bound, params) -> tuple[list[str], list[str]]:
    """(violated, unevaluable-with-reason) of ``bound``'s preconditions at ``params``."""
    violated, unknown = [], []
    params = dict(params or {})
    for pc in bound.preconditions:
        missing = [n for n in pc.names if n not in params]
        if missing:
            unknown.append(f"'{pc.text}' cannot be evaluated: {', '.join(missing)} not given")
            continue
        try:
            vals = {n: np.asarray(params[n], dtype=float) for n in pc.names}
        except (TypeError, ValueError):
            unknown.append(f"'{pc.text}' cannot be evaluated: a value is not a number")
            continue
        bad = [n for n, v in vals.items() if not np.all(np.isfinite(v))]
        if bad:
            unknown.append(f"'{pc.text}' cannot be evaluated: {', '.join(bad)} not finite")
            continue
        with np.errstate(all="ignore"):
            try:
                ok = pc.holds(vals)
            except Exception as exc:  # noqa: BLE001 - reported as unevaluable
                unknown.append(f"'{pc.text}' cannot be evaluated: {type(exc).__name__}")
                continue
        if not np.all(ok):
            violated.append(pc.text)
    return violated, unknown
