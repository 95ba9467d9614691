//! Native `LDA` (scikit-learn's `LinearDiscriminantAnalysis`).

use crate::machine_learning::{DiscriminantSolver, LDA};
use crate::python::model::native_estimator;
use crate::python::params::choice;
use pyo3::prelude::*;

native_estimator! {
    PyLDA(LDA, "LDA");
    new(solver: &str, n_components: Option<usize>, priors: Option<Vec<f64>>, tol: f64) {
        let solver = choice(
            "solver",
            solver,
            &[("svd", DiscriminantSolver::SVD), ("eigen", DiscriminantSolver::Eigen)],
        )?;
        Ok(LDA::with_defaults()
            .with_solver(solver)
            .with_n_components(n_components)
            .with_priors(priors)
            .with_tol(tol))
    }
    fit(x, y) => |m, x, y| m.fit_labels(x, y);
    read predict => |m, x| m.predict_labels(x);
    read predict_proba => |m, x| m.class_probabilities(x);
    read decision_function => |m, x| m.decision_scores(x);
    read transform => |m, x| m.transform(&x);
    fitted classes_ => |m| m.classes().cloned();
    fitted means_ => |m| m.means().cloned();
    fitted priors_ => |m| m.priors().cloned();
    fitted xbar_ => |m| m.xbar().cloned();
    fitted scalings_ => |m| m.scalings().cloned();
    fitted explained_variance_ratio_ => |m| m.explained_variance_ratio().cloned();
    fitted coef_ => |m| m.coefficients().cloned();
    fitted intercept_ => |m| m.intercept().cloned();
}
