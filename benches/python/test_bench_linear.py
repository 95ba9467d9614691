"""Linear classifiers side by side with scikit-learn in one run.

    python -m pytest benches/python/test_bench_linear.py --benchmark-enable \
        --benchmark-group-by=group --benchmark-columns=min,median,ops

Targets: LogisticRegression fit+predict no slower than scikit-learn on 50k x 20, and at least
10x faster on 200 x 4 (per-call overhead). Compare medians within a group.
"""

import warnings

import pytest
from sklearn import discriminant_analysis, linear_model, svm
from sklearn.datasets import make_classification

from rustyml import machine_learning as ml

IMPLS = {
    "logreg": (ml.LogisticRegression, linear_model.LogisticRegression),
    "linear_svc": (ml.LinearSVC, svm.LinearSVC),
    "svc_rbf": (ml.SVC, svm.SVC),
    "lda": (ml.LDA, discriminant_analysis.LinearDiscriminantAnalysis),
}

SHAPES = {
    "logreg": [(200, 4, 2), (200, 4, 3), (50_000, 20, 2), (50_000, 20, 5)],
    "linear_svc": [(200, 4, 2), (50_000, 20, 2)],
    "svc_rbf": [(200, 4, 2), (2_000, 20, 3)],
    "lda": [(200, 4, 3), (50_000, 20, 5)],
}

CASES = [(model, shape) for model, shapes in SHAPES.items() for shape in shapes]


def data(n, d, k):
    return make_classification(
        n_samples=n,
        n_features=d,
        n_informative=min(d, 4),
        n_redundant=0,
        n_classes=k,
        n_clusters_per_class=1,
        random_state=0,
    )


@pytest.mark.parametrize("impl", ["rustyml", "sklearn"])
@pytest.mark.parametrize("model,shape", CASES)
def test_fit_predict(benchmark, model, shape, impl):
    X, y = data(*shape)
    cls = IMPLS[model][0 if impl == "rustyml" else 1]
    benchmark.group = f"{model} fit+predict {shape[0]}x{shape[1]} k={shape[2]}"

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cls().fit(X, y).predict(X)

    rounds = 50 if shape[0] <= 200 else 5
    benchmark.pedantic(run, rounds=rounds, iterations=1, warmup_rounds=1)
