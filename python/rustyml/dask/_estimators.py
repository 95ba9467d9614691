"""The estimators of ``rustyml.dask``: fitted by fixed-order reductions over row chunks."""

import inspect

import numpy as np

from rustyml._normal_equations import NormalEquations
from rustyml.dask import _chunks
from rustyml.dask._base import aligned_target, map_rows, per_chunk, row_chunked
from rustyml.exceptions import NotFittedError

_EPS = np.finfo(np.float64).eps


class _DaskEstimator:
    """Hyper-parameters as plain attributes (``get_params`` / ``set_params`` / ``clone``
    work as in scikit-learn); fitted attributes end in ``_``."""

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def _check_fitted(self, attribute):
        if not hasattr(self, attribute):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' first."
            )

    def _check_features(self, X):
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )


def _means(X):
    """Column means: per-chunk sums combined in chunk order."""
    parts = per_chunk(_chunks.column_sums, X)
    n = sum(p[0] for p in parts)
    return n, _chunks.ordered_sum([p[1] for p in parts]) / n


def _variances(X, mean, n):
    """Two-pass (corrected) variances: sum of squared deviations, less the square of the
    summed deviations over n (which removes the rounding of the mean)."""
    parts = per_chunk(_chunks.centred_moments, X, mean)
    dev = _chunks.ordered_sum([p[0] for p in parts])
    sq = _chunks.ordered_sum([p[1] for p in parts])
    return np.maximum((sq - dev * dev / n) / n, 0.0)


class StandardScaler(_DaskEstimator):
    """Column means and variances merged over chunks (two passes); ``transform`` maps the
    chunks where they are. A constant column (variance within rounding of zero) gets
    scale 1, as scikit-learn gives it."""

    def __init__(self, *, with_mean=True, with_std=True):
        self.with_mean = with_mean
        self.with_std = with_std

    def fit(self, X, y=None):
        X = row_chunked(X)
        n, mean = _means(X)
        var = _variances(X, mean, n)
        # scikit-learn's constant-feature bound: a variance within the rounding of the
        # variance and of the mean is zero
        bound = n * _EPS * var + (n * mean * _EPS) ** 2
        scale = np.sqrt(var)
        scale[(var <= bound) | (scale == 0.0)] = 1.0
        self.n_features_in_ = X.shape[1]
        self.n_samples_seen_ = n
        self.mean_ = mean if self.with_mean or self.with_std else None
        self.var_ = var if self.with_std else None
        self.scale_ = scale if self.with_std else None
        return self

    def transform(self, X):
        self._check_fitted("n_samples_seen_")
        X = row_chunked(X)
        self._check_features(X)
        shift = self.mean_ if self.with_mean else np.zeros(self.n_features_in_)
        scale = self.scale_ if self.with_std else np.ones(self.n_features_in_)
        return X.map_blocks(_standardise, shift, scale, dtype=np.float64)

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)


def _standardise(x, shift, scale):
    return (np.asarray(x, dtype=np.float64) - shift) / scale


def _column_extremes(X):
    """Per-column minimum and maximum: per-chunk extremes, merged (exact: no rounding, so
    the result is the in-memory one whatever the chunking)."""
    parts = per_chunk(_chunks.column_extremes, X)
    low = np.min(np.stack([p[0] for p in parts]), axis=0)
    high = np.max(np.stack([p[1] for p in parts]), axis=0)
    return low, high


def _nonzero_scale(scale):
    """scikit-learn's rule: a scale within 10 eps of zero (a constant column) becomes 1."""
    scale = scale.copy()
    scale[scale < 10 * _EPS] = 1.0
    return scale


class MinMaxScaler(_DaskEstimator):
    """Columns mapped onto ``feature_range`` from their minimum and maximum over all chunks
    (one pass; extremes are exact, so the fitted attributes and the transform are
    scikit-learn's bit for bit)."""

    def __init__(self, feature_range=(0, 1), *, clip=False):
        self.feature_range = feature_range
        self.clip = clip

    def fit(self, X, y=None):
        low_out, high_out = self.feature_range
        if not low_out < high_out:
            raise ValueError(
                f"Minimum of desired feature range must be smaller than maximum. Got {self.feature_range!r}."
            )
        X = row_chunked(X)
        low, high = _column_extremes(X)
        self.n_features_in_ = X.shape[1]
        self.n_samples_seen_ = X.shape[0]
        self.data_min_, self.data_max_ = low, high
        self.data_range_ = high - low
        self.scale_ = (high_out - low_out) / _nonzero_scale(self.data_range_)
        self.min_ = low_out - low * self.scale_
        return self

    def transform(self, X):
        self._check_fitted("scale_")
        X = row_chunked(X)
        self._check_features(X)
        bounds = self.feature_range if self.clip else None
        return X.map_blocks(_min_max, self.scale_, self.min_, bounds, dtype=np.float64)

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)


def _min_max(x, scale, shift, bounds):
    out = np.array(x, dtype=np.float64)
    out *= scale
    out += shift
    if bounds is not None:
        np.clip(out, bounds[0], bounds[1], out=out)
    return out


class MaxAbsScaler(_DaskEstimator):
    """Columns divided by their largest magnitude over all chunks (one pass, exact: the
    fitted attributes and the transform are scikit-learn's bit for bit)."""

    def __init__(self):
        pass

    def fit(self, X, y=None):
        X = row_chunked(X)
        low, high = _column_extremes(X)
        self.n_features_in_ = X.shape[1]
        self.n_samples_seen_ = X.shape[0]
        self.max_abs_ = np.maximum(np.abs(low), np.abs(high))
        self.scale_ = _nonzero_scale(self.max_abs_)
        return self

    def transform(self, X):
        self._check_fitted("scale_")
        X = row_chunked(X)
        self._check_features(X)
        return X.map_blocks(_divided, self.scale_, dtype=np.float64)

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)


def _divided(x, scale):
    out = np.array(x, dtype=np.float64)
    out /= scale
    return out


class LinearRegression(_DaskEstimator):
    """Ordinary least squares over chunks: means (pass 1), the centred Gram matrix and
    ``X^T y`` (pass 2) from rustyml's product engine per chunk, summed in chunk order, an
    eigen-solve of the d x d system, and one refinement pass with the residual (pass 3),
    which brings the error to a least-squares solver's order (cond(X) * eps). A
    rank-deficient or too ill-conditioned ``X`` (cond(X)^2 * eps >= 1e-3) is a
    ``ValueError``: it needs an orthogonal factorisation of all rows."""

    def __init__(self, *, fit_intercept=True):
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        X = row_chunked(X)
        y = aligned_target(y, X)
        d = X.shape[1]
        if self.fit_intercept:
            _, x_mean = _means(X)
            y2 = y.reshape(-1, 1) if y.ndim == 1 else y
            _, y_mean = _means(y2)
        else:
            x_mean = np.zeros(d)
            y_mean = np.zeros(1 if y.ndim == 1 else y.shape[1])
        parts = per_chunk(_chunks.centred_cross_products, X, x_mean, y_mean, y=y)
        gram = _chunks.ordered_sum([p[0] for p in parts])
        xty = _chunks.ordered_sum([p[1] for p in parts])
        equations = NormalEquations(gram)
        why = equations.unsolvable()
        if why is not None:
            raise ValueError(
                f"X is rank-deficient or too ill-conditioned for the chunked normal equations "
                f"({why})"
            )
        coef = equations.solve(xty)
        correction = per_chunk(_chunks.residual_products, X, x_mean, y_mean, coef, y=y)
        coef = coef + equations.solve(_chunks.ordered_sum(correction))
        self.n_features_in_ = d
        self.coef_ = coef[:, 0] if y.ndim == 1 else coef.T
        intercept = y_mean - x_mean @ coef
        if not self.fit_intercept:
            intercept = np.zeros_like(intercept)
        self.intercept_ = float(intercept[0]) if y.ndim == 1 else intercept
        self.singular_ = equations.singular_values()
        return self

    def predict(self, X):
        self._check_fitted("coef_")
        X = row_chunked(X)
        self._check_features(X)
        coef = np.atleast_2d(self.coef_)
        out = X.map_blocks(
            _affine,
            coef.T,
            np.atleast_1d(self.intercept_),
            dtype=np.float64,
            chunks=(X.chunks[0], (coef.shape[0],)),
        )
        return out[:, 0] if np.ndim(self.coef_) == 1 else out


def _affine(x, coef, intercept):
    from rustyml.math.matmul import dot

    return dot(np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(coef)) + intercept


class PCA(_DaskEstimator):
    """Principal components from the covariance merged over chunks (means, then centred
    Gram matrices summed in chunk order), with scikit-learn's ``covariance_eigh``
    definitions: components as rows, signs such that each row's largest-magnitude entry is
    positive, ``explained_variance_`` with ``n - 1``."""

    def __init__(self, n_components=None, *, whiten=False):
        self.n_components = n_components
        self.whiten = whiten

    def fit(self, X, y=None):
        X = row_chunked(X)
        n, d = X.shape
        if n < 2:
            raise ValueError("PCA needs at least two samples")
        k = min(n, d) if self.n_components is None else self.n_components
        if not (isinstance(k, (int, np.integer)) and 0 < k <= min(n, d)):
            raise ValueError(f"n_components={k!r} must be an int between 1 and {min(n, d)}")
        _, mean = _means(X)
        cov = _chunks.ordered_sum(per_chunk(_chunks.centred_gram, X, mean)) / (n - 1)
        values, vectors = np.linalg.eigh((cov + cov.T) / 2)
        values, vectors = np.maximum(values[::-1], 0.0), vectors[:, ::-1].T
        signs = np.sign(vectors[np.arange(d), np.argmax(np.abs(vectors), axis=1)])
        signs[signs == 0] = 1.0
        vectors *= signs[:, None]
        total = values.sum()
        self.n_features_in_ = d
        self.n_samples_ = n
        self.mean_ = mean
        self.n_components_ = int(k)
        self.components_ = vectors[:k].copy()
        self.explained_variance_ = values[:k].copy()
        self.explained_variance_ratio_ = values[:k] / total if total > 0 else np.zeros(k)
        self.singular_values_ = np.sqrt(values[:k] * (n - 1))
        self.noise_variance_ = float(values[k:].mean()) if k < min(n, d) else 0.0
        return self

    def transform(self, X):
        self._check_fitted("components_")
        X = row_chunked(X)
        self._check_features(X)
        proj = self.components_.T
        if self.whiten:
            proj = proj / np.sqrt(self.explained_variance_)
        return X.map_blocks(
            _project,
            self.mean_,
            np.ascontiguousarray(proj),
            dtype=np.float64,
            chunks=(X.chunks[0], (self.n_components_,)),
        )

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)


def _project(x, mean, proj):
    from rustyml.math.matmul import dot

    return dot(np.ascontiguousarray(np.asarray(x, dtype=np.float64) - mean), proj)


class KMeans(_DaskEstimator):
    """Lloyd's iterations over chunks: each iteration assigns every chunk's rows to their
    nearest center where the chunk lives (the single-machine KMeans' scan) and returns
    per-cluster sums and counts, combined in chunk order. Starts: an array ``init``, or
    k-means++ run by rustyml's KMeans on ``init_sample_size`` rows drawn with
    ``random_state``. Stops when the total squared center shift is within ``tol`` times the
    mean feature variance (scikit-learn's rule) or after ``max_iter`` iterations. An empty
    cluster keeps its center."""

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        max_iter=300,
        tol=1e-4,
        random_state=None,
        init_sample_size=10_000,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.init_sample_size = init_sample_size

    def _initial_centers(self, X):
        if not isinstance(self.init, str):
            centers = np.asarray(self.init, dtype=np.float64)
            if centers.shape != (self.n_clusters, X.shape[1]):
                raise ValueError(
                    f"init has shape {centers.shape}, expected {(self.n_clusters, X.shape[1])}"
                )
            return centers.copy()
        from rustyml.machine_learning import KMeans as _KMeans

        rng = np.random.default_rng(self.random_state)
        size = min(X.shape[0], max(self.init_sample_size, self.n_clusters))
        rows = np.sort(rng.choice(X.shape[0], size=size, replace=False))
        sample = np.asarray(X[rows].compute(), dtype=np.float64)
        seed = int(rng.integers(0, 2**31))
        starts = _KMeans(
            n_clusters=self.n_clusters, init=self.init, n_init=1, max_iter=1, random_state=seed
        )
        # One Lloyd pass on the sample only polishes the sampled k-means++ seeds.
        return np.asarray(starts.fit(sample).cluster_centers_, dtype=np.float64)

    def fit(self, X, y=None):
        X = row_chunked(X)
        if not (
            isinstance(self.n_clusters, (int, np.integer)) and 0 < self.n_clusters <= X.shape[0]
        ):
            raise ValueError(f"n_clusters={self.n_clusters!r} must be in [1, n_samples]")
        n, mean = _means(X)
        tol = float(np.mean(_variances(X, mean, n))) * self.tol
        centers = self._initial_centers(X)
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            parts = per_chunk(_chunks.lloyd_step, X, centers)
            sums = _chunks.ordered_sum([p[0] for p in parts])
            counts = _chunks.ordered_sum([p[1] for p in parts])
            new = centers.copy()
            filled = counts > 0
            new[filled] = sums[filled] / counts[filled, None]
            shift = float(((new - centers) ** 2).sum())
            centers = new
            if shift <= tol:
                break
        parts = per_chunk(_chunks.lloyd_step, X, centers)
        self.n_features_in_ = X.shape[1]
        self.cluster_centers_ = centers
        self.inertia_ = float(sum(p[2] for p in parts))
        self.n_iter_ = n_iter
        return self

    def predict(self, X):
        self._check_fitted("cluster_centers_")
        X = row_chunked(X)
        self._check_features(X)
        return map_rows(_chunks.nearest_center, X, self.cluster_centers_, dtype=np.int32)


__all__ = [
    "PCA",
    "KMeans",
    "LinearRegression",
    "MaxAbsScaler",
    "MinMaxScaler",
    "StandardScaler",
]
