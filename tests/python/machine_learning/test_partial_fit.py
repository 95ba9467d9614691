"""``partial_fit`` with scikit-learn's semantics: KMeans against ``MiniBatchKMeans``, PCA
against ``IncrementalPCA``, the MLPs against their own ``fit`` and scikit-learn's errors,
and the protocol ``dask_ml.wrappers.Incremental`` drives (a copy of the estimator fed the
blocks of a dask array in turn)."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.cluster import MiniBatchKMeans
from sklearn.decomposition import IncrementalPCA

from rustyml.machine_learning import PCA, KMeans
from rustyml.neural_network import MLPClassifier, MLPRegressor
from rustyml.utils import StandardScaler

EPS = np.finfo(np.float64).eps


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(c, 1.0, size=(200, 4)) for c in (0.0, 4.0, 9.0)])
    rng.shuffle(x)
    return x


def test_kmeans_partial_fit_follows_minibatch_kmeans(blobs):
    init = blobs[:3].copy()
    ours = KMeans(3, init=init)
    theirs = MiniBatchKMeans(3, init=init, n_init=1, reassignment_ratio=0.0)
    steps = 0
    for i in range(0, len(blobs), 50):
        ours.partial_fit(blobs[i : i + 50])
        theirs.partial_fit(blobs[i : i + 50])
        steps += 1
        # same labels every step, so the same sums: each step rounds a center once per
        # multiply, add and scale; the centers agree to that rounding, accumulated per step
        np.testing.assert_array_equal(ours.labels_, theirs.labels_)
        scale = np.abs(theirs.cluster_centers_).max()
        np.testing.assert_allclose(
            ours.cluster_centers_, theirs.cluster_centers_, rtol=0, atol=8 * steps * EPS * scale
        )
    assert ours.n_steps_ == theirs.n_steps_ == steps
    # the batch inertia: 50 squared distances summed in another order
    assert ours.inertia_ == pytest.approx(theirs.inertia_, rel=50 * EPS * 4)
    np.testing.assert_array_equal(ours.predict(blobs), theirs.predict(blobs))


def test_kmeans_partial_fit_seeds_from_its_init_and_refuses_bad_batches(blobs):
    a = KMeans(3, random_state=5).partial_fit(blobs[:60])
    b = KMeans(3, random_state=5).partial_fit(blobs[:60])
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    before = a.cluster_centers_.copy()
    with pytest.raises(ValueError, match="features"):
        a.partial_fit(blobs[:10, :3])
    np.testing.assert_array_equal(a.cluster_centers_, before)
    with pytest.raises(ValueError, match="n_clusters"):
        KMeans(3).partial_fit(blobs[:2])


def _separated(rng, n=600, scales=(9.0, 5.0, 3.0, 1.5, 0.7, 0.2)):
    q, _ = np.linalg.qr(rng.normal(size=(len(scales), len(scales))))
    return rng.normal(size=(n, len(scales))) * np.array(scales) @ q + 3.0


def test_pca_partial_fit_follows_incremental_pca():
    x = _separated(np.random.default_rng(1))
    ours, theirs = PCA(3), IncrementalPCA(3)
    for i in range(0, len(x), 100):
        ours.partial_fit(x[i : i + 100])
        theirs.partial_fit(x[i : i + 100])
    # Two backward-stable SVDs of the same matrix: singular values agree to eps * ||M||
    # (times a modest dimension factor), singular vectors to that over the gap to the
    # neighbouring singular values (Wedin); errors carry over from batch to batch.
    s = theirs.singular_values_
    batches = len(x) // 100
    sv_tol = 10 * batches * EPS * s[0] * np.sqrt(x.shape[1])
    np.testing.assert_allclose(ours.singular_values_, s, rtol=0, atol=sv_tol)
    full = np.linalg.svd(x - x.mean(0), compute_uv=False)
    gap = np.min(np.abs(np.diff(full[:4])))
    np.testing.assert_allclose(ours.components_, theirs.components_, rtol=0, atol=sv_tol / gap * 10)
    np.testing.assert_allclose(ours.mean_, theirs.mean_, rtol=0, atol=8 * EPS * 3.0 * batches)
    np.testing.assert_allclose(ours.var_, theirs.var_, rtol=1e-13)
    assert ours.n_samples_seen_ == theirs.n_samples_seen_ == len(x)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, theirs.explained_variance_ratio_, rtol=1e-12
    )
    assert ours.noise_variance_ == pytest.approx(theirs.noise_variance_, rel=1e-12)


def test_pca_partial_fit_refuses_what_incremental_pca_refuses():
    x = _separated(np.random.default_rng(2), n=50)
    for est in (PCA(4), IncrementalPCA(4)):
        with pytest.raises(ValueError, match="less or equal to the batch number of samples"):
            est.partial_fit(x[:3])
    with pytest.raises(ValueError, match="int or None"):
        PCA(0.9).partial_fit(x)


@pytest.mark.parametrize("make", [KMeans, PCA])
def test_a_pickled_partial_fit_continues_with_the_same_bits(blobs, make):
    est = make(3, random_state=0) if make is KMeans else make(2)
    est.partial_fit(blobs[:100]).partial_fit(blobs[100:200])
    copy_ = pickle.loads(pickle.dumps(est))
    est.partial_fit(blobs[200:300])
    copy_.partial_fit(blobs[200:300])
    out = "cluster_centers_" if make is KMeans else "components_"
    np.testing.assert_array_equal(getattr(est, out), getattr(copy_, out))


def test_mlp_partial_fit_calls_give_fit_with_as_many_iterations():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(90, 4))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5)
    kw = {"hidden_layer_sizes": (6,), "random_state": 0, "batch_size": 32, "max_iter": 3}
    fitted = MLPClassifier(**kw).fit(x, y)
    stepped = MLPClassifier(**kw)
    for _ in range(3):
        stepped.partial_fit(x, y, classes=np.array([0, 1, 2]))
    assert stepped.loss_curve_ == fitted.loss_curve_
    assert stepped.n_iter_ == 3
    np.testing.assert_array_equal(stepped.predict_proba(x), fitted.predict_proba(x))
    r_fit = MLPRegressor(**kw).fit(x, x[:, 0])
    r_step = MLPRegressor(**kw)
    for _ in range(3):
        r_step.partial_fit(x, x[:, 0])
    np.testing.assert_array_equal(r_step.predict(x), r_fit.predict(x))


def test_mlp_classifier_partial_fit_errors_are_scikit_learns():
    from sklearn.neural_network import MLPClassifier as SkMLP

    rng = np.random.default_rng(4)
    x = rng.normal(size=(20, 3))
    y = np.arange(20) % 3

    def messages(make):
        out = []
        for misuse in (
            lambda e: e.partial_fit(x, y),
            lambda e: e.partial_fit(x, y, classes=[0, 1, 2]).partial_fit(x, y, classes=[0, 1]),
            lambda e: e.partial_fit(x, y, classes=[0, 1, 2]).partial_fit(x, y + 5),
        ):
            with pytest.raises(ValueError) as info:
                misuse(make())
            out.append(str(info.value))
        return out

    assert messages(MLPClassifier) == messages(SkMLP)


def _blocks_in_turn(est, X, y=None):
    """What ``dask_ml.wrappers.Incremental`` does with ``shuffle_blocks=False``: a copy of the
    estimator gets ``partial_fit`` on each block of ``X`` (and ``y``), in order, each
    block computed on its own."""
    est = copy.deepcopy(est)
    for i in range(X.numblocks[0]):
        xb = X.blocks[i].compute()
        if y is None:
            est.partial_fit(xb)
        else:
            est.partial_fit(xb, y.blocks[i].compute(), **({"classes": [0, 1]} if y.ndim else {}))
        est = copy.deepcopy(est)  # Incremental copies the model between blocks
    return est


def test_dask_blocks_drive_partial_fit_as_numpy_batches_do(blobs):
    da = pytest.importorskip("dask.array")
    X = da.from_array(blobs, chunks=(100, 4))
    y = da.from_array((blobs[:, 0] > 4).astype(int), chunks=100)
    cases = [
        (StandardScaler(), None, "mean_"),
        (KMeans(3, random_state=0), None, "cluster_centers_"),
        (PCA(2), None, "components_"),
        (MLPClassifier(hidden_layer_sizes=(4,), random_state=0, batch_size=50), y, "loss_curve_"),
    ]
    for est, target, attr in cases:
        by_blocks = _blocks_in_turn(est, X, target)
        direct = copy.deepcopy(est)
        for i in range(0, len(blobs), 100):
            if target is None:
                direct.partial_fit(blobs[i : i + 100])
            else:
                direct.partial_fit(
                    blobs[i : i + 100], (blobs[i : i + 100, 0] > 4).astype(int), classes=[0, 1]
                )
        np.testing.assert_array_equal(getattr(by_blocks, attr), getattr(direct, attr))


def test_dask_ml_incremental_drives_them_when_installed(blobs):
    wrappers = pytest.importorskip("dask_ml.wrappers")
    da = pytest.importorskip("dask.array")
    X = da.from_array(blobs, chunks=(100, 4))
    inc = wrappers.Incremental(KMeans(3, random_state=0), shuffle_blocks=False).fit(X)
    want = _blocks_in_turn(KMeans(3, random_state=0), X)
    np.testing.assert_array_equal(inc.estimator_.cluster_centers_, want.cluster_centers_)
