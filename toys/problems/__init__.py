"""Federated problems, one module per family:

==================================  ==========================================================
:mod:`toys.problems.base`           ``FederatedProblem``: batched losses / gradients, weights p,
                                    exact optima
:mod:`toys.problems.quadratic`      ``Quadratic``, ``quadratic`` (closed-form constants)
:mod:`toys.problems.logistic`       ``Logistic``, ``logistic`` (binary and softmax)
:mod:`toys.problems.bucketed`       ``Bucketed``: logistic clients in size buckets (``max_padding``)
:mod:`toys.problems.synthetic`      ``seed004_toy``, ``leaf_synthetic``, ``logistic_synthetic``
:mod:`toys.problems.datasets`       ``from_dataset`` (bundled scikit-learn data, IDX, LEAF)
:mod:`toys.problems.partitions`     iid / shards / Dirichlet client splits
:mod:`toys.problems.cnn`            a small CNN on 8x8 digits (torch backend)
:mod:`toys.problems.registry`       ``make(name, **options)`` and ``names()``
==================================  ==========================================================

The constructors are public as ``toys.quadratic``, ``toys.logistic``, ... (the package does not
re-export them under names that would shadow its submodules).

Example
-------
>>> from toys.problems import Quadratic, seed004_toy
>>> seed004_toy(seed=0).kind
'logistic'
"""

from __future__ import annotations

from .base import FederatedProblem
from .bucketed import Bucketed
from .logistic import Logistic
from .quadratic import Quadratic
from .synthetic import leaf_synthetic, logistic_synthetic, seed004_toy

__all__ = ["Bucketed", "FederatedProblem", "Logistic", "Quadratic", "leaf_synthetic",
           "logistic_synthetic", "seed004_toy"]
