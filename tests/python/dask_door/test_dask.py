"""rustyml.dask on a local distributed cluster: the same numbers as an in-memory fit
(within the rounding of the reduction, derived per test), and the same bits whatever the
number of workers, for a fixed chunking."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
sklearn = pytest.importorskip("sklearn")

from rustyml import dask as rd

EPS = np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        worker_class=distributed.Nanny,
    )
    with distributed.Client(cluster, timeout="60s") as c:
        c.wait_for_workers(2, timeout=120)
        yield c
    cluster.close(timeout=60)


def _data(n=24_000, d=6, chunk=5_000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.arange(1, d + 1) + 3.0
    y = X @ rng.standard_normal(d) + rng.standard_normal(n) + 2.0
    return X, y, da.from_array(X, chunks=(chunk, d)), da.from_array(y, chunks=chunk)


def _fit_everywhere(make, *args):
    """The same fit on the cluster (two workers) and in this process (one thread)."""
    on_cluster = make().fit(*args)
    with dask.config.set(scheduler="synchronous"):
        here = make().fit(*args)
    return on_cluster, here


def _same_bits(a, b, names):
    for name in names:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_standard_scaler(client):
    X, _, Xd, _ = _data()
    from sklearn.preprocessing import StandardScaler

    ours, here = _fit_everywhere(rd.StandardScaler, Xd)
    _same_bits(ours, here, ["mean_", "var_", "scale_"])
    stock = StandardScaler().fit(X)
    # Means: n terms summed in two orders, within n * eps relative of the largest term.
    np.testing.assert_allclose(ours.mean_, stock.mean_, atol=X.shape[0] * EPS * np.abs(X).max())
    # Two-pass variances: n * eps relative to the second moment about the mean's rounding.
    np.testing.assert_allclose(ours.var_, stock.var_, rtol=X.shape[0] * EPS * 10)
    out = ours.transform(Xd)
    assert out.chunks == Xd.chunks and out.dtype == np.float64
    np.testing.assert_allclose(out.compute(), stock.transform(X), atol=1e-9)


def test_standard_scaler_constant_columns_scale_one_like_scikit_learn():
    from sklearn.preprocessing import StandardScaler

    X = np.column_stack([np.full(3_000, 0.1), np.full(3_000, 1e6), np.arange(3_000.0)])
    with dask.config.set(scheduler="synchronous"):
        ours = rd.StandardScaler().fit(da.from_array(X, chunks=(700, 3)))
    stock = StandardScaler().fit(X)
    np.testing.assert_array_equal(ours.scale_[:2], [1.0, 1.0])
    np.testing.assert_array_equal(ours.scale_[:2], stock.scale_[:2])


def test_linear_regression(client):
    X, y, Xd, yd = _data()
    from sklearn.linear_model import LinearRegression

    ours, here = _fit_everywhere(rd.LinearRegression, Xd, yd)
    _same_bits(ours, here, ["coef_", "intercept_"])
    stock = LinearRegression().fit(X, y)
    # Least squares solved two ways: each within about d * cond(X) * eps of the solution.
    cond = stock.singular_[0] / stock.singular_[-1]
    bound = 10 * X.shape[1] * cond * EPS
    err = np.linalg.norm(ours.coef_ - stock.coef_) / np.linalg.norm(stock.coef_)
    assert err <= bound, (err, bound)
    pred = ours.predict(Xd)
    assert pred.chunks == yd.chunks
    np.testing.assert_allclose(pred.compute(), stock.predict(X), rtol=bound, atol=bound)


def test_linear_regression_refuses_rank_deficient_data():
    X, y, _, _ = _data(n=2_000)
    X[:, 2] = X[:, 0]
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="rank"):
        rd.LinearRegression().fit(da.from_array(X, chunks=(500, 6)), y)


def test_pca(client):
    X, _, Xd, _ = _data()
    from sklearn.decomposition import PCA

    ours, here = _fit_everywhere(lambda: rd.PCA(n_components=3), Xd)
    _same_bits(ours, here, ["components_", "explained_variance_", "mean_"])
    stock = PCA(n_components=3, svd_solver="covariance_eigh").fit(X)
    ev = stock.explained_variance_
    # Eigenvectors of two roundings of one covariance: error ~ n eps |C| / gap.
    gap = np.min(np.abs(np.diff(np.r_[ev, PCA().fit(X).explained_variance_[3]])))
    bound = 100 * X.shape[0] * EPS * ev[0] / gap
    np.testing.assert_allclose(ours.explained_variance_, ev, rtol=bound)
    np.testing.assert_allclose(ours.components_, stock.components_, atol=bound)
    out = ours.transform(Xd)
    assert out.chunks[0] == Xd.chunks[0] and out.shape == (X.shape[0], 3)


def test_kmeans(client):
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(30_000, n_features=3, centers=5, random_state=0)
    Xd = da.from_array(X, chunks=(7_000, 3))
    init = X[[0, 5000, 10000, 15000, 20000]]
    ours, here = _fit_everywhere(lambda: rd.KMeans(5, init=init, tol=0.0), Xd)
    _same_bits(ours, here, ["cluster_centers_", "inertia_", "n_iter_"])
    # tol=0: both iterate until the assignment is stable; each center is then the mean of
    # the same points, summed in another order.
    stock = KMeans(5, init=init, n_init=1, tol=0.0).fit(X)
    bound = X.shape[0] * EPS * np.abs(X).max()
    np.testing.assert_allclose(ours.cluster_centers_, stock.cluster_centers_, atol=bound)
    labels = ours.predict(Xd)
    assert labels.chunks[0] == Xd.chunks[0]
    np.testing.assert_array_equal(labels.compute(), stock.labels_)


def test_kmeans_plus_plus_start_is_seeded(client):
    _, _, Xd, _ = _data(n=12_000)
    a = rd.KMeans(4, random_state=3).fit(Xd)
    b = rd.KMeans(4, random_state=3).fit(Xd)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.inertia_ > 0


def test_unfitted_and_mismatched_inputs_are_clear_errors():
    from rustyml.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        rd.PCA().transform(np.zeros((3, 2)))
    X, y, _, _ = _data(n=1_000)
    with pytest.raises(ValueError, match="rows"):
        rd.LinearRegression().fit(X, y[:10])
    with dask.config.set(scheduler="synchronous"):
        model = rd.StandardScaler().fit(X)
    with pytest.raises(ValueError, match="features"):
        model.transform(X[:, :3])


def test_fitted_estimators_pickle_and_predict_the_same_bits():
    import pickle

    _, _, Xd, yd = _data(n=6_000, chunk=2_000)
    with dask.config.set(scheduler="synchronous"):
        for model, args in (
            (rd.StandardScaler(), (Xd,)),
            (rd.LinearRegression(), (Xd, yd)),
            (rd.PCA(n_components=2), (Xd,)),
            (rd.KMeans(3, random_state=0), (Xd,)),
        ):
            model.fit(*args)
            again = pickle.loads(pickle.dumps(model))
            out = model.predict(Xd) if hasattr(model, "predict") else model.transform(Xd)
            out_again = again.predict(Xd) if hasattr(again, "predict") else again.transform(Xd)
            np.testing.assert_array_equal(out.compute(), out_again.compute())


def test_min_max_and_max_abs_scalers_are_scikit_learns_bits(client):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler

    X, _, Xd, _ = _data()
    X[:, 1] = 4.0  # a constant column: scale 1, as scikit-learn gives it
    Xd = da.from_array(X, chunks=(5_000, X.shape[1]))
    # Extremes are exact (no rounding), and the maps are the same operations in the same
    # order, so the numbers are scikit-learn's exactly.
    for ours, stock, names in (
        (
            rd.MinMaxScaler(feature_range=(-1, 2)),
            MinMaxScaler(feature_range=(-1, 2)),
            ["data_min_", "data_max_", "data_range_", "scale_", "min_"],
        ),
        (rd.MaxAbsScaler(), MaxAbsScaler(), ["max_abs_", "scale_"]),
    ):
        out = ours.fit_transform(Xd)
        want = stock.fit_transform(X)
        _same_bits(ours, stock, names)
        assert out.chunks == Xd.chunks and out.dtype == np.float64
        np.testing.assert_array_equal(out.compute(), want)
    with pytest.raises(ValueError, match="feature range"):
        rd.MinMaxScaler(feature_range=(1, 0)).fit(Xd)


def _classes(n=24_000, d=5, k=3, chunk=5_000, seed=1, separation=1.5):
    """k Gaussian classes sharing one correlated spread, unequal sizes, labels not 0..k-1."""
    rng = np.random.default_rng(seed)
    y = rng.choice(np.arange(k) * 10 + 7, size=n, p=np.arange(1, k + 1) / (k * (k + 1) / 2))
    spread = rng.standard_normal((d, d)) / np.sqrt(d) + np.eye(d)
    centers = rng.standard_normal((k, d)) * separation
    X = rng.standard_normal((n, d)) @ spread + centers[np.searchsorted(np.unique(y), y)] + 1.0
    return X, y, da.from_array(X, chunks=(chunk, d)), da.from_array(y, chunks=chunk)


def _aligned(a, b):
    """``a``'s columns with the signs that match ``b``'s (a direction's sign is arbitrary)."""
    return a * np.sign(np.sum(a * b, axis=0))


@pytest.mark.parametrize("solver", ["svd", "eigen"])
def test_lda(client, solver):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as Stock

    X, y, Xd, yd = _classes()
    ours, here = _fit_everywhere(lambda: rd.LinearDiscriminantAnalysis(solver=solver), Xd, yd)
    _same_bits(ours, here, ["coef_", "intercept_", "scalings_", "means_"])
    stock = Stock(solver=solver).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, stock.classes_)
    np.testing.assert_array_equal(ours.priors_, stock.priors_)
    # Class means: n terms summed in another order, within n eps of the largest |x|.
    np.testing.assert_allclose(ours.means_, stock.means_, atol=X.shape[0] * EPS * np.abs(X).max())
    # The discriminant is a solve with the within-class covariance: the statistics' rounding
    # (n eps relative, from the order of the sums) and the solver's (eps relative, through
    # the scatter rather than the data) are amplified at most by its condition number.
    cov = np.cov((X - stock.means_[np.searchsorted(stock.classes_, y)]).T, bias=True)
    bound = 10 * X.shape[0] * EPS * np.linalg.cond(cov)
    for name in ("coef_", "intercept_"):
        a, b = getattr(ours, name), getattr(stock, name)
        assert np.linalg.norm(a - b) <= bound * np.linalg.norm(b), name
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, stock.explained_variance_ratio_, rtol=bound
    )
    out = ours.transform(Xd)
    assert out.chunks[0] == Xd.chunks[0] and out.dtype == np.float64
    want = stock.transform(X)
    got = _aligned(out.compute(), want)
    assert np.abs(got - want).max() <= bound * np.abs(want).max()
    pred = ours.predict(Xd)
    assert pred.chunks == yd.chunks and pred.dtype == yd.dtype
    # Labels agree except where two classes' scores tie within the bound.
    scores = stock.decision_function(X)
    top2 = np.sort(scores, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > bound * np.abs(scores).max()
    np.testing.assert_array_equal(pred.compute()[clear], stock.predict(X)[clear])
    np.testing.assert_allclose(ours.predict_proba(Xd).compute(), stock.predict_proba(X), atol=bound)
    assert abs(ours.score(Xd, yd) - stock.score(X, y)) <= (~clear).sum() / len(y)


def test_lda_binary_and_eigen_shrinkage():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as Stock

    X, y, Xd, yd = _classes(n=6_000, k=2, chunk=1_500)
    with dask.config.set(scheduler="synchronous"):
        ours = rd.LinearDiscriminantAnalysis(solver="eigen", shrinkage=0.3).fit(Xd, yd)
        binary = rd.LinearDiscriminantAnalysis().fit(Xd, yd)
    stock = Stock(solver="eigen", shrinkage=0.3).fit(X, y)
    cov = np.cov(X.T, bias=True)
    bound = 10 * X.shape[0] * EPS * np.linalg.cond(cov)
    assert ours.coef_.shape == (1, X.shape[1])
    np.testing.assert_allclose(ours.coef_, stock.coef_, rtol=bound, atol=bound)
    np.testing.assert_allclose(ours.intercept_, stock.intercept_, rtol=bound, atol=bound)
    assert binary.decision_function(Xd).shape == (len(y),)
    with pytest.raises(ValueError, match="shrinkage"):
        rd.LinearDiscriminantAnalysis(shrinkage=0.1).fit(Xd, yd)


def _logistic_objective(X, codes, k, C, coef, intercept):
    """scikit-learn's objective over n (mean log-loss + |W|^2 / (2 C n)), its gradient and
    Hessian, in NumPy float64: the oracle."""
    n, d = X.shape
    Xt = np.column_stack([X, np.ones(n)])
    W = np.column_stack([coef, intercept])  # n_out x (d + 1)
    z = Xt @ W.T
    if k == 2:
        p = 1.0 / (1.0 + np.exp(-z[:, 0]))
        f = np.mean(np.logaddexp(0.0, z[:, 0]) - codes * z[:, 0])
        g = ((p - codes) @ Xt / n)[None, :]
        H = (Xt * (p * (1 - p))[:, None]).T @ Xt / n
    else:
        z = z - z.max(axis=1, keepdims=True)
        P = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        f = np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(n), codes])
        R = P - np.eye(k)[codes]
        g = R.T @ Xt / n
        H = np.zeros((k * (d + 1), k * (d + 1)))
        for a in range(k):
            for b in range(k):
                w = P[:, a] * ((a == b) - P[:, b])
                H[a * (d + 1) : (a + 1) * (d + 1), b * (d + 1) : (b + 1) * (d + 1)] = (
                    (Xt * w[:, None]).T @ Xt / n
                )
    penal = np.zeros(W.shape)
    penal[:, :d] = 1.0
    g = g + W * penal / (C * n)
    H = H + np.diag(penal.ravel() / (C * n))
    return f + np.sum((W * penal) ** 2) / (2 * C * n), g.ravel(), H


@pytest.mark.parametrize("k", [2, 3])
def test_logistic_regression(client, k):
    from sklearn.linear_model import LogisticRegression as Stock

    # overlapping classes: a well-conditioned optimum, so the bound below is tight
    X, y, Xd, yd = _classes(n=12_000, k=k, chunk=4_000, separation=0.3)
    make = lambda: rd.LogisticRegression(C=0.1, tol=1e-9, max_iter=500)
    ours, here = _fit_everywhere(make, Xd, yd)
    _same_bits(ours, here, ["coef_", "intercept_", "n_iter_"])
    stock = Stock(C=0.1, tol=1e-9, max_iter=500).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, stock.classes_)
    codes = np.searchsorted(stock.classes_, y)
    n_out = 1 if k == 2 else k
    # The objective is strongly convex with modulus mu (the Hessian's least eigenvalue, off
    # the multinomial's null direction: one constant added to every intercept). Each fit
    # stopped where its gradient g is small, so it is within |g| / mu of the optimum, and
    # the two within the sum. The Hessian barely moves over that distance; mu is halved to
    # cover it. The gradients come from the oracle, so the bound includes whatever rounding
    # the chunked sums and the stopping rules left.
    _, g_ours, H = _logistic_objective(X, codes, k, 0.1, ours.coef_, ours.intercept_)
    _, g_stock, _ = _logistic_objective(X, codes, k, 0.1, stock.coef_, stock.intercept_)
    eig = np.linalg.eigvalsh(H)
    mu = eig[0] if n_out == 1 else eig[1]
    bound = (np.linalg.norm(g_ours) + np.linalg.norm(g_stock)) / (mu / 2)
    shift = lambda b: b - b.mean() if n_out > 1 else b
    diff = np.concatenate(
        [(ours.coef_ - stock.coef_).ravel(), shift(ours.intercept_) - shift(stock.intercept_)]
    )
    assert np.linalg.norm(diff) <= bound, (np.linalg.norm(diff), bound)
    # the comparison means something (the multinomial's modulus is only the penalty's along
    # the directions that shift every class's coefficients alike, so its bound is wider)
    assert bound < 1e-3 * np.linalg.norm(np.r_[stock.coef_.ravel(), stock.intercept_])
    # Block-wise outputs keep the chunks and dtypes; probabilities agree within the
    # coefficients' bound times the largest |x| (the scores' sensitivity).
    proba = ours.predict_proba(Xd)
    assert proba.chunks[0] == Xd.chunks[0] and proba.dtype == np.float64
    xmax = np.abs(X).max() * np.sqrt(X.shape[1] + 1)
    np.testing.assert_allclose(proba.compute(), stock.predict_proba(X), atol=bound * xmax)
    pred = ours.predict(Xd)
    assert pred.chunks == yd.chunks and pred.dtype == yd.dtype
    dec = stock.decision_function(X)
    margin = np.abs(dec) if k == 2 else np.diff(np.sort(dec, axis=1)[:, -2:], axis=1)[:, 0]
    clear = margin > 2 * bound * xmax
    np.testing.assert_array_equal(pred.compute()[clear], stock.predict(X)[clear])
    assert abs(ours.score(Xd, yd) - stock.score(X, y)) <= (~clear).sum() / len(y)


def test_logistic_regression_matches_the_single_process_rustyml_fit():
    from rustyml.machine_learning import LogisticRegression as Single

    X, y, Xd, yd = _classes(n=8_000, k=2, chunk=3_000)
    with dask.config.set(scheduler="synchronous"):
        ours = rd.LogisticRegression().fit(Xd, yd)  # scikit-learn's defaults, tol 1e-4
    single = Single().fit(X, y)
    codes = np.searchsorted(ours.classes_, y)
    # Same minimiser, same start and stopping rule; only the sums' order differs. Both stop
    # with max|g| <= tol, within |g| / mu of the optimum (see test_logistic_regression).
    _, g_a, H = _logistic_objective(X, codes, 2, 1.0, ours.coef_, ours.intercept_)
    _, g_b, _ = _logistic_objective(X, codes, 2, 1.0, single.coef_, single.intercept_)
    bound = (np.linalg.norm(g_a) + np.linalg.norm(g_b)) / (np.linalg.eigvalsh(H)[0] / 2)
    diff = np.r_[(ours.coef_ - single.coef_).ravel(), ours.intercept_ - single.intercept_]
    assert np.linalg.norm(diff) <= bound
    assert ours.n_iter_[0] >= 1 and ours.converged_


def _network(layers_list, optimizer, seed=5):
    from rustyml.neural_network import Sequential

    model = Sequential(layers_list, seed=seed)
    model.compile(optimizer=optimizer, loss="mse")
    return model


def _mlp():
    from rustyml.neural_network import layers, optimizers

    return _network(
        [layers.Dense(16, activation="tanh", input_shape=(4,)), layers.Dense(2)],
        optimizers.Adam(learning_rate=0.01),
    )


def _regression_rows(n=1_000, d=4, o=2, seed=2):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = (x @ rng.standard_normal((d, o)) + 0.1 * rng.standard_normal((n, o))).astype(np.float32)
    return x, y


def test_data_parallel_with_one_shard_is_the_single_process_fit_bit_for_bit():
    import pickle

    x, y = _regression_rows()
    model = _mlp()
    model.predict(x[:1])  # build, so the copy starts from the same weights
    single = pickle.loads(pickle.dumps(model))
    with dask.config.set(scheduler="synchronous"):
        hist = rd.DataParallelSequential(model, n_shards=1).fit(
            da.from_array(x, chunks=300), da.from_array(y, chunks=300), epochs=2, batch_size=64
        )
    ref = single.fit(x, y, epochs=2, batch_size=64, shuffle=False, verbose=0)
    # One shard's gradient is the batch's own (share 1), and the same optimizer applies it.
    for a, b in zip(model.get_weights(), single.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert hist.history["loss"] == ref.history["loss"]


def test_data_parallel_is_the_same_bits_on_one_and_two_workers(client):
    import pickle

    x, y = _regression_rows(n=600)
    xd, yd = da.from_array(x, chunks=250), da.from_array(y, chunks=250)
    on_cluster = _mlp()
    on_cluster.predict(x[:1])
    here = pickle.loads(pickle.dumps(on_cluster))
    rd.DataParallelSequential(on_cluster, n_shards=3).fit(xd, yd, epochs=2, batch_size=50)
    with dask.config.set(scheduler="synchronous"):
        rd.DataParallelSequential(here, n_shards=3).fit(xd, yd, epochs=2, batch_size=50)
    for a, b in zip(on_cluster.get_weights(), here.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_data_parallel_linear_model_within_the_summation_bound():
    """A linear layer, squared error and plain SGD: the shards' summed gradient differs from
    the whole batch's only by rounding, and for a step size below 2 / L (L the batch
    loss's largest curvature) each SGD step is non-expansive, so the differences add up
    without growing. The bound is that sum, from the single-process trajectory."""
    import pickle

    from rustyml.neural_network import layers, optimizers

    u = np.finfo(np.float32).eps / 2
    x, y = _regression_rows(n=700, d=4, o=2)
    lr, B, epochs = 0.05, 64, 2
    model = _network([layers.Dense(2, input_shape=(4,))], optimizers.SGD(learning_rate=lr))
    model.predict(x[:1])
    single = pickle.loads(pickle.dumps(model))
    with dask.config.set(scheduler="synchronous"):
        rd.DataParallelSequential(model, n_shards=3).fit(
            da.from_array(x, chunks=200), da.from_array(y, chunks=200), epochs=epochs, batch_size=B
        )
    xs, ys = x.astype(np.float64), y.astype(np.float64)
    d, o = 4, 2
    bound = 0.0
    for _ in range(epochs):
        for start in range(0, len(x), B):
            xb, yb = xs[start : start + B], ys[start : start + B]
            m = len(xb)
            xt = np.column_stack([xb, np.ones(m)])
            curvature = 2.0 / (m * o) * np.linalg.eigvalsh(xt.T @ xt)[-1]
            assert lr <= 2.0 / curvature  # the non-expansive regime the bound relies on
            W, b = (w.astype(np.float64) for w in single.get_weights())
            g_abs = 2.0 / (m * o) * (np.abs(xb) @ np.abs(W) + np.abs(b) + np.abs(yb))
            # Each computation is within (m + d + 4) u of the exact gradient: the m-term sums
            # of the backward product, the d-term forward sums, the residual, the scalings.
            err = 2 * (m + d + 4) * u
            e_w, e_b = err * (np.abs(xb).T @ g_abs), err * g_abs.sum(axis=0)
            grad = 2.0 / (m * o) * (xt.T @ (xt @ np.vstack([W, b]) - yb))
            rounding = 2 * u * (np.abs(np.vstack([W, b])) + 2 * lr * np.abs(grad))
            bound += lr * np.sqrt(np.sum(e_w**2) + np.sum(e_b**2)) + np.linalg.norm(rounding)
            single.train_on_batch(x[start : start + B], y[start : start + B])
    diff = np.sqrt(
        sum(
            np.sum((a.astype(np.float64) - b.astype(np.float64)) ** 2)
            for a, b in zip(model.get_weights(), single.get_weights())
        )
    )
    assert diff <= bound, (diff, bound)
    assert bound < 1e-3 * np.linalg.norm(single.get_weights()[0])  # a meaningful bound


def test_data_parallel_refuses_what_it_cannot_do():
    x, y = _regression_rows(n=100)
    with pytest.raises(ValueError, match="shuffle"):
        rd.DataParallelSequential(_mlp()).fit(x, y, shuffle=True)
    with pytest.raises(ValueError, match="samples"):
        rd.DataParallelSequential(_mlp()).fit(x, y[:50])
    with pytest.raises(ValueError, match="n_shards"):
        rd.DataParallelSequential(_mlp(), n_shards=0).fit(x, y)


def test_sequential_gradients_misfits_are_clear_errors_that_change_nothing():
    x, y = _regression_rows(n=10)
    model = _mlp()
    model.predict(x[:1])
    before = model.get_weights()
    with pytest.raises(ValueError, match="no gradients yet"):
        model.apply_gradients([np.zeros(64), np.zeros(16), np.zeros(32), np.zeros(2)])
    loss, grads = model.compute_gradients(x, y)
    assert np.isfinite(loss) and [g.size for g in grads] == [64, 16, 32, 2]
    with pytest.raises(ValueError, match="sizes"):
        model.apply_gradients(grads[:-1])
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_nearest_center_scan_is_numpys_argmin_of_exact_distances():
    from rustyml.math.distance import nearest

    rng = np.random.default_rng(4)
    x, centers = rng.standard_normal((5_000, 3)), rng.standard_normal((6, 3))
    exact = ((x[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    labels, d2 = nearest(x, centers)
    # Labels agree wherever the two nearest centers are not tied within the distances'
    # rounding (a few eps times the squared norms).
    top2 = np.sort(exact, axis=1)[:, :2]
    scale = (x**2).sum(axis=1) + (centers**2).sum(axis=1).max()
    clear = top2[:, 1] - top2[:, 0] > 64 * EPS * scale
    np.testing.assert_array_equal(labels[clear], np.argmin(exact, axis=1)[clear])
    np.testing.assert_allclose(d2, exact[np.arange(len(x)), labels], atol=64 * EPS * scale.max())
