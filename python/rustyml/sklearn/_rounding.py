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
    |q|^2 + max |x|^2 for each query (a row of distances) when ``p`` is 2.
    :meth:`cosine` gives the bound of the cosine distance, an absolute one.
    ``epsilon`` is the machine epsilon of the arithmetic the other side computes in
    (float32's for scikit-learn's float32 brute force, whose distances it rounds to
    float32 and compares with a radius in float32)."""

    def __init__(self, n_features, p, square_norms, epsilon=_EPS):
        epsilon = max(float(epsilon), _EPS)
        self.relative = 4 * (n_features + 2) * epsilon
        square_norms = np.atleast_1d(np.asarray(square_norms, dtype=np.float64))
        self.squared_error = self.relative * square_norms if p == 2 else 0.0 * square_norms
        self.absolute = 0.0

    @classmethod
    def cosine(cls, n_features, n_queries):
        """The cosine distance 1 - s, s the similarity, for ``n_queries`` rows of distances.

        scikit-learn's brute force (``cosine_distances``, through
        ``pairwise_distances_chunked``: cosine is no ``ArgKmin`` metric) normalises each
        row, x / |x| with |x| = sqrt(sum x_i^2) (each coordinate within (d/2 + 2) u,
        relative, u = eps / 2), takes the product of the unit rows (BLAS: within d u of
        sum |x_i y_i| / (|x| |y|) <= 1) and 1 - s (one more rounding, at most 2 u as
        1 - s <= 2): within (d + 4) u + d u + 2 u = (2d + 6) u of the exact distance.
        The engine sums x.y, |x|^2 and |y|^2 (each within d u, relative to sum |x_i y_i|
        <= |x| |y| or to the norm), divides x.y by sqrt(|x|^2) sqrt(|y|^2) (within
        (d + 3) u more, relative) and takes 1 - s: within (2d + 6) u as well. Both clip to
        [0, 2], which brings neither further off, and both take a zero row's similarity
        as 0. So the two differ by at most (4d + 12) u = 2 (d + 3) eps, an absolute bound
        (row norms kept clear of underflow and overflow by the door), taken four times
        over as the others are."""
        bound = cls(n_features, 1, np.zeros(n_queries))
        bound.relative = 0.0
        bound.absolute = 8 * (n_features + 3) * _EPS
        return bound

    def of(self, dist):
        """The rounding of each distance in ``dist`` (a row per query)."""
        E = self.squared_error[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            through_squares = np.where(E > 0, np.minimum(np.sqrt(E), E / dist), 0.0)
        return self.relative * dist + through_squares + self.absolute

    def of_gaps(self, dist):
        """The rounding of each gap between neighbouring distances of a row."""
        each = self.of(dist)
        return each[:, 1:] + each[:, :-1]

    def rows(self, selected):
        """The same bound for the queries ``selected``."""
        part = DistanceRounding.__new__(DistanceRounding)
        part.relative, part.squared_error = self.relative, self.squared_error[selected]
        part.absolute = self.absolute
        return part


def largest_square_norm(X):
    """max |x|^2 over the rows of a dense ``X``."""
    return float(np.max(np.einsum("ij,ij->i", X, X))) if X.shape[0] else 0.0
