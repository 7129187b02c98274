"""The result of :func:`verify.falsify`: :class:`Falsification` (the verdict, the worst ratio,
how it was certified, the setting that replays it) and its :class:`Instance` (a concrete
problem and run: :meth:`Instance.replay` runs it again on the real engine; a route's instance
on its own measurement, :mod:`verify.falsify.routes`). Saved and loaded as sealed files
(:meth:`Falsification.save`, :meth:`Falsification.load`, :mod:`verify.falsify._file`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from dataclasses import dataclass, field

import numpy as np

from .exact import TOL

__all__ = ["Falsification", "Instance", "ORIENTATION"]

ORIENTATION = "measured / bound (> 1: the bound is violated)"


@dataclass
class Instance:
    """A concrete problem, start and run: :meth:`replay` re-runs it on ``toys.run``.

    ``family`` names the search family (its ``data`` hold the search point and the
    :class:`~verify.falsify.families.Spec`), ``"pep-interpolation"`` (``data`` hold the PEP's
    points, gradients and values) or ``"worst.quadratic"`` (a :func:`verify.worst_instance`
    record); ``run`` the settings (rounds, local steps, step size); ``ratio`` as measured when
    it was found.
    """

    bound_id: str
    family: str
    data: dict = field(repr=False)
    run: dict
    ratio: float
    lhs: float
    rhs: float
    plan: object = field(default=None, repr=False, compare=False)
    #: the Bound judged (its own expression; None: the registered one of ``bound_id``)
    bound: object = field(default=None, repr=False, compare=False)

    def problem(self):
        """``(toys problem, x0)`` of this instance."""
        from .families import Spec, get_family
        from .interpolate import Interpolated

        if self.family == "pep-interpolation":
            d = self.data
            prob = Interpolated(np.array(d["points"]), np.array(d["grads"]),
                                np.array(d["values"]), L=d["L"], mu=d["mu"])
            return prob, np.array(d["points"][1])
        return get_family(self.family).build(np.array(self.data["z"]),
                                             Spec(**self.data["spec"]))

    def replay(self) -> float:
        """Re-run the instance on the real engine; returns the measured ratio."""
        return self.measure()[0]

    def measure(self) -> tuple:
        """Re-run the instance on the real engine: ``(ratio, measured LHS, bound RHS)``."""
        from .routes import route_for_family

        route = route_for_family(self.family)
        if route is not None:  # not a planned run (verify.falsify.routes)
            return tuple(route.measure_instance(self.judged_bound(), self.data)[:3])
        if self.family == "worst.quadratic":
            from verify.worst.measures import MEASURES

            bound = self.judged_bound()
            out = MEASURES[bound.lhs].replay(bound, self.data)
            return float(out["ratio"]), float(out["lhs"]), float(out["rhs"])
        from .search import run_instance

        prob, x0 = self.problem()
        r = self.run
        return run_instance(self.plan, prob, x0, r["rounds"], r["local_steps"], r["lr"],
                            z=self.data.get("z"))

    def judged_bound(self):
        """The Bound this instance is judged against: its own, its plan's, else the id's."""
        if self.bound is not None:
            return self.bound
        if self.plan is not None:
            return self.plan.bound
        import boundlab

        return boundlab.get(self.bound_id)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("bound_id", "family", "data", "run", "ratio", "lhs",
                                          "rhs")}
        return json.loads(json.dumps(d, default=_plain, allow_nan=True))


@dataclass
class Falsification:
    """The result of :func:`falsify` (see its docstring for each field)."""

    bound_id: str
    verdict: str
    reason: str = ""
    worst_ratio: float = float("nan")
    orientation: str = ORIENTATION
    instance: Instance | None = None
    exact: dict | None = None
    exact_reason: str = ""
    evaluations: int = 0
    seconds: float = 0.0
    per_family: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    tolerance: float = TOL
    #: how the worst ratio was certified: "mpmath-50" (high-precision replay),
    #: "float64-only" (:mod:`verify.falsify.certify`), or for FedAU's weight error
    #: "exact-rational" / "fixed-point-256" (:mod:`verify.falsify.weight_error_search`),
    #: with its certified error on the ratio
    certificate: str = ""
    certified_error: float = float("nan")
    #: the call's algorithm, function_class, participation and constants (what replays it)
    setting: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path) -> Falsification:
        """The falsification saved at ``path`` (:meth:`save`): sealed, validated, its
        ``instance.replay()`` runs from the file alone (:mod:`verify.falsify._file`)."""
        from ._file import load

        return load(path, (cls, Instance))

    def to_dict(self) -> dict:
        """Plain data (strict JSON: a non-finite number is null, its ``<key>_status`` says
        which, :func:`boundlab.io.json_safe`): every field, and the
        columns of :meth:`to_row` (the schema of :mod:`verify.schema`)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["instance"] = None if self.instance is None else self.instance.to_dict()
        d.update({k: v for k, v in self.to_row().items() if k not in d})
        return _strict(json.loads(json.dumps(d, default=_plain)))

    def to_row(self) -> dict:
        """The result as one row of :mod:`verify.schema`: ``measured`` and ``bound_value`` of
        the worst instance, ``ratio`` = ``worst_ratio`` (measured / bound), ``term_*`` and
        ``param_*`` at the instance's parameters (nan where the instance does not give one)."""
        from .. import schema

        inst = self.instance
        row = {"bound_id": self.bound_id, "check": "falsify", "case": "search",
               "problem": f"worst instance found ({inst.family})" if inst else "",
               "algorithm": str((inst.run if inst else {}).get("algorithm", "")),
               "measured": inst.lhs if inst else math.nan,
               "bound_value": inst.rhs if inst else math.nan, "ratio": self.worst_ratio,
               "measured_mean": inst.lhs if inst else math.nan,
               "measured_lo": inst.lhs if inst else math.nan,
               "measured_hi": inst.lhs if inst else math.nan,
               "worst_ratio": self.worst_ratio, "verdict": self.verdict, "reason": self.reason,
               "n_seeds": 1 if inst else 0, "effective_samples": 1 if inst else 0}
        bound = inst.judged_bound() if inst is not None else schema._known_bound(self.bound_id)
        if bound is None:
            return row
        row["lhs"] = bound.lhs
        row.update(_instance_params(bound, inst))
        return schema.complete(row, bound)

    def to_frame(self):
        """:meth:`to_row` as a one-row :class:`verify.schema.ResultFrame`."""
        from .. import schema

        return schema.frame([self.to_row()])

    def save(self, path) -> str:
        """Write :meth:`to_dict` as JSON, atomically; returns the path. An existing file is
        replaced only when it is a falsification result boundlab wrote (never a user's file)."""
        from boundlab.io import atomic_write_text, check_replaceable

        path = pathlib.Path(path)
        check_replaceable(path, "save", "a falsification result")
        from ._file import document

        atomic_write_text(path, json.dumps(document(self), indent=1, allow_nan=False) + "\n",
                          name="save", owned=True)
        return str(path)


def _instance_params(bound, inst) -> dict:
    """``param_*`` and ``term_*`` of ``bound`` at the instance's run and constants."""
    if inst is None:
        return {}
    from ..check import rhs_params

    consts = {k: v for k, v in (inst.data or {}).items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)}
    setting = {k: v for k, v in (inst.run or {}).items() if np.ndim(v) == 0}
    try:
        prm = {**rhs_params(bound, setting, consts), **{k: v for k, v in consts.items()
                                                       if k in bound.params}}
    except Exception:  # noqa: BLE001 - a run the symbol table cannot map: no parameters
        return {}
    out = {f"param_{k}": float(v) for k, v in prm.items()}
    try:
        out.update({f"term_{t}": float(v) for t, v in bound.evaluate_terms(**prm).items()})
    except Exception:  # noqa: BLE001 - a parameter missing: no term values
        pass
    return out


def _plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer, np.bool_)):
        return v.item()
    return str(v)


def _strict(v):
    """Strict-JSON data, as every ``--json``: a non-finite number is null, with a sibling
    ``<key>_status`` ("nan", "inf" or "-inf") inside a dict (:func:`boundlab.io.json_safe`)."""
    from boundlab.io import json_safe

    return json_safe(v)
