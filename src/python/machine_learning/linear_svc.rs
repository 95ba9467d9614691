//! Native `LinearSVC`.

use super::logistic_regression::parse_penalty;
use crate::machine_learning::LinearSVC;
use crate::python::model::native_estimator;
use pyo3::prelude::*;

native_estimator! {
    PyLinearSVC(LinearSVC, "LinearSVC");
    new(
        penalty: Option<&str>,
        C: f64,
        fit_intercept: bool,
        intercept_scaling: f64,
        max_iter: usize,
        tol: f64,
    ) {
        Ok(LinearSVC::with_defaults()
            .with_penalty(parse_penalty(penalty, false)?)
            .with_c(C)
            .with_fit_intercept(fit_intercept)
            .with_intercept_scaling(intercept_scaling)
            .with_max_iter(max_iter)
            .with_tol(tol))
    }
    fit(x, y) => |m, x, y| m.fit(&x, &y).map(|_| ());
    read predict => |m, x| m.predict(&x);
    read decision_function => |m, x| m.decision_scores(x);
    fitted classes_ => |m| m.classes().cloned();
    fitted coef_ => |m| m.coefficients().cloned();
    fitted intercept_ => |m| m.intercept().cloned();
    fitted n_iter_ => |m| m.n_iter();
    fitted converged_ => |m| m.converged();
}
