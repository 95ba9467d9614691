"""The classifiers of ``rustyml.dask``: linear discriminant analysis from class statistics
merged over chunks, and logistic regression by L-BFGS over chunk-summed losses."""

import dask
import numpy as np

from rustyml.dask import _chunks
from rustyml.dask._base import aligned_target, per_chunk, row_chunked
from rustyml.dask._estimators import _DaskEstimator

_EPS = np.finfo(np.float64).eps


def _labels(y, X):
    """``y`` aligned with ``X``'s row chunks (1-D) and its sorted distinct labels."""
    if np.ndim(y) == 2 and np.shape(y)[1] == 1:
        y = y[:, 0]
    if np.ndim(y) != 1:
        raise ValueError(f"y must be 1-D (one label per row), got shape {np.shape(y)}")
    y = aligned_target(y, X)
    classes = np.unique(np.concatenate(per_chunk(_chunks.chunk_labels, y)))
    if len(classes) < 2:
        raise ValueError(f"y needs at least two classes, got {len(classes)}")
    return y, classes


def _sign_fixed(rows):
    """Rows with their largest-magnitude entry made positive (a singular or eigenvector's
    sign is arbitrary; this fixes it from the vector itself)."""
    signs = np.sign(rows[np.arange(len(rows)), np.argmax(np.abs(rows), axis=1)])
    signs[signs == 0] = 1.0
    return rows * signs[:, None]


def _descending_eigh(m):
    values, vectors = np.linalg.eigh((m + m.T) / 2)
    return values[::-1], _sign_fixed(vectors[:, ::-1].T)


class _BlockClassifier(_DaskEstimator):
    """Block-wise outputs of a linear classifier with ``coef_`` / ``intercept_`` and
    ``classes_``: each chunk's scores by rustyml's product where the chunk lives."""

    def _scores(self, X):
        self._check_fitted("coef_")
        X = row_chunked(X)
        self._check_features(X)
        coef = np.ascontiguousarray(self.coef_)
        return X.map_blocks(
            _chunks.affine_scores,
            coef,
            np.atleast_1d(self.intercept_),
            dtype=np.float64,
            chunks=(X.chunks[0], (coef.shape[0],)),
        )

    def decision_function(self, X):
        """Scores, a dask array with ``X``'s row chunks: shape (n,) for two classes
        (positive favours ``classes_[1]``), (n, n_classes) otherwise."""
        scores = self._scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities (n, n_classes), columns in ``classes_`` order."""
        scores = self._scores(X)
        return scores.map_blocks(
            _probabilities, dtype=np.float64, chunks=(scores.chunks[0], (len(self.classes_),))
        )

    def predict(self, X):
        """Predicted labels, a dask array with ``X``'s row chunks and ``classes_``'s dtype."""
        return self._scores(X).map_blocks(
            _best_class, self.classes_, dtype=self.classes_.dtype, drop_axis=1
        )

    def score(self, X, y):
        """Mean accuracy: per-chunk hit counts summed in chunk order."""
        X = row_chunked(X)
        y = aligned_target(y, X)
        hits = per_chunk(_hits, self.predict(X), y=y)
        return float(sum(hits)) / X.shape[0]


def _probabilities(scores):
    if scores.shape[1] == 1:
        p = 1.0 / (1.0 + np.exp(-scores[:, 0]))
        return np.column_stack([1.0 - p, p])
    z = np.exp(scores - scores.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _best_class(scores, classes):
    if scores.shape[1] == 1:
        return classes[(scores[:, 0] > 0).astype(np.intp)]
    return classes[np.argmax(scores, axis=1)]


def _hits(pred, y):
    return int(np.sum(np.asarray(pred) == np.asarray(y).ravel()))


class LinearDiscriminantAnalysis(_BlockClassifier):
    """Linear discriminant analysis from class statistics merged over chunks: per-class
    sums and counts (pass 1), then per-class scatter about the class means and the
    deviation sums that correct it (pass 2), each summed in chunk order; scikit-learn's
    solvers then run on the merged statistics.

    ``solver="svd"`` whitens by the eigen-decomposition of the standardised within-class
    scatter (the singular values of the standardised class-centred data are the square roots
    of its eigenvalues) and takes the SVD of the weighted class means in that space;
    singular values below ``tol`` are dropped, as scikit-learn drops them. Because it goes
    through the scatter, singular values below about ``sqrt(eps)`` times the largest are not
    resolved (scikit-learn's SVD of the data resolves them to ``eps``): such data are
    rank-deficient to this solver. ``solver="eigen"`` solves ``S_b v = lambda S_w v``
    through a Cholesky factor of the prior-weighted class covariance (optionally shrunk by a
    fixed ``shrinkage`` in [0, 1]). Attributes and outputs are scikit-learn's; each
    discriminant direction's sign is fixed so its largest-magnitude entry is positive.
    """

    def __init__(self, solver="svd", shrinkage=None, priors=None, n_components=None, tol=1e-4):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.tol = tol

    def _check_params(self, k, d):
        if self.solver not in ("svd", "eigen"):
            raise ValueError(f"solver must be 'svd' or 'eigen', got {self.solver!r}")
        if self.shrinkage is not None:
            if self.solver == "svd":
                raise ValueError("shrinkage is not supported with solver='svd'; use 'eigen'")
            if isinstance(self.shrinkage, str) or not 0.0 <= float(self.shrinkage) <= 1.0:
                raise ValueError(
                    f"shrinkage must be None or a number in [0, 1], got {self.shrinkage!r} "
                    "(Ledoit-Wolf 'auto' needs the data's fourth moments and is not built)"
                )
        limit = min(k - 1, d)
        if self.n_components is not None and not (
            isinstance(self.n_components, (int, np.integer)) and 0 <= self.n_components <= limit
        ):
            raise ValueError(
                f"n_components ({self.n_components!r}) cannot be larger than "
                f"min(n_features, n_classes - 1) = {limit}"
            )
        return limit if self.n_components is None else int(self.n_components)

    def fit(self, X, y):
        X = row_chunked(X)
        y, classes = _labels(y, X)
        n, d = X.shape
        k = len(classes)
        max_components = self._check_params(k, d)
        if n == k:
            raise ValueError("The number of samples must be more than the number of classes.")
        parts = per_chunk(_chunks.class_sums, X, classes, y=y)
        sums = _chunks.ordered_sum([p[0] for p in parts])
        counts = _chunks.ordered_sum([p[1] for p in parts])
        means = sums / counts[:, None]
        if self.priors is None:
            priors = counts / n
        else:
            priors = np.asarray(self.priors, dtype=np.float64)
            if priors.shape != (k,) or (priors < 0).any():
                raise ValueError(f"priors must hold {k} non-negative numbers, got {self.priors!r}")
            priors = priors / priors.sum()
        parts = per_chunk(_chunks.class_scatter, X, classes, means, y=y)
        dev = _chunks.ordered_sum([p[0] for p in parts])
        scatter = _chunks.ordered_sum([p[1] for p in parts])
        # Two-pass correction: remove the rounding of each class mean from its scatter.
        scatter -= dev[:, :, None] * dev[:, None, :] / counts[:, None, None]
        xbar = priors @ means
        if self.solver == "svd":
            scalings, evr, class_coef, class_intercept = self._solve_svd(
                scatter, dev, means, priors, xbar, n, max_components
            )
        else:
            scalings, evr, class_coef, class_intercept = self._solve_eigen(
                scatter, counts, means, priors, n, max_components
            )
        if k == 2:
            coef = (class_coef[1] - class_coef[0])[None, :]
            intercept = np.array([class_intercept[1] - class_intercept[0]])
        else:
            coef, intercept = class_coef, class_intercept
        self.n_features_in_ = d
        self.classes_ = classes
        self.priors_ = priors
        self.means_ = means
        self.xbar_ = xbar
        self.scalings_ = scalings
        self.explained_variance_ratio_ = evr
        self.coef_ = coef
        self.intercept_ = intercept
        self._max_components = max_components
        return self

    def _solve_svd(self, scatter, dev, means, priors, xbar, n, max_components):
        k = len(means)
        within = scatter.sum(axis=0)
        # population spread of the class-centred data, per feature
        mean_dev = dev.sum(axis=0) / n
        std = np.sqrt(np.maximum(np.diag(within) / n - mean_dev**2, 0.0))
        std[std == 0] = 1.0
        standardised = within / np.outer(std, std) / n
        values, vt = _descending_eigh(standardised)
        sing = np.sqrt(np.maximum(values, 0.0))
        rank = int(np.sum(sing > self.tol))
        if rank == 0:
            raise ValueError("LDA: every feature is constant within each class")
        scalings = (vt[:rank] / std).T / sing[:rank]
        fac = 1.0 if k == 1 else 1.0 / (k - 1)
        weighted = (np.sqrt(n * priors * fac)[:, None] * (means - xbar)) @ scalings
        _, s2, vt2 = np.linalg.svd(weighted, full_matrices=False)
        vt2 = _sign_fixed(vt2)
        evr = (s2**2 / np.sum(s2**2))[:max_components]
        rank2 = int(np.sum(s2 > self.tol * s2[0]))
        scalings = scalings @ vt2[:rank2].T
        centred_coef = (means - xbar) @ scalings
        intercept = -0.5 * np.sum(centred_coef**2, axis=1) + np.log(priors)
        coef = centred_coef @ scalings.T
        intercept -= xbar @ coef.T
        return scalings, evr, coef, intercept

    def _solve_eigen(self, scatter, counts, means, priors, n, max_components):
        d = means.shape[1]
        alpha = 0.0 if self.shrinkage is None else float(self.shrinkage)

        def shrunk(cov):
            if alpha == 0.0:
                return cov
            mu = np.trace(cov) / d
            out = (1.0 - alpha) * cov
            out.flat[:: d + 1] += alpha * mu
            return out

        class_cov = scatter / counts[:, None, None]
        within = sum(p * shrunk(c) for p, c in zip(priors, class_cov))
        # total scatter: the within-class scatter plus the class means' spread around the
        # overall mean (exact identity), so no third pass over the data
        overall = counts @ means / n
        spread = (means - overall) * np.sqrt(counts)[:, None]
        total = shrunk((scatter.sum(axis=0) + spread.T @ spread) / n)
        between = total - within
        try:
            lower = np.linalg.cholesky((within + within.T) / 2)
        except np.linalg.LinAlgError:
            raise ValueError(
                "LDA eigen solver: the within-class covariance is singular (a feature is "
                "constant within classes or features are collinear); use solver='svd'"
            ) from None
        inv_lower = np.linalg.inv(lower)
        values, u = _descending_eigh(inv_lower @ between @ inv_lower.T)
        evecs = _sign_fixed((inv_lower.T @ u.T).T).T
        evr = (values / np.sum(values))[:max_components]
        coef = (means @ evecs) @ evecs.T
        intercept = -0.5 * np.sum(means * coef, axis=1) + np.log(priors)
        return evecs, evr, coef, intercept

    def transform(self, X):
        """Projection onto the discriminant directions (centred on ``xbar_`` for the svd
        solver, as scikit-learn), a dask array with ``X``'s row chunks."""
        self._check_fitted("scalings_")
        X = row_chunked(X)
        self._check_features(X)
        proj = np.ascontiguousarray(self.scalings_[:, : self._max_components])
        shift = self.xbar_ if self.solver == "svd" else np.zeros(self.n_features_in_)
        return X.map_blocks(
            _chunks.affine_scores,
            np.ascontiguousarray(proj.T),
            -(shift @ proj),
            dtype=np.float64,
            chunks=(X.chunks[0], (proj.shape[1],)),
        )

    def fit_transform(self, X, y):
        return self.fit(X, y).transform(X)


class LogisticRegression(_BlockClassifier):
    """Logistic regression by L-BFGS over the loss and gradient summed over chunks:
    scikit-learn's objective ``C * sum(log-loss) + |W|^2 / 2`` (scaled by ``1 / (C n)``,
    the same minimiser), binary for two classes and multinomial (softmax) for more,
    intercepts unpenalised, its defaults (``C=1``, ``tol=1e-4``, ``max_iter=100``).

    Every evaluation is one pass: each chunk's scores, fused loss and gradient come from
    rustyml's kernels where the chunk lives, and the partials are summed in chunk order on
    the client, where rustyml's L-BFGS (the single-machine LogisticRegression's minimiser,
    with its stopping rules) takes the step. Every evaluation reads every chunk, so ``X``
    and ``y`` are persisted (held in the workers' memory) for the length of the fit.
    """

    def __init__(self, penalty="l2", *, C=1.0, fit_intercept=True, max_iter=100, tol=1e-4):
        self.penalty = penalty
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y):
        from rustyml.math.optimize import lbfgs

        if self.penalty not in ("l2", None):
            raise ValueError(
                f"penalty must be 'l2' or None, got {self.penalty!r} (L1 is not built for dask)"
            )
        if self.penalty == "l2" and not (np.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C must be a finite number > 0, got {self.C!r}")
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 0):
            raise ValueError(f"max_iter must be an int >= 0, got {self.max_iter!r}")
        if not (np.isfinite(self.tol) and self.tol >= 0):
            raise ValueError(f"tol must be a finite number >= 0, got {self.tol!r}")
        X = row_chunked(X)
        y, classes = _labels(y, X)
        # every evaluation reads every chunk: keep them in the workers' memory for the fit
        X, y = dask.persist(X, y)
        n, d = X.shape
        n_out = 1 if len(classes) == 2 else len(classes)
        l2 = 1.0 / (self.C * n) if self.penalty == "l2" else 0.0
        fit_intercept = bool(self.fit_intercept)

        def objective(theta):
            parts = per_chunk(_chunks.logistic_loss_grad, X, classes, theta, n_out, y=y)
            loss = _chunks.ordered_sum([p[0] for p in parts])
            gcoef = _chunks.ordered_sum([p[1] for p in parts])
            gb = _chunks.ordered_sum([p[2] for p in parts])
            coef = theta[: n_out * d]
            grad = np.concatenate(
                [gcoef / n + l2 * coef, gb / n if fit_intercept else np.zeros(n_out)]
            )
            return loss / n + 0.5 * l2 * float(coef @ coef), grad.tolist()

        theta, _, n_iter, converged = lbfgs(
            objective,
            [0.0] * (n_out * (d + 1)),
            max_iter=int(self.max_iter),
            gtol=float(self.tol),
            # the single-machine fit's setting: the gradient rule decides, not the decrease
            ftol=64 * _EPS,
        )
        self.n_features_in_ = d
        self.classes_ = classes
        self.coef_ = theta[: n_out * d].reshape(n_out, d)
        self.intercept_ = theta[n_out * d :].copy()
        self.n_iter_ = np.array([n_iter])
        self.converged_ = bool(converged)
        return self

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


__all__ = ["LinearDiscriminantAnalysis", "LogisticRegression"]
