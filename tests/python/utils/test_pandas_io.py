"""pandas in, pandas out, with scikit-learn as the oracle: ``feature_names_in_`` from a
DataFrame's columns, reordered or missing columns refused with scikit-learn's error, names on
one side only warned about in its words, ``get_feature_names_out`` under its two naming
conventions, ``set_output(transform="pandas")`` through Pipeline and ColumnTransformer, and
missing values reported as NaN."""

import pickle
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
sklearn = pytest.importorskip("sklearn")

from sklearn import cluster as sk_cluster
from sklearn import decomposition as sk_decomposition
from sklearn import discriminant_analysis as sk_da
from sklearn import linear_model as sk_linear
from sklearn import manifold as sk_manifold
from sklearn import preprocessing as sk_pre
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline

import rustyml.machine_learning as ml
import rustyml.utils as ut
from rustyml.neural_network import MLPRegressor

TOL = 1e-8  # as test_pca.py: both solve the same well-conditioned eigenproblem in float64
COLUMNS = ["height", "width", "depth", "mass"]


def frame(n=120, seed=0, index_start=100):
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 4)) * np.array([4.0, 2.0, 1.0, 0.3])
    mix = np.array(
        [[1.0, 0.4, 0.0, 0.1], [0.2, 1.0, 0.5, 0.0], [0.0, 0.3, 1.0, 0.6], [0.5, 0.0, 0.2, 1.0]]
    )
    return pd.DataFrame(
        latent @ mix + 10.0,
        columns=COLUMNS,
        index=pd.RangeIndex(index_start, index_start + n),
    )


def labels(X):
    return (X["height"] > X["height"].median()).astype(int).to_numpy()


def _message(call):
    try:
        call()
    except ValueError as exc:
        return str(exc)
    raise AssertionError("no ValueError")


def _warnings(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


FITTED_ON_FRAMES = [
    lambda X, y: ml.LinearRegression().fit(X, y.astype(float)),
    lambda X, y: ml.LogisticRegression().fit(X, y),
    lambda X, y: ml.KNN().fit(X, y),
    lambda X, y: ml.DecisionTree(random_state=0).fit(X, y),
    lambda X, y: ml.SVC().fit(X, y),
    lambda X, y: ml.LinearSVC().fit(X, y),
    lambda X, y: ml.LDA().fit(X, y),
    lambda X, y: ml.KMeans(n_clusters=3, random_state=0).fit(X),
    lambda X, y: ml.IsolationForest(random_state=0).fit(X),
    lambda X, y: ml.PCA(n_components=2).fit(X),
    lambda X, y: ml.KernelPCA(n_components=2).fit(X),
    lambda X, y: ut.StandardScaler().fit(X),
    lambda X, y: ut.MinMaxScaler().fit(X),
    lambda X, y: ut.MaxAbsScaler().fit(X),
    lambda X, y: ut.RobustScaler().fit(X),
    lambda X, y: ut.Normalizer().fit(X),
]


def _apply(est):
    for method in ("predict", "transform"):
        if hasattr(est, method):
            return getattr(est, method)
    raise AssertionError(f"{type(est).__name__} neither predicts nor transforms")


@pytest.mark.parametrize("make", FITTED_ON_FRAMES)
def test_frames_set_feature_names_and_reordered_columns_are_refused_like_sklearn(make):
    X = frame()
    y = labels(X)
    est = make(X, y)
    oracle = sk_linear.LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(est.feature_names_in_, oracle.feature_names_in_)
    assert est.feature_names_in_.dtype == object
    assert est.n_features_in_ == 4
    apply = _apply(est)
    expected = apply(X)
    renamed = X.rename(columns={"mass": "colour"})
    for other in (X[COLUMNS[::-1]], X[COLUMNS[:3]], renamed, renamed[COLUMNS[:3][::-1]]):
        ours = _message(lambda other=other: apply(other))
        theirs = _message(lambda other=other: oracle.predict(other))
        assert ours == theirs
    # the same columns in the same order: the same answer as before, no warning
    assert _warnings(lambda: apply(X)) == []
    np.testing.assert_array_equal(apply(X), expected)


def test_reordered_columns_no_longer_change_predictions_silently():
    X = frame(200, seed=3)
    y = X.to_numpy() @ np.array([1.0, -2.0, 0.5, 3.0])
    model = ml.LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="same order as they were in fit"):
        model.predict(X[["width", "height", "depth", "mass"]])


def test_names_on_one_side_only_warn_in_sklearns_words():
    X = frame()
    y = labels(X)
    ours = ml.LogisticRegression().fit(X, y)
    theirs = sk_linear.LogisticRegression().fit(X, y)
    msg = _warnings(lambda: ours.predict(X.to_numpy()))
    assert msg == _warnings(lambda: theirs.predict(X.to_numpy()))
    assert len(msg) == 1
    ours = ml.LogisticRegression().fit(X.to_numpy(), y)
    theirs = sk_linear.LogisticRegression().fit(X.to_numpy(), y)
    msg = _warnings(lambda: ours.predict(X))
    assert msg == _warnings(lambda: theirs.predict(X))
    assert len(msg) == 1
    assert not hasattr(ours, "feature_names_in_")


def test_refit_without_names_drops_them_and_a_failed_fit_keeps_them():
    X = frame()
    scaler = ut.StandardScaler().fit(X)
    broken = X.copy()
    broken.iloc[5, 2] = np.nan
    broken.columns = ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="Input X contains NaN"):
        scaler.fit(broken)
    np.testing.assert_array_equal(scaler.feature_names_in_, COLUMNS)
    scaler.fit(X.to_numpy())
    assert not hasattr(scaler, "feature_names_in_")


def test_partial_fit_takes_names_from_its_first_batch_only():
    X = frame()
    scaler = ut.StandardScaler().partial_fit(X.iloc[:60])
    scaler.partial_fit(X.iloc[60:])
    np.testing.assert_array_equal(scaler.feature_names_in_, COLUMNS)
    with pytest.raises(ValueError, match="same order"):
        scaler.partial_fit(X[COLUMNS[::-1]])


def test_mixed_column_name_types_are_a_type_error_like_sklearn():
    X = frame()
    X.columns = ["a", "b", 2, 3]
    with pytest.raises(TypeError) as ours:
        ut.StandardScaler().fit(X)
    with pytest.raises(TypeError) as theirs:
        sk_pre.StandardScaler().fit(X)
    assert str(ours.value) == str(theirs.value)
    # names that are all non-strings are positions, not names
    X.columns = [0, 1, 2, 3]
    assert not hasattr(ut.StandardScaler().fit(X), "feature_names_in_")


@pytest.mark.parametrize(
    "fit",
    [
        lambda X: ut.StandardScaler().fit(X),
        lambda X: ml.PCA().fit(X),
        lambda X: ml.KMeans(n_clusters=2, random_state=0).fit(X),
        lambda X: ml.LogisticRegression().fit(X, np.arange(len(X)) % 2),
    ],
)
def test_missing_values_are_a_value_error_naming_nan(fit):
    X = frame()
    X.iloc[7, 1] = np.nan
    with pytest.raises(ValueError, match=r"^Input X contains NaN\."):
        fit(X)
    nullable = frame().astype("Float64")
    nullable.iloc[3, 0] = pd.NA
    with pytest.raises(ValueError, match=r"^Input X contains NaN\."):
        fit(nullable)


def test_missing_targets_are_named_as_y():
    X = frame()
    y = X["mass"].to_numpy().copy()
    y[4] = np.nan
    with pytest.raises(ValueError, match=r"^Input y contains NaN\."):
        ml.LinearRegression().fit(X, y)


def test_later_nan_input_is_named_too():
    X = frame()
    model = ml.KNN().fit(X, labels(X))
    X.iloc[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^Input X contains NaN\."):
        model.predict(X)


ONE_TO_ONE = [
    (ut.StandardScaler, sk_pre.StandardScaler),
    (ut.MinMaxScaler, sk_pre.MinMaxScaler),
    (ut.MaxAbsScaler, sk_pre.MaxAbsScaler),
    (ut.RobustScaler, sk_pre.RobustScaler),
    (ut.Normalizer, sk_pre.Normalizer),
]


@pytest.mark.parametrize(("ours", "theirs"), ONE_TO_ONE)
def test_one_to_one_transformers_keep_names_like_sklearn(ours, theirs):
    X = frame()
    for data in (X, X.to_numpy()):
        a, b = ours().fit(data), theirs().fit(data)
        np.testing.assert_array_equal(a.get_feature_names_out(), b.get_feature_names_out())
        names = list("pqrs")
        if hasattr(a, "feature_names_in_"):
            with pytest.raises(ValueError, match="input_features is not equal"):
                a.get_feature_names_out(names)
        else:
            np.testing.assert_array_equal(
                a.get_feature_names_out(names), b.get_feature_names_out(names)
            )
        with pytest.raises(ValueError, match="input_features should have length"):
            ours().fit(X.to_numpy()).get_feature_names_out(["p"])


PREFIXED = [
    (lambda: ml.PCA(n_components=3), lambda: sk_decomposition.PCA(n_components=3)),
    (
        lambda: ml.KernelPCA(n_components=2, kernel="rbf"),
        lambda: sk_decomposition.KernelPCA(n_components=2, kernel="rbf"),
    ),
    (
        lambda: ml.KMeans(n_clusters=3, random_state=0),
        lambda: sk_cluster.KMeans(n_clusters=3, random_state=0, n_init=1),
    ),
    (
        lambda: ml.TSNE(perplexity=10, max_iter=250, random_state=0),
        lambda: sk_manifold.TSNE(perplexity=10, max_iter=250, random_state=0),
    ),
]


@pytest.mark.parametrize(("ours", "theirs"), PREFIXED)
def test_new_features_are_named_after_the_class_like_sklearn(ours, theirs):
    X = frame(60)
    a, b = ours(), theirs()
    out = a.fit_transform(X)
    b.fit_transform(X)
    np.testing.assert_array_equal(a.get_feature_names_out(), b.get_feature_names_out())
    assert len(a.get_feature_names_out()) == out.shape[1]
    if hasattr(a, "transform"):
        assert len(a.fit(X).get_feature_names_out()) == a.transform(X).shape[1]


def test_lda_names_its_components_after_its_own_class():
    X = frame()
    y = np.arange(len(X)) % 3
    lda = ml.LDA().fit(X, y)
    oracle = sk_da.LinearDiscriminantAnalysis().fit(X, y)
    ours = lda.get_feature_names_out()
    assert list(ours) == [f"lda{i}" for i in range(lda.transform(X).shape[1])]
    assert len(ours) == len(oracle.get_feature_names_out())


def test_feature_names_out_needs_a_fit_and_a_transformer():
    from rustyml.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        ut.StandardScaler().get_feature_names_out()
    for est in (ml.LinearRegression(), ml.KNN(), ut.LabelEncoder(), MLPRegressor()):
        assert not hasattr(est, "get_feature_names_out")
        assert not hasattr(est, "set_output")


def test_pandas_pipeline_matches_sklearn():
    X = frame()
    ours = make_pipeline(ut.StandardScaler(), ml.PCA(n_components=2))
    theirs = make_pipeline(sk_pre.StandardScaler(), sk_decomposition.PCA(n_components=2))
    ours.set_output(transform="pandas")
    theirs.set_output(transform="pandas")
    a, b = ours.fit_transform(X), theirs.fit_transform(X)
    assert isinstance(a, pd.DataFrame)
    assert list(a.columns) == list(b.columns) == ["pca0", "pca1"]
    pd.testing.assert_index_equal(a.index, X.index)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=0, atol=TOL * np.abs(b).max().max())
    new = frame(30, seed=9, index_start=7)
    a, b = ours.transform(new), theirs.transform(new)
    pd.testing.assert_index_equal(a.index, new.index)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=0, atol=TOL * np.abs(b).max().max())
    with pytest.raises(ValueError, match="same order"):
        ours.transform(new[COLUMNS[::-1]])


def test_pandas_column_transformer_matches_sklearn():
    X = frame()
    X["site"] = np.where(np.arange(len(X)) % 2 == 0, "north", "south")

    def build(scaler, pca):
        return ColumnTransformer(
            [
                ("size", scaler(), ["height", "width"]),
                ("shape", pca(n_components=1), ["depth", "mass"]),
                ("where", sk_pre.OneHotEncoder(sparse_output=False), ["site"]),
            ]
        ).set_output(transform="pandas")

    ours = build(ut.StandardScaler, ml.PCA)
    theirs = build(sk_pre.StandardScaler, sk_decomposition.PCA)
    a, b = ours.fit_transform(X), theirs.fit_transform(X)
    assert list(a.columns) == list(b.columns)
    pd.testing.assert_index_equal(a.index, b.index)
    np.testing.assert_allclose(
        a.to_numpy(dtype=float),
        b.to_numpy(dtype=float),
        rtol=0,
        atol=TOL * np.abs(b.to_numpy(dtype=float)).max(),
    )
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())


def test_sklearn_global_output_setting_is_followed():
    X = frame()
    with sklearn.config_context(transform_output="pandas"):
        out = ut.MinMaxScaler().fit_transform(X)
        assert isinstance(out, pd.DataFrame)
        assert list(out.columns) == COLUMNS
        # an explicit "default" wins over the global setting, as in scikit-learn
        assert isinstance(
            ut.MinMaxScaler().set_output(transform="default").fit_transform(X), np.ndarray
        )
    assert isinstance(ut.MinMaxScaler().fit_transform(X), np.ndarray)


def test_set_output_choices():
    X = frame()
    scaler = ut.StandardScaler()
    assert scaler.set_output(transform="pandas") is scaler
    assert isinstance(scaler.fit_transform(X), pd.DataFrame)
    assert isinstance(scaler.set_output(transform=None).transform(X), pd.DataFrame)
    assert isinstance(scaler.set_output(transform="default").transform(X), np.ndarray)
    with pytest.raises(ValueError, match="output config must be"):
        scaler.set_output(transform="arrow")
    # from a NumPy input the columns are generated names and the index a fresh range
    out = ut.StandardScaler().set_output(transform="pandas").fit_transform(X.to_numpy())
    assert list(out.columns) == ["x0", "x1", "x2", "x3"]


def test_names_and_output_choice_survive_pickling_and_clone():
    X = frame()
    scaler = ut.StandardScaler().set_output(transform="pandas").fit(X)
    back = pickle.loads(pickle.dumps(scaler))
    np.testing.assert_array_equal(back.feature_names_in_, COLUMNS)
    pd.testing.assert_frame_equal(back.transform(X), scaler.transform(X))
    clone = sklearn.base.clone(scaler)
    assert isinstance(clone.fit_transform(X), pd.DataFrame)
