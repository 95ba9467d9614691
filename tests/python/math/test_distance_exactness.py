"""Every product-based distance scan (pairwise, KNN's chunked scan, k-means) recomputes entries
the product form cannot resolve: near-duplicate rows far from the origin get exact distances.
Hand-derived: [1e8, 1e8+1] and [1e8+1, 1e8] are sqrt(2) apart (the product form gives 0)."""

import numpy as np

from rustyml import machine_learning as ml
from rustyml.math import distance

FAR = np.array([[1e8, 1e8 + 1], [1e8 + 1, 1e8]])


def test_pairwise_near_duplicates_far_from_origin_are_exact():
    d = distance.pairwise(FAR, FAR)
    np.testing.assert_array_equal(d, [[0.0, np.sqrt(2.0)], [np.sqrt(2.0), 0.0]])


def test_knn_scan_near_duplicates_far_from_origin_are_exact():
    train = np.vstack([FAR[1:], [[0.0, 0.0], [5.0, 5.0]]])
    knn = ml.KNN(n_neighbors=1).fit(train, [0, 1, 1])
    dist, ind = knn.kneighbors(FAR[:1])
    assert ind[0, 0] == 0
    assert dist[0, 0] == np.sqrt(2.0)


def test_kmeans_distances_near_duplicates_far_from_origin_are_exact():
    km = ml.KMeans(n_clusters=2, init=FAR, max_iter=1).fit(FAR)
    np.testing.assert_array_equal(km.cluster_centers_, FAR)
    np.testing.assert_array_equal(km.transform(FAR), [[0.0, np.sqrt(2.0)], [np.sqrt(2.0), 0.0]])
    np.testing.assert_array_equal(km.predict(FAR), [0, 1])
