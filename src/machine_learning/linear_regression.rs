//! Ordinary least squares, ridge, and gradient-descent linear regression.

use crate::error::{Result, RustymlError};
use crate::machine_learning::validation::{check_n_features, check_xy};
use crate::math::{linalg, matmul, reduction};
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayBase, ArrayView1, ArrayView2, Data, Ix1, Ix2, Zip};
use serde::{Deserialize, Serialize};

/// How the coefficients are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Solver {
    /// Closed form: the normal equations (ridge when `penalty` is L2), solved by Cholesky with
    /// a minimum-norm fallback for rank-deficient data.
    Normal,
    /// Full-batch gradient descent (proximal for L1).
    GradientDescent,
}

/// Regularisation. Objectives: L2 adds `alpha * |w|^2` to the squared error (scikit-learn's
/// `Ridge`); L1 adds `alpha * |w|_1` to the mean squared error halved (scikit-learn's `Lasso`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Penalty {
    None,
    L1,
    L2,
}

/// Linear regression with scikit-learn-like hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinearRegression {
    pub fit_intercept: bool,
    pub solver: Solver,
    pub penalty: Penalty,
    pub alpha: f64,
    pub learning_rate: f64,
    pub max_iter: usize,
    pub tol: f64,
    coef: Option<Array1<f64>>,
    intercept: f64,
    n_iter: usize,
}

impl Default for LinearRegression {
    fn default() -> Self {
        Self::new(true)
    }
}

impl LinearRegression {
    /// Closed-form least squares, no penalty.
    pub fn new(fit_intercept: bool) -> Self {
        Self {
            fit_intercept,
            solver: Solver::Normal,
            penalty: Penalty::None,
            alpha: 0.0,
            learning_rate: 0.01,
            max_iter: 1000,
            tol: 1e-6,
            coef: None,
            intercept: 0.0,
            n_iter: 0,
        }
    }

    pub fn with_solver(mut self, solver: Solver) -> Self {
        self.solver = solver;
        self
    }

    pub fn with_penalty(mut self, penalty: Penalty, alpha: f64) -> Self {
        self.penalty = penalty;
        self.alpha = alpha;
        self
    }

    pub fn with_learning_rate(mut self, learning_rate: f64) -> Self {
        self.learning_rate = learning_rate;
        self
    }

    pub fn with_max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }

    pub fn with_tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// Fitted coefficients (`coef_`).
    pub fn coefficients(&self) -> Option<&Array1<f64>> {
        self.coef.as_ref()
    }

    /// Fitted intercept (`intercept_`); 0 when `fit_intercept` is false.
    pub fn intercept(&self) -> Option<f64> {
        self.coef.as_ref().map(|_| self.intercept)
    }

    /// Iterations the gradient-descent solver ran (0 for the closed form).
    pub fn n_iter(&self) -> Option<usize> {
        self.coef.as_ref().map(|_| self.n_iter)
    }

    fn check_params(&self) -> Result<()> {
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(RustymlError::invalid(format!(
                "alpha must be a finite number >= 0, got {}",
                self.alpha
            )));
        }
        if self.solver == Solver::Normal && self.penalty == Penalty::L1 {
            return Err(RustymlError::invalid(
                "penalty='l1' has no closed form; use solver='gradient_descent'",
            ));
        }
        if self.solver == Solver::GradientDescent {
            if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
                return Err(RustymlError::invalid(format!(
                    "learning_rate must be a finite number > 0, got {}",
                    self.learning_rate
                )));
            }
            if self.max_iter == 0 {
                return Err(RustymlError::invalid("max_iter must be at least 1"));
            }
            if !(self.tol.is_finite() && self.tol >= 0.0) {
                return Err(RustymlError::invalid(format!(
                    "tol must be a finite number >= 0, got {}",
                    self.tol
                )));
            }
        }
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) and `y` (`n_samples`).
    pub fn fit<S1, S2>(
        &mut self,
        x: &ArrayBase<S1, Ix2>,
        y: &ArrayBase<S2, Ix1>,
    ) -> Result<&mut Self>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        let (x, y) = (x.view(), y.view());
        self.check_params()?;
        check_xy(&x, &y)?;
        let (coef, intercept, n_iter) = match self.solver {
            Solver::Normal => self.fit_normal(x, y)?,
            Solver::GradientDescent => self.fit_gradient_descent(x, y)?,
        };
        self.coef = Some(coef);
        self.intercept = intercept;
        self.n_iter = n_iter;
        Ok(self)
    }

    fn fit_normal(
        &self,
        x: ArrayView2<f64>,
        y: ArrayView1<f64>,
    ) -> Result<(Array1<f64>, f64, usize)> {
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
        let mut gram: Array2<f64> = matmul::gram(xc);
        if self.penalty == Penalty::L2 {
            gram.diag_mut().mapv_inplace(|v| v + self.alpha);
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
    ) -> Result<(Array1<f64>, f64, usize)> {
        let n = x.nrows() as f64;
        let lr = self.learning_rate;
        let mut w = Array1::<f64>::zeros(x.ncols());
        let mut b = 0.0;
        let par = matmul::nested_parallelism();
        for iter in 1..=self.max_iter {
            let mut residual = matmul::matvec(x, w.view(), par)?;
            Zip::from(&mut residual)
                .and(&y)
                .for_each(|r, &t| *r += b - t);
            let mut grad = matmul::matvec(x.t(), residual.view(), par)?;
            grad /= n;
            if self.penalty == Penalty::L2 {
                grad.scaled_add(self.alpha / n, &w);
            }
            let grad_b = if self.fit_intercept {
                reduction::sum(residual.view()) / n
            } else {
                0.0
            };
            let mut step = 0.0f64;
            Zip::from(&mut w).and(&grad).for_each(|wj, &g| {
                let mut next = *wj - lr * g;
                if self.penalty == Penalty::L1 {
                    // proximal step of alpha * |w|_1: soft thresholding
                    next = next.signum() * (next.abs() - lr * self.alpha).max(0.0);
                }
                step = step.max((next - *wj).abs());
                *wj = next;
            });
            b -= lr * grad_b;
            step = step.max((lr * grad_b).abs());
            if !step.is_finite() || !b.is_finite() {
                return Err(RustymlError::computation(format!(
                    "gradient descent diverged at iteration {iter}; lower learning_rate (now {lr}) or scale the features"
                )));
            }
            if step < self.tol {
                return Ok((w, b, iter));
            }
        }
        Ok((w, b, self.max_iter))
    }

    /// Predictions for `x`.
    pub fn predict<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array1<f64>> {
        let coef = self
            .coef
            .as_ref()
            .ok_or_else(|| RustymlError::not_fitted("LinearRegression"))?;
        let x = x.view();
        check_n_features(&x, coef.len(), "LinearRegression")?;
        let mut out = matmul::matvec(x, coef.view(), matmul::nested_parallelism())?;
        out += self.intercept;
        Ok(out)
    }

    /// R² of the predictions on `x` against `y`.
    pub fn score<S1, S2>(&self, x: &ArrayBase<S1, Ix2>, y: &ArrayBase<S2, Ix1>) -> Result<f64>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        let pred = self.predict(x)?;
        crate::metrics::checked::r2_score(y.view(), pred.view())
    }
}

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
        for (got, want) in model.coefficients().unwrap().iter().zip(w.iter()) {
            assert!((got - want).abs() < 1e-10);
        }
        assert!((model.intercept().unwrap() - b).abs() < 1e-10);
        assert!((model.score(&x, &y).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn gradient_descent_reaches_the_normal_solution() {
        let (x, y, _, _) = synthetic(300);
        let mut exact = LinearRegression::new(true).with_penalty(Penalty::L2, 0.5);
        exact.fit(&x, &y).unwrap();
        let mut gd = LinearRegression::new(true)
            .with_solver(Solver::GradientDescent)
            .with_penalty(Penalty::L2, 0.5)
            .with_learning_rate(0.05)
            .with_max_iter(200_000)
            .with_tol(1e-12);
        gd.fit(&x, &y).unwrap();
        for (a, b) in gd
            .coefficients()
            .unwrap()
            .iter()
            .zip(exact.coefficients().unwrap().iter())
        {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }

    #[test]
    fn lasso_zeroes_a_useless_feature() {
        let (mut x, y, _, _) = synthetic(300);
        x.column_mut(2).mapv_inplace(|v| v * 1e-3); // nearly useless after scaling down
        let mut gd = LinearRegression::new(true)
            .with_solver(Solver::GradientDescent)
            .with_penalty(Penalty::L1, 0.5)
            .with_learning_rate(0.05)
            .with_max_iter(100_000);
        gd.fit(&x, &y).unwrap();
        assert_eq!(gd.coefficients().unwrap()[2], 0.0);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let mut m = LinearRegression::new(true);
        assert!(matches!(
            m.predict(&Array2::<f64>::zeros((1, 1))),
            Err(RustymlError::NotFitted(_))
        ));
        assert!(m
            .fit(&Array2::<f64>::zeros((0, 2)), &Array1::<f64>::zeros(0))
            .is_err());
        assert!(m
            .fit(&array![[1.0], [f64::NAN]], &array![1.0, 2.0])
            .is_err());
        assert!(m.fit(&array![[1.0], [2.0]], &array![1.0]).is_err());
        let mut l1 = LinearRegression::new(true).with_penalty(Penalty::L1, 1.0);
        assert!(l1.fit(&array![[1.0], [2.0]], &array![1.0, 2.0]).is_err());
        let mut diverge = LinearRegression::new(true)
            .with_solver(Solver::GradientDescent)
            .with_learning_rate(10.0);
        assert!(matches!(
            diverge.fit(&array![[100.0], [200.0], [300.0]], &array![1.0, 2.0, 3.0]),
            Err(RustymlError::Computation { .. })
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
        m.save(&dir).unwrap();
        assert_eq!(
            LinearRegression::load(&dir).unwrap().coefficients(),
            m.coefficients()
        );
        std::fs::remove_file(dir).ok();
        assert!(LinearRegression::from_bytes(b"garbage").is_err());
    }
}
