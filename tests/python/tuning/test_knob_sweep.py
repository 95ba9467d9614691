"""The tuning contract, swept: every knob of ``rustyml.tuning`` (each gate and the matmul
chunking knobs) at 0, 1 and its maximum leaves every model's results unchanged, bit for bit.
gemmkit's own knobs (``tuning.matmul.backend``) are left out: they pick gemmkit's blocking, and
gemmkit promises reproducibility for a fixed configuration of them, not across them."""

import numpy as np
import pytest

from rustyml import machine_learning as ml
from rustyml import tuning
from rustyml.math import distance


def _data():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(-1.5, 1, size=(40, 5)), rng.normal(1.5, 1, size=(40, 5))])
    return X, np.repeat([0, 1], 40)


def _results():
    """Outputs of every model that reads a knob, on one small problem (small, so forced
    parallel paths split it into many pieces)."""
    X, y = _data()
    out = {
        "tsne": ml.TSNE(perplexity=10, max_iter=250, random_state=0).fit_transform(X),
        "knn": ml.KNN(n_neighbors=5).fit(X, y).kneighbors(X)[0],
        "svc": ml.SVC().fit(X, y).decision_function(X),
        "kmeans": ml.KMeans(n_clusters=3, random_state=0).fit(X).transform(X),
        "meanshift": ml.MeanShift(bandwidth=2.0).fit(X).cluster_centers_,
        "dbscan": ml.DBSCAN(eps=1.0).fit_predict(X).astype(float),
        "pca": ml.PCA(n_components=3).fit_transform(X),
        "kpca": ml.KernelPCA(n_components=3, kernel="rbf").fit_transform(X),
        "lda": ml.LDA().fit(X, y).decision_function(X),
        "logreg": ml.LogisticRegression().fit(X, y).predict_proba(X),
        "iforest": ml.IsolationForest(random_state=0).fit(X).score_samples(X),
        "tree": ml.DecisionTree(random_state=0).fit(X, y).predict_proba(X),
        "pairwise": distance.pairwise(X, X[:17]),
    }
    return {k: np.ascontiguousarray(v, dtype=float).tobytes() for k, v in out.items()}


KNOBS = [(family, name) for family, name, _v, _d, _u in tuning.gates()]


def test_the_sweep_covers_the_chunking_knobs_and_the_gates():
    assert ("matmul", "chunk_elems") in KNOBS
    assert ("matmul", "cache_resident_max_bytes") in KNOBS
    assert len(KNOBS) >= 10


@pytest.mark.parametrize(("family", "name"), KNOBS, ids=lambda v: str(v))
def test_knob_at_zero_one_and_max_changes_no_bit(family, name, gate):
    reference = _results()
    module = getattr(tuning, family)
    for value in (0, 1, tuning.SERIAL):
        gate(module, name, value)
        got = _results()
        changed = [k for k in reference if got[k] != reference[k]]
        assert not changed, f"{family}.{name}={value} changed {changed}"
