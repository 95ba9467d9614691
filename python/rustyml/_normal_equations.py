"""Least squares by the normal equations, as the linear-regression doors solve them.

``X^T X`` comes from rustyml's product engine (in one piece or summed over chunks); the
d x d system is solved by its eigendecomposition, and the caller refines the solution once
with ``X^T r`` of the residual, which brings the error down to a least-squares solver's
order (cond(X) * eps) while cond(X)^2 * eps stays below ``LIMIT``.

With a ``cutoff``, the eigenvalues of the singular values LAPACK's ``lstsq(cond=tol)``
treats as zero are left out, so the solve is the pseudo-inverse's: the minimum-norm least
squares solution, of a rank-deficient ``X^T X`` or, through ``X X^T``, of an
underdetermined system.
"""

import numpy as np

# cond(X)^2 * eps below this keeps the refined solution at the accuracy of a least-squares
# solver (one refinement step contracts the error by about cond^2 * eps).
LIMIT = 1e-3
EPS = np.finfo(np.float64).eps


class NormalEquations:
    """The eigendecomposition of a Gram matrix, and solves with it.

    ``inner`` is the length of the dot products that formed the Gram matrix (``X``'s other
    dimension); with ``cutoff`` (lstsq's ``cond``), singular values below ``cutoff`` times
    the largest are dropped instead of refused.
    """

    def __init__(self, gram, inner=0, cutoff=None):
        self.values, self.vectors = np.linalg.eigh((gram + gram.T) / 2)
        self._kept = slice(None)
        self._cut = cutoff is not None
        self._cut_why = self._cut_off(inner, cutoff) if self._cut else None

    def _cut_off(self, inner, cutoff):
        """Keeps the eigenvalues above ``cutoff^2`` times the largest; why not, if their
        side of it is in doubt or the rest is too ill-conditioned."""
        top = self.values[-1]
        if not top > 0:
            return "X of zeros"
        limit = cutoff**2 * top
        # Each Gram entry is within inner * eps |x_i| |x_j| (a dot product), so the matrix is
        # within inner * eps * trace in norm, and eigh adds size * eps * top: an eigenvalue
        # that close to the limit could fall on the other side of it in lstsq's SVD.
        margin = 2 * (inner * np.sum(np.abs(self.values)) + len(self.values) * top) * EPS
        if np.any(np.abs(self.values - limit) <= margin):
            return "a singular value at tol's cutoff"
        first = int(np.searchsorted(self.values, limit, side="right"))
        self._kept = slice(first, None)
        return _conditioning(self.values[first], top)

    def unsolvable(self, rank_tol=0.0):
        """Why these equations cannot give a least-squares solution's accuracy (None if
        they can). With a cutoff: an eigenvalue too near it to tell its side, or cond(X)^2
        * eps at ``LIMIT`` or above over those kept. Without: a zero or negative eigenvalue,
        a singular value below ``rank_tol`` times the largest, or that conditioning."""
        if self._cut:
            return self._cut_why
        low, top = self.values[0], self.values[-1]
        if not (top > 0 and low > 0):
            return "rank-deficient X"
        if low <= rank_tol**2 * top:
            return "singular values below tol (rank-deficient)"
        return _conditioning(low, top)

    def solve(self, rhs):
        """The pseudo-inverse (the inverse, with nothing cut off) times a (size, t) ``rhs``."""
        vectors, values = self.vectors[:, self._kept], self.values[self._kept]
        return vectors @ ((vectors.T @ rhs) / values[:, None])

    def rank(self):
        """How many eigenvalues are kept."""
        return self.values[self._kept].size

    def singular_values(self):
        """X's singular values, largest first: square roots of the eigenvalues kept, zeros
        for those cut off."""
        values = np.zeros_like(self.values)
        values[self._kept] = np.sqrt(np.maximum(self.values[self._kept], 0.0))
        return values[::-1]


def _conditioning(low, top):
    if top / low * EPS >= LIMIT:
        return f"X too ill-conditioned for the normal equations (cond(X)^2 = {top / low:.3g})"
    return None
