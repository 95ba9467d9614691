"""How far a distance that rustyml computes may sit from scikit-learn's computation of the
same distance: the doors whose answers hang on comparing distances (the order of
neighbours, a radius) answer natively only where no comparison lies within it."""

import numpy as np

_EPS = np.finfo(np.float64).eps


class DistanceRounding:
    """Both sides sum ``n_features`` terms (each distance then within (d + 2) eps of the
    exact one, relative); a euclidean distance formed by products (the engine's, and
    scikit-learn's brute force) as |q|^2 + |x|^2 - 2 q.x carries an absolute error of up
    to E = (d + 2) eps (|q|^2 + |x|^2) in its square, which costs a distance r up to
    min(sqrt(E), E / r). Each bound is taken four times over. ``square_norms`` holds
    |q|^2 + max |x|^2 for each query (a row of distances) when ``p`` is 2."""

    def __init__(self, n_features, p, square_norms):
        self.relative = 4 * (n_features + 2) * _EPS
        square_norms = np.atleast_1d(np.asarray(square_norms, dtype=np.float64))
        self.squared_error = self.relative * square_norms if p == 2 else 0.0 * square_norms

    def of(self, dist):
        """The rounding of each distance in ``dist`` (a row per query)."""
        E = self.squared_error[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            through_squares = np.where(E > 0, np.minimum(np.sqrt(E), E / dist), 0.0)
        return self.relative * dist + through_squares

    def of_gaps(self, dist):
        """The rounding of each gap between neighbouring distances of a row."""
        each = self.of(dist)
        return each[:, 1:] + each[:, :-1]

    def rows(self, selected):
        """The same bound for the queries ``selected``."""
        part = DistanceRounding.__new__(DistanceRounding)
        part.relative, part.squared_error = self.relative, self.squared_error[selected]
        return part


def largest_square_norm(X):
    """max |x|^2 over the rows of a dense ``X``."""
    return float(np.max(np.einsum("ij,ij->i", X, X))) if X.shape[0] else 0.0
