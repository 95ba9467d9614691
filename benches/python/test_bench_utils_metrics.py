"""utils / metrics benchmarks, side by side with scikit-learn in one run.

    python -m pytest benches/python/test_bench_utils_metrics.py --benchmark-enable \\
        --benchmark-group-by=group --benchmark-columns=min,median,ops

Each group pairs rustyml with scikit-learn on the same input; compare medians within a group.
Targets (issue 4): silhouette_score 12k x 8 >= 2x faster, StandardScaler().fit_transform
1M x 20 >= 1.5x faster, a metric on 100 labels >= 10x faster.
"""

import pytest
import rustyml.metrics as rm
import rustyml.utils as ru
import sklearn.metrics as sm
import sklearn.preprocessing as sp


@pytest.mark.parametrize("impl", ["rustyml", "sklearn"])
def test_silhouette_12k_x_8(benchmark, rng, impl):
    X = rng.normal(size=(12_000, 8))
    labels = rng.integers(0, 5, 12_000)
    benchmark.group = "silhouette_score 12000x8, 5 clusters"
    fn = rm.silhouette_score if impl == "rustyml" else sm.silhouette_score
    benchmark.pedantic(fn, args=(X, labels), rounds=3, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("impl", ["rustyml", "sklearn"])
def test_standard_scaler_1m_x_20(benchmark, rng, impl):
    X = rng.normal(size=(1_000_000, 20))
    benchmark.group = "StandardScaler().fit_transform 1000000x20"
    cls = ru.StandardScaler if impl == "rustyml" else sp.StandardScaler
    benchmark.pedantic(lambda: cls().fit_transform(X), rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("metric", ["accuracy_score", "f1_score", "adjusted_rand_score"])
@pytest.mark.parametrize("impl", ["rustyml", "sklearn"])
def test_metric_100_labels(benchmark, rng, metric, impl):
    t = rng.integers(0, 2, 100)
    p = rng.integers(0, 2, 100)
    benchmark.group = f"{metric} on 100 labels"
    fn = getattr(rm if impl == "rustyml" else sm, metric)
    benchmark(fn, t, p)
