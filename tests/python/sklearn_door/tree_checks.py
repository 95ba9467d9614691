"""The comparison of two scikit-learn ``Tree`` objects shared by the tree and forest door
tests."""

import numpy as np


def assert_same_structure(a, b):
    """The same nodes: children, splits, sample counts and (on split nodes) the side missing
    values take. Leaves' ``missing_go_to_left`` is unset memory in scikit-learn's trees."""
    assert a.node_count == b.node_count
    assert a.max_depth == b.max_depth
    np.testing.assert_array_equal(a.children_left, b.children_left)
    np.testing.assert_array_equal(a.children_right, b.children_right)
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)
    np.testing.assert_array_equal(a.n_node_samples, b.n_node_samples)
    np.testing.assert_array_equal(a.weighted_n_node_samples, b.weighted_n_node_samples)
    internal = a.children_left >= 0
    np.testing.assert_array_equal(a.missing_go_to_left[internal], b.missing_go_to_left[internal])
