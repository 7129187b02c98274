"""FedSoftMax's weight ratios (seeds 000 and 001, Ben Mansour et al.): pi >= exp(-x_range/T).

Part of the ``skew`` family (collected through :mod:`boundlab.skew`). The general bounds of
seed 000 (eqs. (17)-(19)) need pi = min over rounds and clients of kappa_t^i = alpha_t^i / p_i
and say that pi = 0 (FedMax) makes them vacuous. For FedSoftMax, alpha_t^i is proportional to
p_i exp(x_i/T) with x_i = F_i(w_t) - F_i* and T the temperature (seed 000, §2.3), so

    kappa_t^i = exp(x_i/T) / sum_j p_j exp(x_j/T) >= exp((x_i - max_j x_j)/T)
              >= exp(-x_range/T),

x_range the largest range max_i x_i - min_i x_i of a round's scores: the denominator is a
p-weighted mean of exp(x_j/T) and so at most exp(max_j x_j/T). With partial participation the
softmax runs over the round's participants S_t, the mean has total weight sum_{j in S_t} p_j
<= 1, and the bound holds a fortiori. The spec (seeds-000-001-004 §3.10) derives it (not in
the papers; label ``derived``); ``skew.pi_bound`` then has error term at most
lambda2 (e^{2 x_range/T} - 1), which tends to 0 as T -> infinity.

The catalogue's kinds are upper bounds, so the lower bound pi >= exp(-x_range/T) is encoded as
the equivalent upper bound on its reciprocal, 1/pi <= exp(x_range/T) (lhs ``inv_pi``): the
ratio measured / bound, (1/pi)/exp(x_range/T) = exp(-x_range/T)/pi, is the ratio of the lower
bound to pi.

Example
-------
>>> import boundlab
>>> b = boundlab.get("skew.softmax_kappa_min")
>>> round(float(b.evaluate(x_range=2.0, Temp=4.0)), 6)  # 1/pi <= e^{1/2}: pi >= 0.606531
1.648721
"""

from __future__ import annotations

import sympy as sp

from .core import Bound, make_params
from .symbols import sym

__all__ = ["BOUNDS"]

x_range, Temp = sym("x_range"), sym("Temp")

softmax_kappa_min = Bound(
    id="skew.softmax_kappa_min",
    source=("seed 000, §2.3 (FedSoftMax) with eq. (17); derived in the spec "
            "(seeds-000-001-004 §3.10: pi >= exp(-x_range/T))"),
    expr=sp.exp(x_range / Temp),
    params=make_params("x_range", "Temp"),
    kind="upper",
    lhs="inv_pi",
    description=(
        "FedSoftMax (alpha_t^i proportional to p_i exp(x_i/T) over the round's participants, x_i "
        "= F_i(w_t) - F_i*): pi = min_{t,i} alpha_t^i/p_i >= exp(-x_range/T), x_range = max "
        "over rounds of max_i x_i - min_i x_i; encoded as 1/pi <= exp(x_range/T). Derived (not "
        "in the papers). Any offsets of the scores may replace F_i* as long as x_range is the "
        "range of the scores the rule used."
    ),
)

BOUNDS = [softmax_kappa_min]
