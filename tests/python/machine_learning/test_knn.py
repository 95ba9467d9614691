"""KNN against scikit-learn's KNeighborsClassifier (brute force)."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import KNN, DecisionTree

LOADERS = [load_iris, load_wine, load_breast_cancer, load_digits]


def _split(loader):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__[5:])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"weights": "distance"},
        {"metric": "manhattan"},
        {"metric": "minkowski", "p": 3},
        {"n_neighbors": 1},
        {"n_neighbors": 15, "weights": "distance", "metric": "minkowski", "p": 1.5},
    ],
    ids=str,
)
def test_predictions_match_sklearn_brute_force(loader, params):
    Xtr, Xte, ytr, yte = _split(loader)
    ours = KNN(**params).fit(Xtr, ytr)
    ref = KNeighborsClassifier(algorithm="brute", **params).fit(Xtr, ytr)
    np.testing.assert_array_equal(ours.predict(Xte), ref.predict(Xte))
    # vote fractions: sums of the same few weights in another order
    np.testing.assert_allclose(ours.predict_proba(Xte), ref.predict_proba(Xte), atol=1e-12)
    assert ours.score(Xte, yte) == pytest.approx(ref.score(Xte, yte))


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
def test_kneighbors_match_sklearn(metric):
    Xtr, Xte, ytr, _ = _split(load_digits)
    ours = KNN(n_neighbors=7, metric=metric).fit(Xtr, ytr)
    ref = KNeighborsClassifier(n_neighbors=7, algorithm="brute", metric=metric).fit(Xtr, ytr)
    d, i = ours.kneighbors(Xte)
    rd, ri = ref.kneighbors(Xte)
    assert i.dtype == np.int64
    # Product-form euclidean distances are exact to rounding relative to the norms (about
    # 1e-15 * 64 features * |x|^2 here); manhattan sums the same terms.
    np.testing.assert_allclose(d, rd, rtol=1e-9, atol=1e-9)
    # indices agree except where two training samples sit at the same distance
    assert np.mean(i == ri) > 0.999
    ties = i != ri
    np.testing.assert_allclose(d[ties], rd[ties], rtol=1e-9)
    # X=None: the training set, each sample excluded from its own list
    d0, i0 = ours.kneighbors()
    rd0, ri0 = ref.kneighbors()
    np.testing.assert_allclose(d0, rd0, rtol=1e-9, atol=1e-7)
    assert np.mean(i0 == ri0) > 0.999
    assert not np.any(i0 == np.arange(len(Xtr))[:, None])
    only = ours.kneighbors(Xte[:3], n_neighbors=2, return_distance=False)
    assert only.shape == (3, 2)


def test_equal_distances_keep_the_lower_index_first():
    X = np.array([[0.0], [2.0], [-2.0], [2.0], [5.0]])
    model = KNN(n_neighbors=4).fit(X, [0, 1, 1, 0, 1])
    d, i = model.kneighbors(np.array([[0.0]]))
    assert i.tolist() == [[0, 1, 2, 3]]
    assert d.tolist() == [[0.0, 2.0, 2.0, 2.0]]


def test_gates_never_change_the_result(gate):
    Xtr, Xte, ytr, _ = _split(load_digits)
    runs = []
    for value in (SERIAL, PARALLEL):
        gate(tuning.reduction, "scan_f64", value)
        gate(tuning.matmul, "cache_resident_max_bytes", value)
        gate(tuning.matmul, "chunk_elems", 64 * len(Xtr))
        for metric in ("euclidean", "manhattan"):
            d, i = KNN(n_neighbors=9, metric=metric).fit(Xtr, ytr).kneighbors(Xte)
            runs.append((d.tobytes(), i.tobytes()))
    assert runs[:2] == runs[2:]


def test_string_labels_conventions_and_persistence(tmp_path):
    X, y = load_iris(return_X_y=True)
    names = np.array(["a", "b", "c"])[y]
    model = KNN(n_neighbors=3, weights="distance").fit(X, names)
    assert list(model.classes_) == ["a", "b", "c"] and model.n_samples_fit_ == 150
    assert clone(model).get_params() == model.get_params()
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.predict(X), model.predict(X))
    model.save(tmp_path / "knn.bin")
    assert np.array_equal(KNN.load(tmp_path / "knn.bin").predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize(
    "kwargs,X,y,exc,match",
    [
        ({"n_neighbors": 5}, np.ones((3, 2)), [0, 1, 0], ValueError, "n_neighbors"),
        ({"n_neighbors": 0}, np.ones((3, 2)), [0, 1, 0], ValueError, "n_neighbors"),
        ({"metric": "canberra"}, np.ones((3, 2)), [0, 1, 0], ValueError, "unknown metric"),
        ({"metric": "minkowski", "p": 0.5}, np.ones((3, 2)), [0, 1, 0], ValueError, "p must"),
        ({"weights": "gauss"}, np.ones((3, 2)), [0, 1, 0], ValueError, "weights"),
        ({"n_neighbors": 1}, np.array([[np.inf, 1.0]]), [0], ValueError, "NaN or infinity"),
        ({"n_neighbors": 1}, np.ones((0, 2)), [], ValueError, "empty"),
        ({"n_neighbors": 1}, np.ones((2, 2)), [0], ValueError, "inconsistent"),
        ({"n_neighbors": 1}, np.ones((2, 2)), [0, np.nan], ValueError, "y contains NaN"),
    ],
)
def test_bad_input_is_refused(kwargs, X, y, exc, match):
    with pytest.raises(exc, match=match):
        KNN(**kwargs).fit(X, y)


def test_predict_before_fit_and_bad_queries():
    with pytest.raises(NotFittedError):
        KNN().predict(np.ones((1, 2)))
    model = KNN(n_neighbors=2).fit(np.arange(8.0).reshape(4, 2), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="features"):
        model.predict(np.ones((1, 3)))
    with pytest.raises(ValueError, match="n_neighbors"):
        model.kneighbors(np.ones((1, 2)), n_neighbors=5)
    with pytest.raises(ValueError, match="n_neighbors"):
        model.kneighbors(n_neighbors=4)  # only 3 others per training sample


@pytest.mark.parametrize(
    "labels",
    [
        np.array([3, 7, 7, 3, 9, 9]),
        # integral floats are class labels; non-integral ones are continuous (refused)
        np.array([4.0, -1.0, -1.0, 4.0, 2.0, 2.0], dtype=np.float32),
        np.array([True, False, False, True, True, True]),
        np.array([2**60, 5, 5, 2**60, 2**60 + 1, 2**60 + 1]),  # beyond float64's integers
        np.array(["x", "y", "y", "x", "z", "z"], dtype=object),
    ],
    ids=lambda a: str(a.dtype),
)
def test_labels_come_back_in_their_own_dtype(labels):
    X = np.array([[0.0], [10.0], [11.0], [1.0], [20.0], [21.0]])
    for model in (KNN(n_neighbors=1), DecisionTree()):
        model.fit(X, labels)
        pred = model.predict(X)
        assert pred.dtype == labels.dtype
        assert np.array_equal(pred, labels)
        assert np.array_equal(model.classes_, np.unique(labels))
