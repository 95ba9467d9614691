//! Native `DecisionTree`.

use crate::machine_learning::{Algorithm, DecisionTree};
use crate::python::model::native_estimator;
use crate::python::params::{self, count, required_count};
use crate::python::to_py_err;
use pyo3::prelude::*;

native_estimator! {
    PyDecisionTree(DecisionTree, "DecisionTree");
    new(
        algorithm: &str,
        is_classifier: bool,
        max_depth: Option<&Bound<'_, PyAny>>,
        min_samples_split: &Bound<'_, PyAny>,
        min_samples_leaf: &Bound<'_, PyAny>,
        random_state: Option<&Bound<'_, PyAny>>,
    ) {
        let algorithm = Algorithm::parse(algorithm).map_err(to_py_err)?;
        Ok(DecisionTree::with_defaults(algorithm, is_classifier)
            .set_max_depth(count(max_depth, "max_depth")?)
            .set_min_samples_split(required_count(min_samples_split, "min_samples_split")?)
            .set_min_samples_leaf(required_count(min_samples_leaf, "min_samples_leaf")?)
            .set_random_state(params::random_state(random_state)?))
    }
    fit(x, y) => |m, x, y| m.fit(&x, &y).map(|_| ());
    read predict => |m, x| m.predict(&x);
    read predict_proba => |m, x| m.predict_proba(&x);
    // None for a regressor; NotFittedError before the fit either way
    fitted classes_ => |m| m.depth().map(|_| m.classes().cloned());
    fitted node_count => |m| m.node_count();
    fitted feature_importances_ => |m| m.feature_importances().cloned();
    // (node table, per-node targets) of the last fit, for scikit-learn's door
    query split_report => |m| m.depth().map(|_| m.split_report());
    query get_depth => |m| m.depth();
    query get_n_leaves => |m| m.n_leaves();
}
