//! Ordinary least squares, ridge, and gradient-descent linear regression.
//!
//! Objectives (the original crate's conventions, per sample):
//!
//! * none: `|y - Xw - b|^2 / (2n)`
//! * `L2(alpha)`: adds `(alpha / 2) |w|^2`, so the closed form solves
//!   `(XᵀX + n alpha I) w = Xᵀy`;
//! * `L1(alpha)`: adds `alpha |w|_1` (scikit-learn's `Lasso` objective), by proximal steps.
//!
//! The Python layer states its L2 strength on the summed squared error instead (scikit-learn's
//! `Ridge`: `(XᵀX + alpha I) w = Xᵀy`); [`LinearRegression::with_ridge_alpha`] switches to it.

// The scikit-learn-style setters are the Python layer's entry points.
#![cfg_attr(not(feature = "python"), allow(dead_code))]

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::linear_model::require_xy;
use crate::machine_learning::validation::{
    require_data_width, require_non_negative, require_nonzero, require_positive,
};
use crate::math::{linalg, matmul, reduction};
use crate::persistence::Persist;
use ndarray::{Array1, ArrayRef1, ArrayRef2, ArrayView1, ArrayView2, Zip};
use serde::{Deserialize, Serialize};

pub use crate::machine_learning::types::RegularizationType;

/// How the coefficients are found.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize, Serialize)]
pub enum LeastSquaresSolver {
    /// Closed form: the normal equations (ridge with an L2 penalty), solved by Cholesky with
    /// a minimum-norm fallback for rank-deficient data.
    #[default]
    Normal,
    /// Full-batch gradient descent (proximal for L1), stopping when no parameter moves more
    /// than `tol` in one step.
    GradientDescent {
        learning_rate: f64,
        max_iter: usize,
        tol: f64,
    },
}

/// Linear regression.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinearRegression {
    fit_intercept: bool,
    solver: LeastSquaresSolver,
    regularization: Option<RegularizationType>,
    /// The L2 strength is scikit-learn's `Ridge` alpha (on the summed error), not per sample.
    ridge_alpha: bool,
    coef: Option<Array1<f64>>,
    intercept: f64,
    n_iter: usize,
}

impl Default for LinearRegression {
    fn default() -> Self {
        Self::new(true)
    }
}

/// `InvalidParameter` unless the penalty strength is finite and `>= 0`.
pub(crate) fn check_regularization(reg: RegularizationType) -> Result<()> {
    let (RegularizationType::L1(alpha) | RegularizationType::L2(alpha)) = reg;
    if alpha.is_finite() && alpha >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            "regularization",
            format!("strength must be a finite number >= 0, got {alpha}"),
        ))
    }
}

impl LinearRegression {
    /// Closed-form least squares, no penalty.
    pub fn new(fit_intercept: bool) -> Self {
        Self {
            fit_intercept,
            solver: LeastSquaresSolver::Normal,
            regularization: None,
            ridge_alpha: false,
            coef: None,
            intercept: 0.0,
            n_iter: 0,
        }
    }

    /// Choose the solver; gradient-descent settings are validated (`InvalidParameter`).
    pub fn with_solver(mut self, solver: LeastSquaresSolver) -> Result<Self> {
        // the original's tolerance must be > 0 (scikit-learn-style doors take 0: run to max_iter)
        if let LeastSquaresSolver::GradientDescent { tol, .. } = solver {
            require_positive("tol", tol)?;
        }
        self.solver = solver;
        self.check_params()?;
        Ok(self)
    }

    crate::accessors::checked_setters! {
        /// Add a penalty; a negative or non-finite strength is `InvalidParameter`.
        with_regularization(regularization: Some(RegularizationType)),
    }

    /// Unvalidated settings for the Python layer, which checks them at `fit`
    /// ([`check_params`](Self::check_params)) with scikit-learn's messages. `ridge_alpha`:
    /// the L2 strength is on the summed squared error, like scikit-learn's `Ridge`.
    pub(crate) fn with_unchecked(
        mut self,
        solver: LeastSquaresSolver,
        regularization: Option<RegularizationType>,
        ridge_alpha: bool,
    ) -> Self {
        self.solver = solver;
        self.regularization = regularization;
        self.ridge_alpha = ridge_alpha;
        self
    }

    crate::accessors::field_getters! {
        get_fit_intercept -> fit_intercept: bool,
        get_solver -> solver: LeastSquaresSolver,
        get_regularization_type -> regularization: Option<RegularizationType>,
    }

    crate::accessors::fitted_getters! {
        self once coef;
        /// Fitted coefficients (`coef_`).
        #[inline]
        get_coefficients -> &coef: Array1<f64>,
        /// Fitted intercept (`intercept_`); 0 when `fit_intercept` is false.
        #[inline]
        get_intercept -> intercept: f64,
        /// Iterations the gradient-descent solver ran (0 for the closed form).
        #[inline]
        get_actual_iterations -> n_iter: usize,
    }

    /// The one check of LinearRegression's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        if let Some(regularization) = self.regularization {
            check_regularization(regularization)?;
        }
        if let LeastSquaresSolver::GradientDescent {
            learning_rate,
            max_iter,
            tol,
        } = self.solver
        {
            require_positive("learning_rate", learning_rate)?;
            require_nonzero("max_iter", max_iter)?;
            require_non_negative("tol", tol)?;
        }
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) and `y` (`n_samples`).
    ///
    /// Errors: empty `x` -> `EmptyInput`; NaN/inf -> `NonFinite`; `y` of another length ->
    /// `DimensionMismatch`; L1 with the closed form -> `InvalidInput`; gradient descent that
    /// overflows -> `NonFinite`.
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<&mut Self> {
        let (x, y) = (x.view(), y.view());
        require_xy(&x, &y)?;
        let (coef, intercept, n_iter) = match self.solver {
            LeastSquaresSolver::Normal => self.fit_normal(x, y)?,
            LeastSquaresSolver::GradientDescent {
                learning_rate,
                max_iter,
                tol,
            } => self.fit_gradient_descent(x, y, learning_rate, max_iter, tol)?,
        };
        self.coef = Some(coef);
        self.intercept = intercept;
        self.n_iter = n_iter;
        Ok(self)
    }

    /// Per-sample L2 strength (the `alpha` of `(alpha / 2) |w|^2` next to the halved mean
    /// squared error) and L1 strength.
    fn strengths(&self, n: usize) -> (f64, f64) {
        match self.regularization {
            Some(RegularizationType::L2(a)) if self.ridge_alpha => (a / n as f64, 0.0),
            Some(RegularizationType::L2(a)) => (a, 0.0),
            Some(RegularizationType::L1(a)) => (0.0, a),
            None => (0.0, 0.0),
        }
    }

    fn fit_normal(
        &self,
        x: ArrayView2<f64>,
        y: ArrayView1<f64>,
    ) -> Result<(Array1<f64>, f64, usize)> {
        let (l2, l1) = self.strengths(x.nrows());
        if l1 > 0.0 || matches!(self.regularization, Some(RegularizationType::L1(_))) {
            return Err(Error::invalid_input(
                "penalty='l1' (L1 regularization) has no closed form; use solver='gradient_descent' (LeastSquaresSolver::GradientDescent)",
            ));
        }
        let (x_mean, y_mean, centered);
        let xc: ArrayView2<f64> = if self.fit_intercept {
            let stats = reduction::column_moments(x);
            x_mean = Array1::from_iter(stats.iter().map(|m| m.mean));
            y_mean = reduction::moments(y).mean;
            centered = &x - &x_mean;
            centered.view()
        } else {
            x_mean = Array1::zeros(x.ncols());
            y_mean = 0.0;
            x
        };
        let yc = y.mapv(|v| v - y_mean);
        let mut gram = matmul::gram(xc);
        if l2 > 0.0 {
            // The summed-error strength: the ridge alpha as given, or n times the per-sample one.
            let lambda = match self.regularization {
                Some(RegularizationType::L2(a)) if self.ridge_alpha => a,
                _ => l2 * x.nrows() as f64,
            };
            gram.diag_mut().mapv_inplace(|v| v + lambda);
        }
        let rhs = matmul::matvec(xc.t(), yc.view(), matmul::nested_parallelism())?;
        let coef = linalg::solve_symmetric(gram.view(), rhs.view())?;
        let intercept = if self.fit_intercept {
            y_mean - x_mean.dot(&coef)
        } else {
            0.0
        };
        Ok((coef, intercept, 0))
    }

    fn fit_gradient_descent(
        &self,
        x: ArrayView2<f64>,
        y: ArrayView1<f64>,
        lr: f64,
        max_iter: usize,
        tol: f64,
    ) -> Result<(Array1<f64>, f64, usize)> {
        let n = x.nrows() as f64;
        let (l2, l1) = self.strengths(x.nrows());
        let mut w = Array1::<f64>::zeros(x.ncols());
        let mut b = 0.0;
        let par = matmul::nested_parallelism();
        for iter in 1..=max_iter {
            let mut residual = matmul::matvec(x, w.view(), par)?;
            Zip::from(&mut residual)
                .and(&y)
                .for_each(|r, &t| *r += b - t);
            let mut grad = matmul::matvec(x.t(), residual.view(), par)?;
            grad /= n;
            if l2 > 0.0 {
                grad.scaled_add(l2, &w);
            }
            let grad_b = if self.fit_intercept {
                reduction::sum(residual.view()) / n
            } else {
                0.0
            };
            let mut step = 0.0f64;
            Zip::from(&mut w).and(&grad).for_each(|wj, &g| {
                let mut next = *wj - lr * g;
                if l1 > 0.0 {
                    // proximal step of l1 * |w|_1: soft thresholding
                    next = next.signum() * (next.abs() - lr * l1).max(0.0);
                }
                step = step.max((next - *wj).abs());
                *wj = next;
            });
            b -= lr * grad_b;
            step = step.max((lr * grad_b).abs());
            if !step.is_finite() || !b.is_finite() {
                return Err(Error::non_finite(format!(
                    "gradient descent (it diverged at iteration {iter}; lower learning_rate, now {lr}, or scale the features)"
                )));
            }
            if step < tol {
                return Ok((w, b, iter));
            }
        }
        Ok((w, b, max_iter))
    }

    /// Predictions for `x` (unfitted -> `NotFitted`; empty -> `EmptyInput`; NaN ->
    /// `NonFinite`; another width -> `DimensionMismatch`).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let coef = fitted_state(&self.coef, "LinearRegression")?;
        let x = x.view();
        require_data_width(&x, coef.len(), "x")?;
        let mut out = matmul::matvec(x, coef.view(), matmul::nested_parallelism())?;
        out += self.intercept;
        Ok(out)
    }

    /// R² of the predictions on `x` against `y` (length mismatch -> `DimensionMismatch`).
    pub fn score(&self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<f64> {
        let pred = self.predict(x)?;
        if pred.len() != y.len() {
            return Err(Error::dimension_mismatch(pred.len(), y.len()));
        }
        crate::metrics::checked::r2_score(y.view(), pred.view())
    }
}

crate::machine_learning::linear_model::supervised_traits!(LinearRegression, f64, Array1<f64>);
crate::machine_learning::linear_model::supervised_conveniences!(LinearRegression: fit_predict);
crate::machine_learning::path_persistence!(LinearRegression);

impl Persist for LinearRegression {
    const MODEL_NAME: &'static str = "LinearRegression";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};

    fn synthetic(n: usize) -> (Array2<f64>, Array1<f64>, Array1<f64>, f64) {
        let x = Array2::from_shape_fn((n, 3), |(i, j)| {
            ((i * 7 + j * 13) % 17) as f64 / 4.0 + (i as f64 * 0.01).sin() * j as f64
        });
        let w = array![1.5, -2.0, 0.25];
        let y = x.dot(&w) + 3.0;
        (x, y, w, 3.0)
    }

    fn gd(learning_rate: f64, max_iter: usize, tol: f64) -> LeastSquaresSolver {
        LeastSquaresSolver::GradientDescent {
            learning_rate,
            max_iter,
            tol,
        }
    }

    #[test]
    fn chapter_example_predicts_three() {
        let x = Array2::from_shape_vec((5, 1), vec![1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        let y = array![3.0, 5.0, 7.0, 9.0, 11.0];
        let mut model = LinearRegression::new(true);
        model.fit(&x, &y).unwrap();
        let preds = model.predict(&x).unwrap();
        assert_eq!(format!("{:.3}", preds[0]), "3.000");
    }

    #[test]
    fn normal_equations_recover_exact_coefficients() {
        let (x, y, w, b) = synthetic(200);
        let mut model = LinearRegression::new(true);
        model.fit(&x, &y).unwrap();
        for (got, want) in model.get_coefficients().unwrap().iter().zip(w.iter()) {
            assert!((got - want).abs() < 1e-10);
        }
        assert!((model.get_intercept().unwrap() - b).abs() < 1e-10);
        assert!((model.score(&x, &y).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(model.get_actual_iterations(), Some(0));
    }

    /// The per-sample L2 strength `alpha` of the original API is the ridge `n * alpha` of the
    /// Python layer: both conventions, and both solvers, reach one minimiser.
    #[test]
    fn gradient_descent_reaches_the_normal_solution_in_both_conventions() {
        let (x, y, _, _) = synthetic(300);
        let alpha = 0.5 / 300.0;
        let mut exact = LinearRegression::new(true)
            .with_regularization(RegularizationType::L2(alpha))
            .unwrap();
        exact.fit(&x, &y).unwrap();
        let mut ridge = LinearRegression::new(true).with_unchecked(
            LeastSquaresSolver::Normal,
            Some(RegularizationType::L2(0.5)),
            true,
        );
        ridge.fit(&x, &y).unwrap();
        let mut descent = LinearRegression::new(true)
            .with_solver(gd(0.05, 200_000, 1e-12))
            .unwrap()
            .with_regularization(RegularizationType::L2(alpha))
            .unwrap();
        descent.fit(&x, &y).unwrap();
        let want = exact.get_coefficients().unwrap();
        for other in [&ridge, &descent] {
            for (a, b) in other.get_coefficients().unwrap().iter().zip(want) {
                assert!((a - b).abs() < 1e-6, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn lasso_zeroes_a_useless_feature() {
        let (mut x, y, _, _) = synthetic(300);
        x.column_mut(2).mapv_inplace(|v| v * 1e-3); // nearly useless after scaling down
        let mut model = LinearRegression::new(true)
            .with_solver(gd(0.05, 100_000, 1e-6))
            .unwrap()
            .with_regularization(RegularizationType::L1(0.5))
            .unwrap();
        model.fit(&x, &y).unwrap();
        assert_eq!(model.get_coefficients().unwrap()[2], 0.0);
    }

    #[test]
    fn bad_input_and_parameters_map_to_the_original_error_variants() {
        let mut m = LinearRegression::new(true);
        assert!(matches!(
            m.predict(&Array2::<f64>::zeros((1, 1))),
            Err(Error::NotFitted(_))
        ));
        assert!(matches!(
            m.fit(&Array2::<f64>::zeros((0, 2)), &Array1::<f64>::zeros(0)),
            Err(Error::EmptyInput(_))
        ));
        assert!(matches!(
            m.fit(&array![[1.0], [f64::NAN]], &array![1.0, 2.0]),
            Err(Error::NonFinite(_))
        ));
        assert!(matches!(
            m.fit(&array![[1.0], [2.0]], &array![1.0]),
            Err(Error::DimensionMismatch { .. })
        ));
        for bad in [gd(0.0, 10, 1e-6), gd(0.1, 0, 1e-6), gd(0.1, 10, f64::NAN)] {
            assert!(matches!(
                LinearRegression::new(true).with_solver(bad),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert!(LinearRegression::new(true)
            .with_regularization(RegularizationType::L2(-1.0))
            .is_err());
        let mut l1 = LinearRegression::new(true)
            .with_regularization(RegularizationType::L1(1.0))
            .unwrap();
        assert!(matches!(
            l1.fit(&array![[1.0], [2.0]], &array![1.0, 2.0]),
            Err(Error::InvalidInput(_))
        ));
        let mut diverge = LinearRegression::new(true)
            .with_solver(gd(10.0, 1000, 1e-6))
            .unwrap();
        assert!(matches!(
            diverge.fit(&array![[100.0], [200.0], [300.0]], &array![1.0, 2.0, 3.0]),
            Err(Error::NonFinite(_))
        ));
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let (x, y, _, _) = synthetic(50);
        let mut m = LinearRegression::new(true);
        m.fit(&x, &y).unwrap();
        let back = LinearRegression::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(back.predict(&x).unwrap(), m.predict(&x).unwrap());
        let dir = std::env::temp_dir().join(format!("rustyml-lr-{}.bin", std::process::id()));
        let path = dir.to_str().unwrap();
        m.save_to_path(path).unwrap();
        assert_eq!(
            LinearRegression::load_from_path(path)
                .unwrap()
                .get_coefficients(),
            m.get_coefficients()
        );
        std::fs::remove_file(path).ok();
        assert!(LinearRegression::from_bytes(b"garbage").is_err());
    }
}
