"""``sklearn.discriminant_analysis`` with rustyml's product engine behind
LinearDiscriminantAnalysis's ``svd``, ``lsqr`` and ``eigen`` solvers.

scikit-learn's ``svd`` solver whitens the within-class deviations and takes their SVD (the
O(n d^2) part), then takes a second, small SVD of the whitened class means (n_classes x
rank). Natively, the class means and the Gram matrix of the scaled deviations come from
rustyml's product engine and its eigendecomposition gives the same right singular vectors
up to sign; the small second SVD is then scipy's, as in scikit-learn. Its discriminant
directions do not depend on the signs of the first stage's vectors (LAPACK's SVD of the
small matrix follows a sign flip of its columns), so ``scalings_``, ``transform`` and the
classifier's ``coef_`` / ``intercept_`` come out as scikit-learn's, signs included.

The ``lsqr`` solver's prior-weighted within-class covariance (optionally shrunk by a
number) comes from the product engine too, and the least-squares solve is scipy's, as in
scikit-learn, when the covariance is well enough conditioned for the summation order not
to matter (cond * n * eps < 1e-6) and no class has a single sample (scikit-learn warns).

float32 input to ``lsqr`` is fitted from its exact float64 values, each fitted attribute
then in the dtype scikit-learn's float32 fit gives it (float32 priors, means and two-class
coefficients; the rest float64, as NumPy's covariance and LAPACK's solve give them).

The ``eigen`` solver's within-class and total covariances (each optionally shrunk, as for
``lsqr``) come from the product engine; the generalized eigenproblem of their difference
against the within-class one is SciPy's, as in scikit-learn. Its discriminant directions
(eigenvalues clear of rounding) come out as scikit-learn's, signs included, where they
are well separated and LAPACK's signs do not hang on rounding (probed with both matrices
moved beyond the two fits' difference). With the class shares as priors and no shrinkage,
the between-class scatter has rank k - 1: the remaining columns of ``scalings_`` are a
basis of the rest of the space that rounding picks, in scikit-learn's fit as here, and
differ from its; ``transform`` uses only the discriminant ones. float32 input is fitted
from its float64 values, as for ``lsqr``.

The native svd fit needs dense input, no ``store_covariance``,
priors that sum to one (else scikit-learn warns), and a well-separated spectrum: no
singular value of either stage close to its ``tol`` cut, none of the kept ones close to
another (a near-tie leaves the basis, and so the signs, to rounding), and at least two
directions kept by the first stage (a single column's sign is LAPACK's own convention) or
a single feature; and LAPACK's signs for the second stage must not hang on rounding: probed
by a few SVDs of the small matrix moved well beyond the two fits' difference, with its
columns' signs flipped. Anything else, float32 input to it (scikit-learn's svd fit then
runs in float32, whose rounding decides its signs), and covariance estimators, is
scikit-learn's.
"""

import numpy as np
import scipy.linalg
from scipy.sparse import issparse
from sklearn import discriminant_analysis as _sk
from sklearn import get_config
from sklearn.covariance import shrunk_covariance
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import validate_data

from rustyml.math.matmul import dot as _dot
from rustyml.sklearn._dispatch import native_path, require
from rustyml.sklearn.preprocessing import standard_scale

__all__ = ["LinearDiscriminantAnalysis"]

_SkLDA = _sk.LinearDiscriminantAnalysis
_EPS = np.finfo(np.float64).eps
# A kept singular value closer than this (relative to the largest) to another one leaves
# the basis of their plane to rounding.
_MIN_GAP = 1e-6
# What scikit-learn's lsqr fit on float32 data keeps in float32 (the rest it computes in
# float64: NumPy's covariances, LAPACK's solve of them); a two-class fit's coef_ and
# intercept_ too.
_FLOAT32_KEPT = ("priors_", "means_")


def _well_separated(values, count):
    """The first ``count`` of the descending ``values`` are apart from their neighbours by
    more than ``_MIN_GAP`` times the largest."""
    if count < 1 or len(values) < 2:
        return True
    gaps = -np.diff(values)[: min(count, len(values) - 1)]
    return bool(np.all(gaps > _MIN_GAP * values[0]))


def _signs_follow_the_matrix(matrix, vt, spread, probes=8):
    """Whether the signs LAPACK gives the right singular vectors ``vt`` of ``matrix`` (the
    whitened class means in the first stage's basis) stay put when that basis moves as the
    first stage's rounding moves it: its columns mixed by ``spread`` (relative; more than
    the error that separates rustyml's basis from scikit-learn's) and their signs flipped.
    Where a sign choice hangs on an intermediate value near zero, a probe flips it:
    scikit-learn's own signs are then rounding's, and its fit runs."""
    wobble = np.random.default_rng(0)
    width = matrix.shape[1]
    for _ in range(probes):
        flips = wobble.choice([-1.0, 1.0], size=width)
        basis = np.diag(flips) + spread * wobble.uniform(-1.0, 1.0, (width, width))
        probe = scipy.linalg.svd(matrix @ basis, full_matrices=False)[2]
        # to first order in spread, the probe's vectors are vt with the flips applied
        agreement = np.sum(probe[: len(vt)] * flips * vt, axis=1)
        if np.any(agreement <= 0):
            return False
    return True


def _generalized_signs_hold(between, within, vectors, columns, spread, probes=8):
    """Whether the signs LAPACK gives the generalized eigenvectors ``vectors`` (at the
    sorted positions ``columns``) of ``between`` against ``within`` stay put when both
    matrices move by ``spread`` (relative; more than the summation-order difference
    between rustyml's covariances and scikit-learn's). Where a sign choice hangs on an
    intermediate value near zero, a probe flips it: scikit-learn's own signs are then
    rounding's, and its fit runs."""
    wobble = np.random.default_rng(0)
    d = between.shape[0]
    reference = within @ vectors
    for _ in range(probes):
        moves = []
        for matrix in (between, within):
            move = wobble.uniform(-1.0, 1.0, (d, d))
            moves.append(matrix + spread * np.max(np.abs(matrix)) * (move + move.T) / 2)
        evals, evecs = scipy.linalg.eigh(*moves)
        probe = evecs[:, np.argsort(evals)[::-1]][:, columns]
        if np.any(np.sum(probe * reference, axis=0) <= 0):
            return False
    return True


def _ledoit_wolf_covariance(X):
    """scikit-learn's ``shrinkage="auto"`` covariance of one class: the features
    standardised (scikit-learn's scaler, its constant-feature rule included), shrunk
    towards a multiple of the identity by the Ledoit-Wolf coefficient, and scaled back. The
    two n x d products it needs come from rustyml's product engine."""
    scale = standard_scale(X)
    Z = X - X.mean(axis=0)
    Z /= scale
    Z -= Z.mean(axis=0)  # ledoit_wolf centres again
    n, d = Z.shape
    Z = np.ascontiguousarray(Z)
    gram = _dot(Z.T, Z)
    covariance = gram / n
    mu = np.trace(covariance) / d
    if d == 1:
        shrinkage = 0.0
    else:
        Z2 = Z**2
        delta_sum = np.sum(gram**2) / n**2
        beta_sum = np.sum(_dot(Z2.T, Z2))
        beta = (beta_sum / n - delta_sum) / (d * n)
        delta = (delta_sum - 2.0 * mu * np.sum(Z2) / n + d * mu**2) / d
        beta = min(beta, delta)
        shrinkage = 0.0 if beta == 0 else beta / delta
    shrunk = (1.0 - shrinkage) * covariance
    shrunk.flat[:: d + 1] += shrinkage * mu
    return scale[:, None] * shrunk * scale[None, :]


class LinearDiscriminantAnalysis(_SkLDA):
    __doc__ = _SkLDA.__doc__

    @native_path(_SkLDA.fit, fits=True)
    def fit(self, X, y):
        require(self.solver in ("svd", "lsqr", "eigen"), f"solver={self.solver!r}")
        if self.solver == "svd":
            require(self.shrinkage is None, "shrinkage (scikit-learn's error)")
            require(not self.store_covariance, "store_covariance")
        else:
            require(
                self.shrinkage in (None, "auto") or not isinstance(self.shrinkage, str),
                f"shrinkage={self.shrinkage!r}",
            )
        require(self.covariance_estimator is None, "covariance_estimator")
        require(not get_config()["array_api_dispatch"], "array API dispatch")
        require(not issparse(X), "sparse X")
        self._validate_params()
        X, y = validate_data(self, X, y, ensure_min_samples=2, dtype=[np.float64, np.float32])
        # float32 data is fitted from its exact float64 values (NumPy's covariances of
        # it are float64 in scikit-learn's fit too); each attribute then takes the dtype
        # scikit-learn's float32 fit gives it (_FLOAT32_KEPT). Its float32 svd fit runs
        # in float32, whose rounding decides its LAPACK signs: its own.
        dtype = X.dtype
        require(self.solver != "svd" or dtype == np.float64, "float32 X with the svd solver")
        X = np.asarray(X, dtype=np.float64)
        classes = unique_labels(y)
        n, d = X.shape
        k = len(classes)
        require(1 < k < n, "fewer than two classes or no more samples than classes")
        codes = np.searchsorted(classes, y)
        counts = np.bincount(codes, minlength=k)
        if self.priors is None:
            priors = counts / float(n)
        else:
            priors = np.asarray(self.priors, dtype=np.float64)
            require(priors.shape == (k,), "priors of another length")
            require(np.all(priors >= 0), "negative priors (scikit-learn's error)")
            require(abs(priors.sum() - 1.0) <= 1e-5, "priors renormalised (scikit-learn warns)")
        largest = min(k - 1, d)
        require(
            self.n_components is None or self.n_components <= largest,
            "n_components too large (scikit-learn's error)",
        )
        kept = largest if self.n_components is None else self.n_components
        onehot = np.zeros((k, n))
        onehot[codes, np.arange(n)] = 1.0
        means = _dot(onehot, X) / counts[:, None]
        dev = means[codes]  # then X - that, in place: one array of X's size
        np.subtract(X, dev, out=dev)
        if self.solver == "lsqr":
            coef, intercept = self._native_lsqr(X, dev, codes, counts, priors, means)
        elif self.solver == "eigen":
            # How far scikit-learn's covariances may sit from rustyml's, relative: the
            # summation order (n eps); its float32 fit weighs them by float32 priors, and
            # standardises in float32 for the Ledoit-Wolf shrinkage (n float32 eps).
            spread = 10 * n * _EPS
            if dtype != np.float64:
                spread += 10 * (n if self.shrinkage == "auto" else 1) * np.finfo(dtype).eps
            coef, intercept = self._native_eigen(X, dev, codes, counts, priors, means, kept, spread)
        else:
            coef, intercept = self._native_svd(X, dev, priors, means, kept)
        self.classes_ = classes
        self.priors_ = priors
        self.means_ = means
        if k == 2:
            coef = (coef[1] - coef[0]).reshape(1, -1)
            intercept = np.array([intercept[1] - intercept[0]])
        self.coef_ = coef
        self.intercept_ = intercept
        self._max_components = self._n_features_out = kept
        if dtype != np.float64:
            kept_as_float32 = _FLOAT32_KEPT + (("coef_", "intercept_") if k == 2 else ())
            for name in kept_as_float32:
                setattr(self, name, getattr(self, name).astype(dtype))
        return self

    def _within_covariance(self, X, dev, codes, counts, priors):
        """scikit-learn's ``_class_cov``: the prior-weighted sum of the class covariances
        (biased, each optionally shrunk), by the product engine. Scales ``dev`` (the
        deviations from the class means) in place: no copy of the data."""
        require(np.all(counts > 1), "a class of one sample (scikit-learn warns)")
        if self.shrinkage == "auto":
            # each class shrunk by its own Ledoit-Wolf coefficient: a weighted sum of them
            return sum(p * _ledoit_wolf_covariance(X[codes == c]) for c, p in enumerate(priors))
        dev *= np.sqrt(priors / counts)[codes][:, None]
        within = _dot(dev.T, dev)
        if self.shrinkage is not None:
            # shrinking is linear: the prior-weighted sum of the shrunk class covariances
            # is the weighted covariance shrunk
            within = shrunk_covariance(within, self.shrinkage)
        return within

    def _checked_conditioning(self, within, n):
        """The within-class covariance's spectrum, ascending, where it is positive and well
        enough conditioned for the summation order not to matter."""
        spectrum = np.linalg.eigvalsh(within)
        # The two covariances differ by summation order, n eps relative; a solve with
        # them amplifies that by the condition number.
        require(spectrum[0] > 0, "a singular within-class covariance")
        require(spectrum[-1] / spectrum[0] * n * _EPS < 1e-6, "an ill-conditioned covariance")
        return spectrum

    def _total_covariance(self, X, scratch):
        """scikit-learn's ``_cov`` of all of X (biased, optionally shrunk), the centred
        Gram matrix by the product engine; the centred rows are written over ``scratch``
        (an array of X's shape the caller is done with)."""
        if self.shrinkage == "auto":
            return _ledoit_wolf_covariance(X)
        centred = np.subtract(X, X.mean(axis=0), out=scratch)
        total = _dot(centred.T, centred) / X.shape[0]
        if self.shrinkage is not None:
            total = shrunk_covariance(total, self.shrinkage)
        return total

    def _native_eigen(self, X, dev, codes, counts, priors, means, kept, spread):
        """scikit-learn's ``eigen`` solver: the within-class and total covariances by the
        product engine, then the same generalized eigenproblem of the between-class scatter
        (their difference) against the within-class one, by the same LAPACK call.
        ``spread`` bounds the relative distance of scikit-learn's covariances from these."""
        n = X.shape[0]
        within = self._within_covariance(X, dev, codes, counts, priors)
        spectrum = self._checked_conditioning(within, n)
        total = self._total_covariance(X, scratch=dev)
        between = total - within
        evals, evecs = scipy.linalg.eigh(between, within)
        order = np.argsort(evals)[::-1]
        sorted_evals, evecs = evals[order], evecs[:, order]

        # An eigenvalue moves by up to ``noise`` when the covariances move by ``spread``
        # (its vector is normalised in the within-class metric, |v|^2 <= 1 / spectrum[0]).
        largest = np.max(np.abs(sorted_evals))
        noise = spread * (np.linalg.norm(total, 2) + (1.0 + largest) * spectrum[-1]) / spectrum[0]
        size = np.abs(sorted_evals)
        # Eigenvalues within rounding of zero (with empirical priors the between-class
        # scatter has rank k - 1) have vectors that are a basis rounding picks for the
        # rest of the space, in scikit-learn's fit as here; the others are determined.
        require(
            np.all((size <= noise) | (size > 100 * noise)),
            "an eigenvalue near the rounding level",
        )
        determined = np.flatnonzero(size > 100 * noise)
        require(
            np.array_equal(determined[:kept], np.arange(kept)),
            "a kept direction of no between-class variance",
        )
        values = sorted_evals[determined]
        gaps = np.abs(np.diff(values))
        require(
            np.all(gaps > max(_MIN_GAP * largest, 100 * noise)),
            "near-equal discriminant eigenvalues",
        )
        require(
            _generalized_signs_hold(between, within, evecs[:, determined], determined, spread),
            "LAPACK's signs of the discriminant directions follow rounding here",
        )

        self.covariance_ = within
        self.explained_variance_ratio_ = np.sort(evals / np.sum(evals))[::-1][:kept]
        self.scalings_ = evecs
        coef = _dot(_dot(means, evecs), np.ascontiguousarray(evecs.T))
        intercept = -0.5 * np.einsum("ij,ij->i", means, coef) + np.log(priors)
        return coef, intercept

    def _native_lsqr(self, X, dev, codes, counts, priors, means):
        """scikit-learn's ``lsqr`` solver: the prior-weighted within-class covariance (each
        class's biased covariance, optionally shrunk) by the product engine, then the
        same least-squares solve of ``covariance_ coef^T = means^T``."""
        within = self._within_covariance(X, dev, codes, counts, priors)
        self._checked_conditioning(within, X.shape[0])
        self.covariance_ = within
        coef = scipy.linalg.lstsq(within, means.T)[0].T
        intercept = np.log(priors) - 0.5 * np.einsum("ij,ij->i", means, coef)
        return coef, intercept

    def _native_svd(self, X, dev, priors, means, kept):
        n, d = X.shape
        k = len(priors)
        tol = float(self.tol)
        # First stage: the whitened within-class deviations' spectrum.
        std = dev.std(axis=0)
        std[std == 0] = 1.0
        # (in place: the deviations are not needed after this)
        scaled = np.multiply(np.divide(dev, std, out=dev), np.sqrt(1.0 / n), out=dev)
        gram = _dot(scaled.T, scaled)
        evals, evecs = np.linalg.eigh(gram)
        order = np.argsort(evals)[::-1]
        evals, evecs = np.maximum(evals[order], 0.0), evecs[:, order]
        sv = np.sqrt(evals)
        # From the Gram matrix a singular value s carries an error of about
        # d eps s_max^2 / s: none may sit that close to the tol cut.
        slack = 10 * d * _EPS * sv[0] ** 2 / tol
        require(np.all(np.abs(sv - tol) > slack), "a singular value at the tol cut")
        rank = int(np.sum(sv > tol))
        require(rank >= 2 or (d == 1 and rank == 1), "one within-class direction (LAPACK's sign)")
        require(_well_separated(evals, rank), "near-equal within-class singular values")
        scalings = evecs[:, :rank] / std[:, None] / sv[:rank]

        # Second stage, scikit-learn's small SVD of the whitened, prior-weighted means.
        xbar = priors @ means
        weight = np.sqrt(n * priors / (k - 1))
        between = (weight[:, None] * (means - xbar)) @ scalings
        _, sv2, vt2 = scipy.linalg.svd(between, full_matrices=False)
        cut = tol * sv2[0]
        require(np.all(np.abs(sv2 - cut) > 1e3 * _EPS * sv2[0]), "a singular value at the cut")
        rank2 = int(np.sum(sv2 > cut))
        require(_well_separated(sv2, rank2), "near-equal discriminant singular values")
        # rustyml's between-class matrix differs from scikit-learn's by the first stage's
        # error, d eps (s_max / s_min)^2 relative: probe well beyond it
        spread = max(100 * _EPS, 10 * d * _EPS * (sv[0] / sv[rank - 1]) ** 2)
        require(
            _signs_follow_the_matrix(between, vt2[:rank2], spread),
            "LAPACK's signs of the discriminant directions follow rounding here",
        )

        self.xbar_ = xbar
        self.explained_variance_ratio_ = (sv2**2 / np.sum(sv2**2))[:kept]
        self.scalings_ = scalings @ vt2.T[:, :rank2]
        projected = (means - xbar) @ self.scalings_
        coef = projected @ self.scalings_.T
        intercept = np.log(priors) - 0.5 * np.sum(projected**2, axis=1) - coef @ xbar
        return coef, intercept
