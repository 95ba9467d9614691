//! The scikit-learn tree replica behind the door's `DecisionTreeClassifier`,
//! `DecisionTreeRegressor` and `IsolationForest` (see the crate's
//! `machine_learning::sklearn_tree`).

use crate::error::Error;
use crate::machine_learning::sklearn_tree::{
    grow_forest, grow_tree, Criterion, CscColumns, Features, GrownTree, SplitSearch, Targets,
    TreeParams,
};
use crate::python::to_py_err;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// One tree's node arrays, in scikit-learn's `Tree` order and dtypes: `(left, right, feature,
/// threshold, impurity, n_node_samples, weighted_n_node_samples, missing_go_to_left, value,
/// depth)`.
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

fn tree_arrays(py: Python<'_>, t: GrownTree) -> TreeArrays<'_> {
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
}

fn parse_criterion(name: &str) -> PyResult<Criterion> {
    Ok(match name {
        "gini" => Criterion::Gini,
        "entropy" | "log_loss" => Criterion::Entropy,
        "squared_error" => Criterion::SquaredError,
        "poisson" => Criterion::Poisson,
        other => {
            return Err(to_py_err(Error::invalid_parameter(
                "criterion",
                format!("{other:?} is not one of gini, entropy, log_loss, squared_error, poisson"),
            )))
        }
    })
}

fn parse_search(name: &str) -> PyResult<SplitSearch> {
    Ok(match name {
        "best" => SplitSearch::Best,
        "random" => SplitSearch::Random,
        other => {
            return Err(to_py_err(Error::invalid_parameter(
                "splitter",
                format!("{other:?} is not one of best, random"),
            )))
        }
    })
}

/// A CSC matrix's parts as scikit-learn's tree fit holds them: `(n_rows, indptr, indices,
/// data)`, 32-bit indices, float32 values.
type CscParts<'py> = (
    usize,
    PyReadonlyArray1<'py, i32>,
    PyReadonlyArray1<'py, i32>,
    PyReadonlyArray1<'py, f32>,
);

/// The row indices and column pointers as `usize` (scikit-learn's are 32-bit).
fn csc_indices(parts: &CscParts<'_>) -> PyResult<(Vec<usize>, Vec<usize>)> {
    let widen = |a: &PyReadonlyArray1<'_, i32>, what: &str| -> PyResult<Vec<usize>> {
        a.as_array()
            .iter()
            .map(|&v| usize::try_from(v))
            .collect::<Result<_, _>>()
            .map_err(|_| to_py_err(Error::invalid_input(format!("sparse x: a negative {what}"))))
    };
    Ok((
        widen(&parts.1, "column pointer")?,
        widen(&parts.2, "row index")?,
    ))
}

/// The input from the dense `x` or the CSC `sparse` parts (with their indices `widened`).
fn features<'a>(
    x: &'a Option<PyReadonlyArray2<'_, f32>>,
    sparse: &'a Option<CscParts<'_>>,
    widened: &'a Option<(Vec<usize>, Vec<usize>)>,
) -> PyResult<Features<'a>> {
    Ok(match (x, sparse, widened) {
        (Some(x), None, _) => Features::Dense(x.as_array()),
        (None, Some(parts), Some((indptr, indices))) => Features::Sparse(CscColumns {
            n_rows: parts.0,
            indptr,
            indices,
            data: parts.3.as_slice()?,
        }),
        _ => {
            return Err(to_py_err(Error::invalid_input(
                "pass x or its sparse parts, one of the two",
            )))
        }
    })
}

/// Grows the tree scikit-learn's `DecisionTreeClassifier` / `DecisionTreeRegressor` grows:
/// from the dense float32 `x`, or from the CSC parts `sparse` when `x` is `None`; `y` holds
/// one column per output (class codes for a classification criterion, with `n_classes` per
/// output), `seed` the number scikit-learn's splitter draws.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, y, sample_weight, seed, *, sparse=None, criterion, splitter, n_classes, max_features, max_depth, min_samples_split, min_samples_leaf, min_weight_leaf, min_impurity_decrease, max_leaf_nodes=None))]
pub(crate) fn grow_sklearn_tree_arrays<'py>(
    py: Python<'py>,
    x: Option<PyReadonlyArray2<'py, f32>>,
    y: PyReadonlyArray2<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    seed: u32,
    sparse: Option<CscParts<'py>>,
    criterion: &str,
    splitter: &str,
    n_classes: Vec<usize>,
    max_features: usize,
    max_depth: usize,
    min_samples_split: usize,
    min_samples_leaf: usize,
    min_weight_leaf: f64,
    min_impurity_decrease: f64,
    max_leaf_nodes: Option<usize>,
) -> PyResult<TreeArrays<'py>> {
    let params = TreeParams {
        search: parse_search(splitter)?,
        criterion: parse_criterion(criterion)?,
        max_features,
        max_depth,
        min_samples_split,
        min_samples_leaf,
        min_weight_leaf,
        min_impurity_decrease,
        max_leaf_nodes,
    };
    let weights = sample_weight.as_ref().map(|w| w.as_array());
    let targets = Targets {
        y: y.as_array(),
        n_classes,
    };
    let widened = sparse.as_ref().map(csc_indices).transpose()?;
    let input = features(&x, &sparse, &widened)?;
    let tree =
        crate::python::parallel::detach(py, || grow_tree(input, &targets, weights, seed, params))
            .map_err(to_py_err)?;
    Ok(tree_arrays(py, tree))
}

/// Grows scikit-learn's random-split regression trees of a bagged forest (`IsolationForest`):
/// per tree its rows (`samples`, a row drawn `k` times weighing `k`), its columns and its seed;
/// from the dense `x`, or the CSC parts `sparse` when `x` is `None`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (x, y, samples, columns, seeds, *, sparse=None, max_features, max_depth, min_samples_split, min_samples_leaf))]
pub(crate) fn grow_random_split_forest_arrays<'py>(
    py: Python<'py>,
    x: Option<PyReadonlyArray2<'py, f32>>,
    y: PyReadonlyArray1<'py, f64>,
    samples: PyReadonlyArray2<'py, i64>,
    columns: PyReadonlyArray2<'py, i64>,
    seeds: Vec<u32>,
    sparse: Option<CscParts<'py>>,
    max_features: usize,
    max_depth: usize,
    min_samples_split: usize,
    min_samples_leaf: usize,
) -> PyResult<Vec<TreeArrays<'py>>> {
    let params = TreeParams {
        search: SplitSearch::Random,
        criterion: Criterion::SquaredError,
        max_features,
        max_depth,
        min_samples_split,
        min_samples_leaf,
        min_weight_leaf: 0.0,
        min_impurity_decrease: 0.0,
        max_leaf_nodes: None,
    };
    let (samples, columns) = (samples.as_array(), columns.as_array());
    let widened = sparse.as_ref().map(csc_indices).transpose()?;
    let input = features(&x, &sparse, &widened)?;
    let targets = Targets {
        y: y.as_array().insert_axis(ndarray::Axis(1)),
        n_classes: vec![],
    };
    let trees = crate::python::parallel::detach(py, || {
        grow_forest(input, &targets, samples, columns, &seeds, params)
    })
    .map_err(to_py_err)?;
    Ok(trees.into_iter().map(|t| tree_arrays(py, t)).collect())
}
