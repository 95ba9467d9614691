"""KernelPCA against scikit-learn's KernelPCA (up to the sign of each component)."""

import pickle

import numpy as np
import pytest
from sklearn import decomposition
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from rustyml import NotFittedError
from rustyml.machine_learning import KernelPCA

KERNELS = [
    ("linear", {}),
    ("poly", {}),
    ("poly", {"degree": 2, "gamma": 0.2, "coef0": 0.5}),
    ("rbf", {}),
    ("rbf", {"gamma": 0.05}),
    ("sigmoid", {"gamma": 0.01, "coef0": 0.0}),
    ("cosine", {}),
]


def data():
    return StandardScaler().fit_transform(load_wine().data)


def aligned(a, ref):
    """`a` with each column's sign chosen to agree with `ref` (eigenvectors are defined up to
    sign; both sides apply svd_flip, so this is almost always a no-op)."""
    signs = np.sign(np.sum(a * ref, axis=0))
    signs[signs == 0] = 1
    return a * signs


@pytest.mark.parametrize("kernel,params", KERNELS)
def test_matches_sklearn_up_to_sign(kernel, params):
    X = data()
    ours = KernelPCA(n_components=5, kernel=kernel, **params)
    ref = decomposition.KernelPCA(n_components=5, kernel=kernel, eigen_solver="dense", **params)
    z, zr = ours.fit_transform(X), ref.fit_transform(X)
    lam = ref.eigenvalues_
    # dense symmetric eigensolvers on a 178 x 178 kernel: eigenvalues to ~1e-12 relative,
    # eigenvectors to ~eps * lam_max / gap (the gaps here are > 1e-3 * lam_max).
    np.testing.assert_allclose(ours.eigenvalues_, lam, rtol=1e-9)
    np.testing.assert_allclose(
        aligned(ours.eigenvectors_, ref.eigenvectors_), ref.eigenvectors_, atol=1e-8
    )
    np.testing.assert_allclose(aligned(z, zr), zr, atol=1e-8 * np.abs(zr).max())
    new = X[::5] * 0.9 + 0.1
    t, tr = ours.transform(new), ref.transform(new)
    np.testing.assert_allclose(aligned(t, tr), tr, atol=1e-8 * np.abs(tr).max())


def test_default_n_components_drops_zero_eigenvalues():
    X = load_iris().data[:, :2]  # centered linear kernel of rank 2
    ours = KernelPCA().fit(X)
    ref = decomposition.KernelPCA().fit(X)
    assert ours.eigenvalues_.shape == ref.eigenvalues_.shape == (2,)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-10)


def test_arpack_choice_of_sklearn_gives_the_same_answer():
    # scikit-learn picks ARPACK for n > 200 and n_components < 10; still the same eigenpairs.
    X = StandardScaler().fit_transform(load_iris().data)
    X = np.vstack([X, X[:80] * 1.01])
    ours = KernelPCA(n_components=3, kernel="rbf", gamma=0.3).fit(X)
    ref = decomposition.KernelPCA(n_components=3, kernel="rbf", gamma=0.3).fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-9)
    np.testing.assert_allclose(
        aligned(ours.eigenvectors_, ref.eigenvectors_), ref.eigenvectors_, atol=1e-8
    )


@pytest.mark.parametrize("kernel", ["rbf", "poly", "cosine"])
def test_large_kernel_few_components_matches_sklearn_arpack(rng, kernel):
    # n > 256 with few components takes our block Krylov path (and scikit-learn's ARPACK).
    centres = rng.normal(scale=3.0, size=(6, 8))
    X = centres[rng.integers(0, 6, 700)] + rng.normal(size=(700, 8))
    ours = KernelPCA(n_components=4, kernel=kernel)
    ref = decomposition.KernelPCA(n_components=4, kernel=kernel)
    z, zr = ours.fit_transform(X), ref.fit_transform(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-9)
    np.testing.assert_allclose(aligned(z, zr), zr, atol=1e-8 * np.abs(zr).max())


def test_bad_input_raises_clear_errors():
    X = data()
    with pytest.raises(NotFittedError):
        KernelPCA().transform(X)
    with pytest.raises(ValueError, match="unknown kernel"):
        KernelPCA(kernel="laplacian").fit(X)
    with pytest.raises(TypeError):
        KernelPCA(kernel=lambda a, b: a @ b.T).fit(X)
    with pytest.raises(ValueError, match="n_components"):
        KernelPCA(n_components=500).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        KernelPCA().fit(np.array([[1.0, np.inf], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="empty"):
        KernelPCA().fit(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="features"):
        KernelPCA(n_components=2).fit(X).transform(X[:, :3])


def test_clone_pickle_save(tmp_path):
    X = data()
    est = KernelPCA(n_components=3, kernel="rbf", gamma=0.1)
    assert clone(est).get_params() == est.get_params()
    est.fit(X)
    assert est.gamma_ == 0.1
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.transform(X), est.transform(X))
    est.save(tmp_path / "kpca.bin")
    np.testing.assert_array_equal(
        KernelPCA.load(tmp_path / "kpca.bin").eigenvalues_, est.eigenvalues_
    )
