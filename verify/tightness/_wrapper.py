"""PEPit's cvxpy wrapper, vectorized (:class:`VectorizedCvxpyWrapper`, built on first use so
that PEPit and cvxpy load only when a PEP is solved), and the tolerances a solve is judged by.
Its own module so that the solver (:mod:`verify.tightness._solve`) and the certificate check
(:mod:`verify.tightness.certificate`) both import it, and neither imports the other.

Example
-------
>>> _make_wrapper_class().__name__
'VectorizedCvxpyWrapper'
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["TOL", "TOL_PROOF"]

#: relative tolerance (to max(1, |value|), on the normalized problem) for the duality gap and
#: the primal/dual feasibility errors; a solve beyond it is marked ``ok = False`` and the next
#: solver runs
TOL = 1e-6
#: tolerance of PEPit's proof-reconstruction residual, a sum of |coefficients| over all Gram
#: entries (so it grows with the Gram size: ~2e-6 at size 23 while the gap is 1e-8)
TOL_PROOF = 1e-5


@functools.lru_cache(maxsize=1)
def _make_wrapper_class():
    import scipy.sparse as sps
    from PEPit.constraint import Constraint
    from PEPit.expression import Expression
    from PEPit.point import Point
    from PEPit.tools.expressions_to_matrices import expression_to_matrices
    from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper

    class VectorizedCvxpyWrapper(CvxpyWrapper):
        """PEPit's cvxpy wrapper with all scalar constraints stacked into two sparse blocks."""

        def set_main_variables(self):
            import cvxpy as cp

            self.F = cp.Variable((Expression.counter,))
            self.G = cp.Variable((Point.counter, Point.counter), symmetric=True)
            self._psd = self.G >> 0
            self._rows = []
            self._blocks = {}

        def send_constraint_to_solver(self, constraint):
            if not isinstance(constraint, Constraint):  # pragma: no cover - PEPit internal
                raise TypeError(f"expected a PEPit Constraint, got {type(constraint)}")
            self._list_of_constraints_sent_to_solver.append(constraint)
            eq = constraint.equality_or_inequality == "equality"
            self._rows.append((eq, self._row(constraint.expression)))

        def send_lmi_constraint_to_solver(self, psd_matrix):  # pragma: no cover - unused
            raise NotImplementedError("the vectorized wrapper does not take LMI constraints")

        @staticmethod
        def _row(expression):
            gw, fw, const = expression_to_matrices(expression)
            gw = (gw + gw.T) / 2.0
            return np.concatenate([gw.ravel(order="F"), fw, [const]])

        def generate_problem(self, objective):
            import cvxpy as cp

            z = cp.hstack([cp.vec(self.G, order="F"), self.F])
            cons = [self._psd]
            for eq in (False, True):
                idx = [i for i, (e, _) in enumerate(self._rows) if e == eq]
                if not idx:
                    continue
                mat = np.array([self._rows[i][1] for i in idx])
                a, b = sps.csr_matrix(mat[:, :-1]), mat[:, -1]
                con = (a @ z + b == 0) if eq else (a @ z + b <= 0)
                self._blocks[eq] = (idx, con)
                cons.append(con)
            row = self._row(objective)
            self.objective = row[:-1] @ z + row[-1]
            self._list_of_solver_constraints = cons
            self.prob = cp.Problem(cp.Maximize(self.objective), cons)
            return self.prob

        def solve(self, **kwargs):
            kwargs.setdefault("solver", "CLARABEL")
            self.prob.solve(**kwargs)
            self.solver_name = self.prob.solver_stats.solver_name
            self.optimal_G = self.G.value
            self.optimal_F = self.F.value
            return self.prob.status, self.solver_name, self.objective.value

        def _recover_dual_values(self):
            residual = self._psd.dual_value
            duals = [0.0] * len(self._rows)
            for idx, con in self._blocks.values():
                dv = np.atleast_1d(np.asarray(con.dual_value, dtype=float))
                for k, i in enumerate(idx):
                    duals[i] = float(dv[k])
            return [residual] + duals, residual

    return VectorizedCvxpyWrapper
