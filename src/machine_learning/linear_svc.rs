//! Linear support vector classification with the squared hinge loss (liblinear's default,
//! scikit-learn's `LinearSVC`), L2 or L1 penalty; one-vs-rest for more than two classes.
//!
//! Primal objective per binary problem (targets `±1`), as liblinear:
//!
//! * L2: `0.5 |w|^2 + C sum_i max(0, 1 - y_i (w·x_i + b))^2`
//! * L1: `|w|_1 + C sum_i max(0, 1 - y_i (w·x_i + b))^2`
//!
//! With `fit_intercept`, as liblinear, the intercept is a weight on a constant feature of value
//! `intercept_scaling`, so it is penalised like the other weights. The objective is scaled by
//! `1 / (C n)` and minimised by a truncated Newton method for L2 (like liblinear's primal
//! solver; Hessian-vector products over the margin violators) and by OWL-QN for L1, both from
//! [`optimize`]; each evaluation is two products through gemmkit and one fused squared-hinge
//! pass ([`losses`]).

use crate::error::{Result, RustymlError};
use crate::machine_learning::labels;
use crate::machine_learning::logistic_regression::{accuracy, scores};
use crate::machine_learning::validation::{check_n_features, check_xy};
use crate::machine_learning::Penalty;
use crate::math::optimize::SecondOrder;
use crate::math::{losses, matmul, optimize, reduction};
use crate::persistence::Persist;
use ndarray::{s, Array1, Array2, ArrayBase, ArrayView1, ArrayView2, Data, Ix1, Ix2, Zip};
use serde::{Deserialize, Serialize};

/// Linear SVM classifier with scikit-learn's `LinearSVC` hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinearSVC {
    /// `L2` (default) or `L1`.
    pub penalty: Penalty,
    /// Inverse regularisation strength (`> 0`).
    pub c: f64,
    pub fit_intercept: bool,
    /// Value of the constant feature that carries the intercept (liblinear's `-B`).
    pub intercept_scaling: f64,
    pub max_iter: usize,
    /// Stop when the largest entry of the scaled objective's (pseudo-)gradient is at most this.
    pub tol: f64,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    classes: Array1<f64>,
    coef: Array2<f64>,
    intercept: Array1<f64>,
    n_iter: usize,
    converged: bool,
}

impl Default for LinearSVC {
    fn default() -> Self {
        Self::new()
    }
}

impl LinearSVC {
    /// scikit-learn's defaults: L2, `C = 1`, intercept with scaling 1, `max_iter = 1000`,
    /// `tol = 1e-4`.
    pub fn new() -> Self {
        Self {
            penalty: Penalty::L2,
            c: 1.0,
            fit_intercept: true,
            intercept_scaling: 1.0,
            max_iter: 1000,
            tol: 1e-4,
            fitted: None,
        }
    }

    pub fn with_penalty(mut self, penalty: Penalty) -> Self {
        self.penalty = penalty;
        self
    }

    pub fn with_c(mut self, c: f64) -> Self {
        self.c = c;
        self
    }

    pub fn with_fit_intercept(mut self, fit_intercept: bool) -> Self {
        self.fit_intercept = fit_intercept;
        self
    }

    pub fn with_intercept_scaling(mut self, intercept_scaling: f64) -> Self {
        self.intercept_scaling = intercept_scaling;
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

    /// Sorted distinct training labels (`classes_`).
    pub fn classes(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.classes)
    }

    /// Weights (`coef_`): `1 x d` for two classes (positive favours `classes[1]`), one row per
    /// class (one-vs-rest) otherwise.
    pub fn coefficients(&self) -> Option<&Array2<f64>> {
        self.fitted.as_ref().map(|f| &f.coef)
    }

    /// Intercepts (`intercept_`), one per row of the weights.
    pub fn intercept(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.intercept)
    }

    /// Largest iteration count over the binary problems (`n_iter_`).
    pub fn n_iter(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.n_iter)
    }

    /// Whether every binary problem met `tol` before `max_iter`.
    pub fn converged(&self) -> Option<bool> {
        self.fitted.as_ref().map(|f| f.converged)
    }

    fn check_params(&self) -> Result<()> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(RustymlError::invalid(format!(
                "C must be a finite number > 0, got {}",
                self.c
            )));
        }
        if self.penalty == Penalty::None {
            return Err(RustymlError::invalid(
                "LinearSVC penalty must be 'l1' or 'l2'",
            ));
        }
        if self.fit_intercept
            && !(self.intercept_scaling.is_finite() && self.intercept_scaling > 0.0)
        {
            return Err(RustymlError::invalid(format!(
                "intercept_scaling must be a finite number > 0, got {}",
                self.intercept_scaling
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
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) and labels `y` (at least two distinct).
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
        let (classes, index) = labels::encode(y, "LinearSVC")?;
        let k = classes.len();
        // Two classes: one problem, +1 for classes[1]. More: one-vs-rest per class.
        let positives: Vec<usize> = if k == 2 { vec![1] } else { (0..k).collect() };
        let d = x.ncols();
        let mut coef = Array2::zeros((positives.len(), d));
        let mut intercept = Array1::zeros(positives.len());
        let (mut n_iter, mut converged) = (0, true);
        for (row, &pos) in positives.iter().enumerate() {
            let target =
                Array1::from_iter(index.iter().map(|&c| if c == pos { 1.0 } else { -1.0 }));
            let (w, b, iters, ok) = self.fit_binary(x, target.view())?;
            coef.row_mut(row).assign(&w);
            intercept[row] = b;
            n_iter = n_iter.max(iters);
            converged &= ok;
        }
        self.fitted = Some(Fitted {
            classes,
            coef,
            intercept,
            n_iter,
            converged,
        });
        Ok(self)
    }

    fn fit_binary(
        &self,
        x: ArrayView2<f64>,
        y: ArrayView1<f64>,
    ) -> Result<(Array1<f64>, f64, usize, bool)> {
        let (n, d) = (x.nrows() as f64, x.ncols());
        let reg = 1.0 / (self.c * n);
        let y = y.as_standard_layout();
        let mut problem = SquaredHinge {
            x,
            y: y.as_slice().expect("standard layout"),
            scaling: if self.fit_intercept {
                self.intercept_scaling
            } else {
                0.0
            },
            l2: if self.penalty == Penalty::L2 {
                reg
            } else {
                0.0
            },
            active: Vec::new(),
        };
        let opts = optimize::LbfgsOptions {
            max_iter: self.max_iter,
            gtol: self.tol,
            ftol: 64.0 * f64::EPSILON,
            l1: if self.penalty == Penalty::L1 {
                reg
            } else {
                0.0
            },
            // The intercept weight is penalised too (liblinear); without an intercept it
            // stays at zero, its gradient being zero.
            l1_mask: None,
            ..Default::default()
        };
        let theta0 = Array1::zeros(d + 1);
        let r = if self.penalty == Penalty::L2 {
            // Truncated Newton, as liblinear's primal solver: robust to badly scaled features.
            optimize::minimize_newton_cg(&mut problem, theta0, &opts)?
        } else {
            optimize::minimize(|theta, grad| problem.eval(theta, grad), theta0, &opts)?
        };
        let w = r.x.slice(s![..d]).to_owned();
        Ok((w, problem.scaling * r.x[d], r.n_iter, r.converged))
    }

    fn fitted(&self) -> Result<&Fitted> {
        self.fitted
            .as_ref()
            .ok_or_else(|| RustymlError::not_fitted("LinearSVC"))
    }

    /// Signed distances to the hyperplanes (`decision_function`): `n x 1` for two classes
    /// (positive favours `classes[1]`), `n x n_classes` otherwise.
    pub fn decision_function<S: Data<Elem = f64>>(
        &self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        let x = x.view();
        check_n_features(&x, f.coef.ncols(), "LinearSVC")?;
        Ok(scores(x, f.coef.view(), f.intercept.view()))
    }

    /// Predicted labels.
    pub fn predict<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array1<f64>> {
        let z = self.decision_function(x)?;
        let classes = &self.fitted()?.classes;
        if z.ncols() == 1 {
            Ok(z.column(0)
                .mapv(|v| if v > 0.0 { classes[1] } else { classes[0] }))
        } else {
            Ok(labels::decode(classes, &labels::row_argmax(z.view())))
        }
    }

    /// Mean accuracy on `x` against `y`.
    pub fn score<S1, S2>(&self, x: &ArrayBase<S1, Ix2>, y: &ArrayBase<S2, Ix1>) -> Result<f64>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        accuracy(self.predict(x)?.view(), y.view())
    }
}

/// The scaled primal of one binary problem over `theta = [w, v]` (intercept `scaling * v`,
/// penalised like `w`): `mean(max(0, 1 - y z)^2) + l2 |theta|^2 / 2`, `z = x w + scaling v`.
struct SquaredHinge<'a> {
    x: ArrayView2<'a, f64>,
    y: &'a [f64],
    scaling: f64,
    l2: f64,
    /// 1 where the margin is violated at the last evaluated point, else 0.
    active: Vec<f64>,
}

impl SquaredHinge<'_> {
    /// `[x, scaling] · theta`.
    fn scores(&self, theta: ArrayView1<f64>) -> Result<Array1<f64>> {
        let d = self.x.ncols();
        let mut z = matmul::matvec(self.x, theta.slice(s![..d]), matmul::nested_parallelism())?;
        z += self.scaling * theta[d];
        Ok(z)
    }

    /// `[x, scaling]ᵀ · u`.
    fn scores_t(&self, u: ArrayView1<f64>) -> Result<Array1<f64>> {
        let d = self.x.ncols();
        let mut out = Array1::zeros(d + 1);
        out.slice_mut(s![..d]).assign(&matmul::matvec(
            self.x.t(),
            u,
            matmul::nested_parallelism(),
        )?);
        out[d] = if self.scaling > 0.0 {
            self.scaling * reduction::sum(u)
        } else {
            0.0
        };
        Ok(out)
    }
}

impl optimize::SecondOrder for SquaredHinge<'_> {
    fn eval(&mut self, theta: ArrayView1<f64>, grad: &mut Array1<f64>) -> Result<f64> {
        let n = self.x.nrows() as f64;
        let z = self.scores(theta)?;
        let mut r = vec![0.0; z.len()];
        let loss =
            losses::squared_hinge_loss_grad(z.as_slice().expect("fresh array"), self.y, &mut r);
        self.active = r
            .iter()
            .map(|&v| if v != 0.0 { 1.0 } else { 0.0 })
            .collect();
        let g = self.scores_t(Array1::from(r).view())?;
        Zip::from(grad)
            .and(&g)
            .and(&theta)
            .for_each(|out, &gl, &t| *out = gl / n + self.l2 * t);
        Ok(loss / n + 0.5 * self.l2 * theta.dot(&theta))
    }

    /// Generalised Hessian `l2 I + (2 / n) X_Aᵀ X_A` over the margin violators `A`.
    fn hess_vec(&self, v: ArrayView1<f64>) -> Result<Array1<f64>> {
        let n = self.x.nrows() as f64;
        let mut xv = self.scores(v)?;
        Zip::from(&mut xv)
            .and(&self.active[..])
            .for_each(|u, &a| *u *= a);
        let mut out = self.scores_t(xv.view())?;
        Zip::from(&mut out)
            .and(&v)
            .for_each(|o, &vi| *o = *o * (2.0 / n) + self.l2 * vi);
        Ok(out)
    }
}

impl Persist for LinearSVC {
    const MODEL_NAME: &'static str = "LinearSVC";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Axis};

    fn blobs(per_class: usize, k: usize) -> (Array2<f64>, Array1<f64>) {
        let centers = [(-4.0, 0.0), (4.0, 1.0), (0.0, 6.0), (5.0, 7.0)];
        let n = per_class * k;
        let x = Array2::from_shape_fn((n, 2), |(i, j)| {
            let c = centers[i % k];
            let jitter = ((i * 7919 + j * 104_729) % 1000) as f64 / 500.0 - 1.0;
            if j == 0 {
                c.0 + jitter
            } else {
                c.1 + jitter
            }
        });
        let y = Array1::from_iter((0..n).map(|i| (i % k) as f64 * 2.0 - 1.0));
        (x, y)
    }

    #[test]
    fn one_dimensional_problem_matches_the_hand_solution() {
        // Points -1 (class 0) and +1 (class 1), no intercept, C = 1:
        // minimise 0.5 w^2 + 2 (1 - w)^2 (both points active) => w = 4/5.
        let x = array![[-1.0], [1.0]];
        let y = array![0.0, 1.0];
        let mut m = LinearSVC::new().with_fit_intercept(false).with_tol(1e-10);
        m.fit(&x, &y).unwrap();
        assert!((m.coefficients().unwrap()[[0, 0]] - 0.8).abs() < 1e-9);
        assert_eq!(m.intercept().unwrap()[0], 0.0);
        // With the intercept feature (value 1, penalised): by symmetry b = 0, same w.
        let mut m = LinearSVC::new().with_tol(1e-10);
        m.fit(&x, &y).unwrap();
        assert!((m.coefficients().unwrap()[[0, 0]] - 0.8).abs() < 1e-9);
        assert!(m.intercept().unwrap()[0].abs() < 1e-9);
    }

    #[test]
    fn optimum_satisfies_the_first_order_conditions() {
        // Overlapping classes so several margins are active; check the primal gradient:
        // w + 2C sum_i -y_i max(0, 1 - y_i z_i) x_i = 0 (the intercept likewise, feature 1).
        let x = array![
            [0.0, 1.0],
            [1.0, 0.5],
            [2.0, -1.0],
            [3.0, 0.0],
            [1.5, 2.0],
            [2.5, 1.0],
            [1.0, 1.0]
        ];
        let y = array![0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0];
        let mut m = LinearSVC::new().with_c(0.7).with_tol(1e-12);
        m.fit(&x, &y).unwrap();
        let w = m.coefficients().unwrap().row(0).to_owned();
        let b = m.intercept().unwrap()[0];
        let t = y.mapv(|v| if v == 1.0 { 1.0 } else { -1.0 });
        let z = x.dot(&w) + b;
        let r = Zip::from(&z)
            .and(&t)
            .map_collect(|&zi, &ti| -2.0 * ti * (1.0 - ti * zi).max(0.0));
        let gw = &w + &(x.t().dot(&r) * 0.7);
        let gb = b + 0.7 * r.sum();
        assert!(gw.iter().all(|v| v.abs() < 1e-8), "{gw}");
        assert!(gb.abs() < 1e-8);
    }

    #[test]
    fn one_vs_rest_separates_four_blobs() {
        let (x, y) = blobs(25, 4);
        let mut m = LinearSVC::new();
        m.fit(&x, &y).unwrap();
        assert_eq!(m.coefficients().unwrap().dim(), (4, 2));
        assert_eq!(m.classes().unwrap().to_vec(), vec![-1.0, 1.0, 3.0, 5.0]);
        assert_eq!(m.score(&x, &y).unwrap(), 1.0);
        assert!(m.converged().unwrap());
        let mut l1 = LinearSVC::new().with_penalty(Penalty::L1);
        l1.fit(&x, &y).unwrap();
        assert!(l1.score(&x, &y).unwrap() >= 0.95);
    }

    #[test]
    fn l1_zeroes_a_useless_feature() {
        let (x, y) = blobs(30, 2);
        let noise = Array1::from_shape_fn(x.nrows(), |i| ((i * 31) % 7) as f64 * 1e-3);
        let x3 = ndarray::concatenate![Axis(1), x, noise.insert_axis(Axis(1))];
        let mut m = LinearSVC::new().with_penalty(Penalty::L1).with_c(0.1);
        m.fit(&x3, &y).unwrap();
        assert_eq!(m.coefficients().unwrap()[[0, 2]], 0.0);
        assert_eq!(m.score(&x3, &y).unwrap(), 1.0);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = array![[0.0], [1.0]];
        let y = array![0.0, 1.0];
        assert!(matches!(
            LinearSVC::new().predict(&x),
            Err(RustymlError::NotFitted(_))
        ));
        assert!(LinearSVC::new().with_c(-1.0).fit(&x, &y).is_err());
        assert!(LinearSVC::new()
            .with_penalty(Penalty::None)
            .fit(&x, &y)
            .is_err());
        assert!(LinearSVC::new().fit(&x, &array![3.0, 3.0]).is_err());
        assert!(LinearSVC::new()
            .fit(&array![[f64::INFINITY], [1.0]], &y)
            .is_err());
        assert!(LinearSVC::new()
            .fit(&Array2::<f64>::zeros((0, 1)), &Array1::zeros(0))
            .is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let (x, y) = blobs(10, 3);
        let mut m = LinearSVC::new();
        m.fit(&x, &y).unwrap();
        let back = LinearSVC::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.decision_function(&x).unwrap(),
            m.decision_function(&x).unwrap()
        );
    }
}
