//! Native `LinearRegression`.

use crate::machine_learning::linear_model::LeastSquaresSolver;
use crate::machine_learning::validation::{check_n_features, check_xy};
use crate::machine_learning::{LinearRegression, RegularizationType};
use crate::python::model::native_estimator;
use crate::python::params::choice;
use crate::python::to_py_err;
use pyo3::prelude::*;

native_estimator! {
    PyLinearRegression(LinearRegression, "LinearRegression");
    new(
        fit_intercept: bool,
        solver: &str,
        penalty: Option<&str>,
        alpha: f64,
        learning_rate: f64,
        max_iter: usize,
        tol: f64,
    ) {
        // alpha is checked even without a penalty, as scikit-learn's parameter validation
        // does (the model keeps no alpha then, so the check cannot wait for fit).
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(to_py_err(crate::Error::invalid_input(format!(
                "alpha must be a finite number >= 0, got {alpha}"
            ))));
        }
        let gradient_descent = LeastSquaresSolver::GradientDescent { learning_rate, max_iter, tol };
        let solver = choice(
            "solver",
            solver,
            &[("normal", LeastSquaresSolver::Normal), ("gradient_descent", gradient_descent)],
        )?;
        // The L2 alpha is scikit-learn's Ridge alpha (on the summed squared error).
        let penalty = choice(
            "penalty",
            penalty.unwrap_or("none"),
            &[
                ("none", None),
                ("l1", Some(RegularizationType::L1(alpha))),
                ("l2", Some(RegularizationType::L2(alpha))),
            ],
        )?;
        Ok(LinearRegression::new(fit_intercept).with_unchecked(solver, penalty, true))
    }
    fit(x, y) => |m, x, y| {
        // scikit-learn's checks and messages first; the model's own then never fire.
        m.check_params()?;
        check_xy(&x, &y)?;
        m.fit(&x, &y).map(|_| ())
    };
    read predict => |m, x| {
        if let Some(c) = m.get_coefficients() {
            check_n_features(&x, c.len(), "LinearRegression")?;
        }
        m.predict(&x)
    };
    fitted coef_ => |m| m.get_coefficients().cloned();
    fitted intercept_ => |m| m.get_intercept();
    fitted n_iter_ => |m| m.get_actual_iterations();
}
