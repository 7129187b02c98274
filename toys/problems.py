"""Federated problems: the public constructors, gathered from their family modules.

* :mod:`toys.problems_quadratic` -- :class:`Quadratic`, :func:`quadratic` (closed-form constants);
* :mod:`toys.problems_logistic` -- :class:`Logistic`, :func:`logistic` (binary and softmax);
* :mod:`toys.problems_synthetic` -- :func:`seed004_toy`, :func:`leaf_synthetic`,
  :func:`logistic_synthetic`;
* :mod:`toys.datasets` -- :func:`from_dataset` (bundled scikit-learn data, IDX and LEAF files).

Example
-------
>>> from toys.problems import quadratic
>>> quadratic(n_clients=2, dim=2, L=2.0, mu=1.0, heterogeneity=0.5, seed=0).kind
'quadratic'
"""

from __future__ import annotations

from .base import FederatedProblem
from .problems_logistic import Logistic, logistic
from .problems_quadratic import Quadratic, quadratic
from .problems_synthetic import leaf_synthetic, logistic_synthetic, seed004_toy

__all__ = [
    "FederatedProblem",
    "Logistic",
    "Quadratic",
    "leaf_synthetic",
    "logistic",
    "logistic_synthetic",
    "quadratic",
    "seed004_toy",
]
