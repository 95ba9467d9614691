"""PCA against scikit-learn's PCA (same sign convention, so compared entry for entry)."""

import pickle

import numpy as np
import pytest
from sklearn import decomposition
from sklearn.base import clone
from sklearn.datasets import load_diabetes, load_digits, load_iris, load_wine
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rustyml import NotFittedError
from rustyml.machine_learning import PCA

DATASETS = {
    "iris": load_iris,
    "wine": load_wine,
    "diabetes": load_diabetes,
    "digits": load_digits,
}

# Agreement asked of the port; scikit-learn's own 'full' and 'covariance_eigh' solvers agree to
# ~1e-11 on these data sets, so 1e-8 leaves room for a different summation order only.
TOL = 1e-8


def comparable(ev):
    """Components whose direction is well defined: non-zero variance and an eigenvalue gap of at
    least 1e-5 of the largest (the eigenvector error is ~ eps * largest / gap). On digits this
    drops the 3 zero-variance directions (constant pixels) and the 3 near-null ones."""
    gaps = np.minimum(np.abs(np.diff(ev, prepend=np.inf)), np.abs(np.diff(ev, append=-np.inf)))
    return (gaps > 1e-5 * ev[0]) & (ev > 1e-8 * ev[0])


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_full_fit_matches_sklearn(name):
    X = DATASETS[name]().data
    ours = PCA().fit(X)
    ref = decomposition.PCA().fit(X)
    assert ours.n_components_ == ref.n_components_
    scale = ref.explained_variance_[0]
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=0, atol=TOL * np.abs(X).max())
    np.testing.assert_allclose(
        ours.explained_variance_, ref.explained_variance_, rtol=0, atol=TOL * scale
    )
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=0, atol=TOL
    )
    np.testing.assert_allclose(
        ours.singular_values_, ref.singular_values_, rtol=0, atol=TOL * ref.singular_values_[0]
    )
    keep = comparable(ref.explained_variance_)
    assert keep.sum() >= 4
    np.testing.assert_allclose(ours.components_[keep], ref.components_[keep], rtol=0, atol=TOL)
    z, zr = ours.transform(X)[:, keep], ref.transform(X)[:, keep]
    np.testing.assert_allclose(z, zr, rtol=0, atol=TOL * np.abs(zr).max())


@pytest.mark.parametrize("name", sorted(DATASETS))
@pytest.mark.parametrize("whiten", [False, True])
def test_truncated_fit_transform_and_inverse_match_sklearn(name, whiten):
    X = DATASETS[name]().data
    k = 3
    ours = PCA(n_components=k, whiten=whiten)
    ref = decomposition.PCA(n_components=k, whiten=whiten)
    z, zr = ours.fit_transform(X), ref.fit_transform(X)
    np.testing.assert_allclose(z, zr, rtol=0, atol=TOL * np.abs(zr).max())
    np.testing.assert_allclose(ours.components_, ref.components_, rtol=0, atol=TOL)
    assert ours.noise_variance_ == pytest.approx(ref.noise_variance_, rel=TOL)
    back, backr = ours.inverse_transform(z), ref.inverse_transform(zr)
    np.testing.assert_allclose(back, backr, rtol=0, atol=TOL * np.abs(backr).max())
    new = X[::7] * 1.1 + 0.3
    np.testing.assert_allclose(
        ours.transform(new), ref.transform(new), rtol=0, atol=TOL * np.abs(ref.transform(new)).max()
    )


@pytest.mark.parametrize("fraction", [0.5, 0.8, 0.95, 0.99])
def test_variance_fraction_selects_the_same_count(fraction):
    X = load_digits().data
    ours = PCA(n_components=fraction).fit(X)
    ref = decomposition.PCA(n_components=fraction).fit(X)
    assert ours.n_components_ == ref.n_components_
    np.testing.assert_allclose(ours.components_, ref.components_, rtol=0, atol=TOL)


def test_wide_data_match_sklearn_full_svd(rng):
    X = rng.normal(size=(20, 60)) @ np.diag(np.linspace(3.0, 0.5, 60))
    ours = PCA(n_components=10).fit(X)
    ref = decomposition.PCA(n_components=10, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.explained_variance_, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(ours.components_, ref.components_, rtol=0, atol=TOL)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=0, atol=TOL)
    full = PCA().fit(X)
    assert full.n_components_ == 20
    c = full.components_
    np.testing.assert_allclose(c @ c.T, np.eye(20), atol=1e-10)


def test_float32_and_strided_input(rng):
    X = rng.normal(size=(200, 12))
    ref = PCA(n_components=4).fit(X)
    strided = np.asfortranarray(np.repeat(X, 2, axis=1))[:, ::2]
    np.testing.assert_array_equal(PCA(n_components=4).fit(strided).components_, ref.components_)
    ours32 = PCA(n_components=4).fit(X.astype(np.float32))
    ref32 = decomposition.PCA(n_components=4).fit(X.astype(np.float32).astype(np.float64))
    np.testing.assert_allclose(ours32.components_, ref32.components_, atol=1e-10)


def test_bad_input_raises_clear_errors(rng):
    X = rng.normal(size=(10, 3))
    with pytest.raises(NotFittedError):
        PCA().transform(X)
    with pytest.raises(ValueError, match="NaN"):
        PCA().fit(np.array([[1.0, np.nan], [2.0, 3.0]]))
    with pytest.raises(ValueError, match="empty"):
        PCA().fit(np.zeros((0, 3)))
    with pytest.raises(
        ValueError,
        match=r"n_components must be between 1 and min\(n_samples, n_features\)=3, got 4",
    ):
        PCA(n_components=4).fit(X)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        PCA(n_components=1.5).fit(X)
    with pytest.raises(TypeError):
        PCA(n_components=True).fit(X)
    with pytest.raises(ValueError, match="features"):
        PCA(n_components=2).fit(X).transform(rng.normal(size=(3, 4)))
    with pytest.raises(ValueError, match="2-dimensional"):
        PCA().fit(np.ones(5))


def test_sklearn_conventions_clone_pickle_save_pipeline(tmp_path):
    X = load_wine().data
    est = PCA(n_components=3, whiten=True)
    assert clone(est).get_params() == est.get_params()
    est.fit(X)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.transform(X), est.transform(X))
    path = tmp_path / "pca.bin"
    est.save(path)
    np.testing.assert_array_equal(PCA.load(path).components_, est.components_)
    pipe = make_pipeline(StandardScaler(), PCA(n_components=2)).fit(X)
    ref = make_pipeline(StandardScaler(), decomposition.PCA(n_components=2)).fit(X)
    np.testing.assert_allclose(pipe.transform(X), ref.transform(X), atol=1e-9)
