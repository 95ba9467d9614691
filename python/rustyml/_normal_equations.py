"""Least squares by the normal equations, as the linear-regression doors solve them.

``X^T X`` comes from rustyml's product engine (in one piece or summed over chunks); the
d x d system is solved by its eigendecomposition, and the caller refines the solution once
with ``X^T r`` of the residual, which brings the error down to a least-squares solver's
order (cond(X) * eps) while cond(X)^2 * eps stays below ``LIMIT``.
"""

import numpy as np

# cond(X)^2 * eps below this keeps the refined solution at the accuracy of a least-squares
# solver (one refinement step contracts the error by about cond^2 * eps).
LIMIT = 1e-3


class NormalEquations:
    """The eigendecomposition of a Gram matrix ``X^T X``, and solves with it."""

    def __init__(self, gram):
        self.values, self.vectors = np.linalg.eigh((gram + gram.T) / 2)

    def unsolvable(self, rank_tol=0.0):
        """Why these equations cannot give a least-squares solution's accuracy (None if
        they can): a zero or negative eigenvalue, a singular value below ``rank_tol`` times
        the largest, or cond(X)^2 * eps at ``LIMIT`` or above."""
        low, top = self.values[0], self.values[-1]
        if not (top > 0 and low > 0):
            return "rank-deficient X"
        if low <= rank_tol**2 * top:
            return "singular values below tol (rank-deficient)"
        if top / low * np.finfo(np.float64).eps >= LIMIT:
            return f"X too ill-conditioned for the normal equations (cond(X)^2 = {top / low:.3g})"
        return None

    def solve(self, rhs):
        """``(X^T X)^-1 rhs`` for a (d, t) right-hand side."""
        return self.vectors @ ((self.vectors.T @ rhs) / self.values[:, None])

    def singular_values(self):
        """X's singular values, largest first (square roots of the eigenvalues)."""
        return np.sqrt(np.maximum(self.values[::-1], 0.0))
