"""PCA / KernelPCA / t-SNE benchmarks, side by side with scikit-learn in one run.

    python -m pytest benches/python/test_bench_decomposition.py --benchmark-enable \
        --benchmark-group-by=group --benchmark-columns=min,median,ops

Targets: PCA 50k x 20 -> 8 fit+transform no slower than scikit-learn; PCA 200 x 4 ten times
faster. Compare medians within a group.
"""

import pytest
from sklearn import decomposition, manifold
from sklearn.datasets import load_digits

from rustyml.machine_learning import PCA, TSNE, KernelPCA

IMPLS = ["rustyml", "sklearn"]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape,k", [((50_000, 20), 8), ((200, 4), 2)])
def test_pca_fit_transform(benchmark, rng, impl, shape, k):
    X = rng.standard_normal(shape)
    cls = PCA if impl == "rustyml" else decomposition.PCA
    benchmark.group = f"PCA {shape[0]}x{shape[1]} -> {k} fit+transform"
    benchmark(lambda: cls(n_components=k).fit(X).transform(X))


@pytest.mark.parametrize("impl", IMPLS)
def test_kernel_pca_rbf(benchmark, rng, impl):
    X = rng.standard_normal((600, 10))
    cls = KernelPCA if impl == "rustyml" else decomposition.KernelPCA
    benchmark.group = "KernelPCA rbf 600x10 -> 5 fit_transform"
    benchmark.pedantic(
        lambda: cls(n_components=5, kernel="rbf").fit_transform(X), rounds=3, iterations=1
    )


@pytest.mark.parametrize("impl", IMPLS)
def test_tsne_digits(benchmark, impl):
    X = load_digits().data[:1000]
    cls = TSNE if impl == "rustyml" else manifold.TSNE
    benchmark.group = "TSNE digits 1000 barnes_hut"
    benchmark.pedantic(lambda: cls(random_state=0).fit_transform(X), rounds=1, iterations=1)
