//! The random-split forest grower behind the scikit-learn door's `IsolationForest`.

use crate::machine_learning::random_split_tree::{grow_random_split_forest, RandomSplitParams};
use crate::python::to_py_err;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// One tree's node arrays, in scikit-learn's `Tree` order and dtypes.
type TreeArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<f64>>,
    usize,
);

/// Grows scikit-learn's random-split regression trees (see the crate's
/// `machine_learning::random_split_tree`): per tree `(left, right, feature, threshold,
/// impurity, n_node_samples, weighted_n_node_samples, missing_go_to_left, value, depth)`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, y, samples, columns, seeds, *, max_features, max_depth, min_samples_split, min_samples_leaf))]
pub(crate) fn grow_random_split_forest_arrays<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f32>,
    y: PyReadonlyArray1<'py, f64>,
    samples: PyReadonlyArray2<'py, i64>,
    columns: PyReadonlyArray2<'py, i64>,
    seeds: Vec<u32>,
    max_features: usize,
    max_depth: usize,
    min_samples_split: usize,
    min_samples_leaf: usize,
) -> PyResult<Vec<TreeArrays<'py>>> {
    let params = RandomSplitParams {
        max_features,
        max_depth,
        min_samples_split,
        min_samples_leaf,
    };
    let (x, y, samples, columns) = (
        x.as_array(),
        y.as_array(),
        samples.as_array(),
        columns.as_array(),
    );
    let trees = crate::python::parallel::detach(py, || {
        grow_random_split_forest(x, y, samples, columns, &seeds, params)
    })
    .map_err(to_py_err)?;
    Ok(trees
        .into_iter()
        .map(|t| {
            let go_left: Vec<u8> = t.missing_go_to_left.iter().map(|&b| u8::from(b)).collect();
            (
                t.left.into_pyarray(py),
                t.right.into_pyarray(py),
                t.feature.into_pyarray(py),
                t.threshold.into_pyarray(py),
                t.impurity.into_pyarray(py),
                t.n_node_samples.into_pyarray(py),
                t.weighted_n_node_samples.into_pyarray(py),
                go_left.into_pyarray(py),
                t.value.into_pyarray(py),
                t.depth,
            )
        })
        .collect())
}
