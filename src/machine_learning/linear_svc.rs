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

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::labels;
use crate::machine_learning::linear_model::require_xy;
use crate::machine_learning::linear_regression::check_regularization;
use crate::machine_learning::logistic_regression::scores;
use crate::machine_learning::validation::{
    check_xy, require_data_width, require_non_negative, require_nonzero, require_positive,
};
use crate::machine_learning::Penalty;
use crate::math::optimize::SecondOrder;
use crate::math::{losses, matmul, optimize, reduction};
use crate::persistence::Persist;
use ndarray::{s, Array1, Array2, ArrayRef1, ArrayRef2, ArrayView1, ArrayView2, Zip};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

pub use crate::machine_learning::types::RegularizationType;

/// The margin loss of the original API's stochastic solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum Loss {
    /// `max(0, 1 - y z)`.
    Hinge,
    /// `max(0, 1 - y z)^2`.
    SquaredHinge,
}

/// How [`LinearSVC`] finds its weights; each solver has its own objective, settings and
/// label contract. The original constructor ([`LinearSVC::new`]) picks `MinibatchSgd`,
/// [`LinearSVC::with_defaults`] (scikit-learn's `LinearSVC`, the Python binding) `Liblinear`.
///
/// The variants stand where a `bool` stood in the saved format, in its order, so files and
/// pickles written before load unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum LinearSvcSolver {
    /// Minibatch (sub)gradient descent on `mean(loss) + (λ/2)|w|²` (or `+ λ|w|_1`) over
    /// labels 0 and 1: `learning_rate`, `learning_rate_decay`, `loss`, `regularization`,
    /// `random_state`; stops when an epoch moves no parameter by more than `tol`.
    MinibatchSgd,
    /// liblinear's primal squared-hinge objective with `C` and `penalty` (truncated Newton
    /// for L2, OWL-QN for L1) over any labels, one-vs-rest beyond two classes; stops when the
    /// largest (pseudo-)gradient entry of the scaled objective is at most `tol`.
    Liblinear,
}

/// Rows per minibatch of the original API's stochastic solver.
const BATCH: usize = 32;

/// Linear SVM classifier, solved by one of two [`LinearSvcSolver`]s.
///
/// The original API ([`new`](Self::new)): labels 0/1, minibatch (sub)gradient descent, rows
/// shuffled every epoch from `random_state` (or the global seed), step
/// `learning_rate / (1 + decay * epoch)`. scikit-learn's `LinearSVC`
/// ([`with_defaults`](Self::with_defaults)): liblinear's objective with `C`, squared hinge,
/// one-vs-rest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinearSVC {
    /// `L2` (default) or `L1` (`Liblinear`).
    pub(crate) penalty: Penalty,
    /// Inverse regularisation strength (`> 0`, `Liblinear`).
    pub(crate) c: f64,
    pub(crate) fit_intercept: bool,
    /// Value of the constant feature that carries the intercept (liblinear's `-B`).
    pub(crate) intercept_scaling: f64,
    pub(crate) max_iter: usize,
    /// `Liblinear`: stop when the largest entry of the scaled objective's (pseudo-)gradient
    /// is at most this. `MinibatchSgd`: the largest parameter move in an epoch.
    pub(crate) tol: f64,
    learning_rate: f64,
    learning_rate_decay: f64,
    regularization: RegularizationType,
    loss: Loss,
    random_state: Option<u64>,
    solver: LinearSvcSolver,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    classes: Array1<f64>,
    coef: Array2<f64>,
    intercept: Array1<f64>,
    n_iter: usize,
    converged: bool,
    /// The binary weight vector (first row of `coef`).
    weights: Array1<f64>,
}

impl Default for LinearSVC {
    /// `max_iter = 1000`, learning rate 0.001, `L2(1.0)`, intercept, `tol = 1e-4`, hinge loss,
    /// no decay.
    fn default() -> Self {
        Self::new(1000, 0.001, RegularizationType::L2(1.0), true, 1e-4).expect("valid defaults")
    }
}

impl LinearSVC {
    /// The original API's solver settings (`InvalidParameter` for `max_iter == 0`, a learning
    /// rate or tolerance not finite and `> 0`, or a negative/non-finite penalty).
    pub fn new(
        max_iter: usize,
        learning_rate: f64,
        penalty: RegularizationType,
        fit_intercept: bool,
        tol: f64,
    ) -> Result<Self> {
        let model = Self {
            penalty: Penalty::L2,
            c: 1.0,
            fit_intercept,
            intercept_scaling: 1.0,
            max_iter,
            tol,
            learning_rate,
            learning_rate_decay: 0.0,
            regularization: penalty,
            loss: Loss::Hinge,
            random_state: None,
            solver: LinearSvcSolver::MinibatchSgd,
            fitted: None,
        };
        model.check_params()?;
        Ok(model)
    }

    crate::accessors::builder_setters! {
        with_loss(loss: Loss),
        with_solver(solver: LinearSvcSolver),
        with_penalty(penalty: Penalty),
        with_c(c: f64),
        with_fit_intercept(fit_intercept: bool),
        with_intercept_scaling(intercept_scaling: f64),
        with_max_iter(max_iter: usize),
        with_tol(tol: f64),
        with_random_state(random_state: Some(u64)),
    }

    crate::accessors::field_getters! {
        get_fit_intercept -> fit_intercept: bool,
        get_learning_rate -> learning_rate: f64,
        get_learning_rate_decay -> learning_rate_decay: f64,
        get_tolerance -> tol: f64,
        get_max_iterations -> max_iter: usize,
        get_penalty -> regularization: RegularizationType,
        get_loss -> loss: Loss,
        get_random_state -> random_state: Option<u64>,
        get_solver -> solver: LinearSvcSolver,
    }

    crate::accessors::checked_setters! {
        /// Step decay per epoch (negative or non-finite -> `InvalidParameter`).
        with_learning_rate_decay(learning_rate_decay: f64),
    }

    /// scikit-learn's `LinearSVC` defaults: the `Liblinear` solver, L2, `C = 1`, intercept
    /// with scaling 1, `max_iter = 1000`, `tol = 1e-4`; parameters are checked at `fit`.
    pub fn with_defaults() -> Self {
        Self {
            solver: LinearSvcSolver::Liblinear,
            ..Self::default()
        }
    }

    /// The weights of a binary fit.
    pub fn get_weights(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.weights)
    }

    /// The bias of a binary fit (0 without an intercept).
    pub fn get_bias(&self) -> Option<f64> {
        self.fitted.as_ref().map(|f| f.intercept[0])
    }

    /// The one check of LinearSVC's hyper-parameters, for every door: those of the solver
    /// it will run (scikit-learn's `tol` may be 0, the original's minibatch SGD needs > 0).
    pub fn check_params(&self) -> Result<()> {
        require_nonzero("max_iter", self.max_iter)?;
        match self.solver {
            LinearSvcSolver::MinibatchSgd => {
                require_positive("learning_rate", self.learning_rate)?;
                require_positive("tol", self.tol)?;
                require_non_negative("learning_rate_decay", self.learning_rate_decay)?;
                check_regularization(self.regularization)
            }
            LinearSvcSolver::Liblinear => {
                require_positive("C", self.c)?;
                if self.penalty == Penalty::None {
                    return Err(Error::invalid_parameter("penalty", "must be 'l1' or 'l2'"));
                }
                if self.fit_intercept {
                    require_positive("intercept_scaling", self.intercept_scaling)?;
                }
                require_non_negative("tol", self.tol)
            }
        }
    }

    /// Fit to `x` (`n_samples x n_features`) and labels `y`.
    ///
    /// `MinibatchSgd`: labels 0 or 1 (`InvalidInput` otherwise), empty -> `EmptyInput`,
    /// NaN/inf -> `NonFinite`, length mismatch -> `DimensionMismatch`, exploding weights ->
    /// `NonFinite`. `Liblinear`: any labels, at least two distinct (one-vs-rest beyond two),
    /// scikit-learn's checks and messages.
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<&mut Self> {
        let (x, y) = (x.view(), y.view());
        if self.solver == LinearSvcSolver::MinibatchSgd {
            self.check_params()?;
            require_xy(&x, &y)?;
            if let Some(bad) = y.iter().find(|&&v| v != 0.0 && v != 1.0) {
                return Err(Error::invalid_input(format!(
                    "labels must be 0 or 1, found {bad}"
                )));
            }
            let target = y.mapv(|v| if v == 1.0 { 1.0 } else { -1.0 });
            let (w, b, n_iter, converged) = self.fit_sgd(x, target.view())?;
            self.fitted = Some(Fitted {
                classes: Array1::from(vec![0.0, 1.0]),
                coef: w.clone().insert_axis(ndarray::Axis(0)),
                intercept: Array1::from_elem(1, b),
                n_iter,
                converged,
                weights: w,
            });
            return Ok(self);
        }
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
        let weights = coef.row(0).to_owned();
        self.fitted = Some(Fitted {
            classes,
            coef,
            intercept,
            n_iter,
            converged,
            weights,
        });
        Ok(self)
    }

    /// The original API's solver: minibatch (sub)gradient descent on targets `±1`.
    fn fit_sgd(
        &self,
        x: ArrayView2<f64>,
        y: ArrayView1<f64>,
    ) -> Result<(Array1<f64>, f64, usize, bool)> {
        let (n, d) = x.dim();
        let mut rng = crate::random::rng_from(self.random_state);
        let mut order: Vec<usize> = (0..n).collect();
        let mut w = Array1::<f64>::zeros(d);
        let mut b = 0.0f64;
        let mut grad = Array1::<f64>::zeros(d);
        for epoch in 1..=self.max_iter {
            let lr = self.learning_rate / (1.0 + self.learning_rate_decay * (epoch - 1) as f64);
            order.shuffle(&mut rng);
            let mut moved = 0.0f64;
            for batch in order.chunks(BATCH) {
                grad.fill(0.0);
                let mut grad_b = 0.0;
                for &i in batch {
                    let row = x.row(i);
                    let slack = 1.0 - y[i] * (row.dot(&w) + b);
                    if slack > 0.0 {
                        // d loss / d z for z = w·x + b
                        let g = match self.loss {
                            Loss::Hinge => -y[i],
                            Loss::SquaredHinge => -2.0 * slack * y[i],
                        };
                        grad.scaled_add(g, &row);
                        grad_b += g;
                    }
                }
                let m = batch.len() as f64;
                grad /= m;
                match self.regularization {
                    RegularizationType::L2(lambda) => grad.scaled_add(lambda, &w),
                    // Subgradient of λ|w|_1, zero at zero (a zero weight stays put).
                    RegularizationType::L1(lambda) => {
                        Zip::from(&mut grad).and(&w).for_each(|g, &wj| {
                            if wj != 0.0 {
                                *g += lambda * wj.signum();
                            }
                        })
                    }
                }
                for (wj, &g) in w.iter_mut().zip(&grad) {
                    let step = lr * g;
                    moved = moved.max(step.abs());
                    *wj -= step;
                }
                if self.fit_intercept {
                    let step = lr * grad_b / m;
                    moved = moved.max(step.abs());
                    b -= step;
                }
                if !(b.is_finite() && w.iter().all(|v| v.is_finite())) {
                    return Err(Error::non_finite(format!(
                        "LinearSVC weights (they exploded at epoch {epoch}; lower the learning rate)"
                    )));
                }
            }
            if moved < self.tol {
                return Ok((w, b, epoch, true));
            }
        }
        Ok((w, b, self.max_iter, false))
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
        fitted_state(&self.fitted, "LinearSVC")
    }

    /// Signed distances to the hyperplanes (scikit-learn's `decision_function`): `n x 1` for
    /// two classes (positive favours `classes[1]`), `n x n_classes` otherwise.
    pub fn decision_scores(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        require_data_width(&x, f.coef.ncols(), "x")?;
        Ok(scores(x, f.coef.view(), f.intercept.view()))
    }

    /// `x · w + b` of a binary fit.
    pub fn decision_function(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let z = self.decision_scores(x.view())?;
        Ok(z.column(0).to_owned())
    }

    /// Predicted labels (1.0 where the score is positive, for the original's 0/1 labels).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let z = self.decision_scores(x.view())?;
        Ok(labels::from_scores(
            &self.fitted()?.classes,
            z.view(),
            false,
        ))
    }
}

crate::machine_learning::linear_model::supervised_traits!(LinearSVC, f64, Array1<f64>);
crate::machine_learning::linear_model::supervised_conveniences!(LinearSVC: fit_predict, accuracy_score);
crate::machine_learning::path_persistence!(LinearSVC);
crate::machine_learning::logistic_regression::linear_classifier_accessors!(LinearSVC);

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
        let mut m = LinearSVC::with_defaults()
            .with_fit_intercept(false)
            .with_tol(1e-10);
        m.fit(&x, &y).unwrap();
        assert!((m.coefficients().unwrap()[[0, 0]] - 0.8).abs() < 1e-9);
        assert_eq!(m.intercept().unwrap()[0], 0.0);
        // With the intercept feature (value 1, penalised): by symmetry b = 0, same w.
        let mut m = LinearSVC::with_defaults().with_tol(1e-10);
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
        let mut m = LinearSVC::with_defaults().with_c(0.7).with_tol(1e-12);
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
        let mut m = LinearSVC::with_defaults();
        m.fit(&x, &y).unwrap();
        assert_eq!(m.coefficients().unwrap().dim(), (4, 2));
        assert_eq!(m.classes().unwrap().to_vec(), vec![-1.0, 1.0, 3.0, 5.0]);
        assert_eq!(m.score(&x, &y).unwrap(), 1.0);
        assert!(m.converged().unwrap());
        let mut l1 = LinearSVC::with_defaults().with_penalty(Penalty::L1);
        l1.fit(&x, &y).unwrap();
        assert!(l1.score(&x, &y).unwrap() >= 0.95);
    }

    #[test]
    fn l1_zeroes_a_useless_feature() {
        let (x, y) = blobs(30, 2);
        let noise = Array1::from_shape_fn(x.nrows(), |i| ((i * 31) % 7) as f64 * 1e-3);
        let x3 = ndarray::concatenate![Axis(1), x, noise.insert_axis(Axis(1))];
        let mut m = LinearSVC::with_defaults()
            .with_penalty(Penalty::L1)
            .with_c(0.1);
        m.fit(&x3, &y).unwrap();
        assert_eq!(m.coefficients().unwrap()[[0, 2]], 0.0);
        assert_eq!(m.score(&x3, &y).unwrap(), 1.0);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = array![[0.0], [1.0]];
        let y = array![0.0, 1.0];
        assert!(matches!(
            LinearSVC::with_defaults().predict(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(LinearSVC::with_defaults().with_c(-1.0).fit(&x, &y).is_err());
        assert!(LinearSVC::with_defaults()
            .with_penalty(Penalty::None)
            .fit(&x, &y)
            .is_err());
        assert!(LinearSVC::with_defaults()
            .fit(&x, &array![3.0, 3.0])
            .is_err());
        assert!(LinearSVC::with_defaults()
            .fit(&array![[f64::INFINITY], [1.0]], &y)
            .is_err());
        assert!(LinearSVC::with_defaults()
            .fit(&Array2::<f64>::zeros((0, 1)), &Array1::zeros(0))
            .is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let (x, y) = blobs(10, 3);
        let mut m = LinearSVC::with_defaults();
        m.fit(&x, &y).unwrap();
        let back = LinearSVC::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.decision_scores(x.view()).unwrap(),
            m.decision_scores(x.view()).unwrap()
        );
    }

    /// Original API: minibatch descent separates well-separated 0/1 data, a seed fixes the
    /// minibatch order, and an exploding step is `NonFinite`.
    #[test]
    fn original_api_sgd_contract() {
        let x = array![
            [-5.0, 0.0],
            [-6.0, 0.3],
            [-4.0, -0.2],
            [5.0, 0.1],
            [6.0, -0.3],
            [4.0, 0.0]
        ];
        let y = array![0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let fit = |seed| {
            let mut m = LinearSVC::new(2000, 0.01, RegularizationType::L2(0.01), true, 1e-6)
                .unwrap()
                .with_random_state(seed);
            m.fit(&x, &y).unwrap();
            m
        };
        let (a, b) = (fit(3), fit(3));
        assert_eq!(a.get_weights(), b.get_weights());
        assert_eq!(a.predict(&x).unwrap(), y);
        assert!(matches!(
            LinearSVC::new(0, 0.01, RegularizationType::L2(1.0), true, 1e-4),
            Err(Error::InvalidParameter { .. })
        ));
        let mut huge = LinearSVC::new(50, f64::MAX, RegularizationType::L2(1.0), true, 1e-6)
            .unwrap()
            .with_random_state(0);
        assert!(matches!(
            huge.fit(&(&x * 1e8), &y),
            Err(Error::NonFinite(_))
        ));
        assert!(matches!(
            a.predict(&Array2::<f64>::zeros((1, 3))),
            Err(Error::DimensionMismatch {
                expected: 2,
                found: 3
            })
        ));
    }
}
