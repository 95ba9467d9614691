//! Logistic regression: binary (one coefficient vector, like scikit-learn) and multinomial
//! (softmax over all classes), with L2, L1 or no penalty.
//!
//! Objective, scaled by `1 / n` as in scikit-learn's `lbfgs` path (same minimiser as
//! `C * sum(loss) + penalty(w)`):
//!
//! * L2: `mean(loss) + |W|^2 / (2 C n)`
//! * L1: `mean(loss) + |W|_1 / (C n)`
//! * none: `mean(loss)`
//!
//! With sample weights `s_i` ([`LogisticRegression::fit_weighted`]) the mean is weighted and
//! `n` becomes `S = sum(s_i)`, scikit-learn's `sw_sum`: `sum(s_i loss_i) / S + |W|^2 / (2 C S)`,
//! the minimiser of `C * sum(s_i loss_i) + |W|^2 / 2`. Intercepts are never penalised. The
//! multinomial model keeps one row per class (no reference class dropped); from a zero
//! start its intercepts keep summing to zero, the one direction the loss does not see. The default solver is L-BFGS ([`optimize::minimize`]),
//! which becomes OWL-QN for the L1 penalty; plain (proximal) gradient descent with a fixed
//! `learning_rate` is available too, and for L2 or no penalty scikit-learn's Newton-Cholesky
//! iteration ([`crate::machine_learning::logistic_newton`]). Each objective evaluation is two products through
//! gemmkit and one fused loss/gradient pass ([`losses`], gate `exp_reduce`).

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::labels;
use crate::machine_learning::linear_model::require_xy;
use crate::machine_learning::linear_regression::check_regularization;
use crate::machine_learning::logistic_newton::{self, NewtonStop};
use crate::machine_learning::options::ClassLabels;
use crate::machine_learning::validation::{
    check_xy, require_data_width, require_non_negative, require_nonzero, require_positive,
};
use crate::math::{elementwise, losses, matmul, optimize};
use crate::persistence::Persist;
use ndarray::{
    s, Array1, Array2, ArrayBase, ArrayRef1, ArrayRef2, ArrayView1, ArrayView2, Axis, Data, Ix2,
    Zip,
};
use serde::{Deserialize, Serialize};

pub use crate::machine_learning::types::RegularizationType;

/// scikit-learn's penalty choice (the Python layer), with strength `1 / C` on the summed loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Penalty {
    None,
    L1,
    L2,
}

/// How the coefficients are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LogisticSolver {
    /// L-BFGS (OWL-QN for the L1 penalty), stopping when the largest gradient entry is at
    /// most `tol` (scikit-learn's `lbfgs` rule).
    Lbfgs,
    /// Full-batch gradient descent with step `learning_rate` (proximal for L1), stopping
    /// when no parameter moves more than `tol` in one step.
    GradientDescent,
    /// Newton's method with the Hessian solved by Cholesky, step for step scikit-learn's
    /// `newton-cholesky` ([`crate::machine_learning::logistic_newton`]): L2 or no penalty.
    NewtonCholesky,
    /// Truncated Newton with conjugate gradients, scikit-learn's `newton-cg` where its line
    /// search takes its first trial step ([`crate::machine_learning::logistic_newton`]).
    NewtonCg,
}

/// The class a binary score of exactly 0 (a probability of one half) predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZeroScoreClass {
    /// The second class: a probability of at least 0.5 predicts 1 (the original API).
    Positive,
    /// The first class: only a positive score predicts `classes[1]` (scikit-learn).
    Negative,
}

crate::machine_learning::options::paired_options! {
    /// The options that tell the original API's logistic regression from scikit-learn's;
    /// saved as one byte (see [`crate::machine_learning::options`]).
    pub struct LogisticOptions ("LogisticRegression") {
        pub labels: ClassLabels { ZeroOne, Observed },
        pub zero_score: ZeroScoreClass { Positive, Negative },
    }
    /// The original API's: labels 0/1, a score of 0 predicts 1.
    ORIGINAL;
    /// scikit-learn's: any labels, a score of 0 predicts the first class.
    SCIKIT_LEARN;
}

/// Logistic regression classifier.
///
/// The original API ([`new`](Self::new)): labels 0/1, gradient descent, penalty
/// `RegularizationType` per sample (`mean(loss) + (alpha/2)|w|^2` or `+ alpha |w|_1`).
/// scikit-learn's ([`with_defaults`](Self::with_defaults)): any labels (multinomial for more
/// than two), its `penalty` and `C` (strength `1 / (C n)` per sample), L-BFGS. The two
/// penalties add; each door sets one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogisticRegression {
    pub(crate) fit_intercept: bool,
    pub(crate) penalty: Penalty,
    /// Inverse regularisation strength (`> 0`) of `penalty`.
    pub(crate) c: f64,
    pub(crate) max_iter: usize,
    pub(crate) tol: f64,
    pub(crate) solver: LogisticSolver,
    /// Step of the gradient-descent solver.
    pub(crate) learning_rate: f64,
    /// The original API's per-sample penalty, added to `penalty`'s.
    regularization: Option<RegularizationType>,
    options: LogisticOptions,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fitted {
    classes: Array1<f64>,
    /// `1 x d` for two classes, `k x d` otherwise.
    coef: Array2<f64>,
    intercept: Array1<f64>,
    n_iter: usize,
    converged: bool,
    /// How a Newton solver's run ended (`None` for the other solvers). A diagnostic of the
    /// fit itself, not saved: models saved before it existed still load (the saved form has
    /// no field defaults), and a loaded model reports `None`.
    #[serde(skip)]
    newton_stop: Option<NewtonStop>,
    /// The original's binary weight vector (see [`LogisticRegression::get_weights`]).
    weights: Option<Array1<f64>>,
}

impl Default for LogisticRegression {
    /// The original's defaults: intercept, learning rate 0.01, 100 iterations, `tol = 1e-4`,
    /// no penalty.
    fn default() -> Self {
        Self::new(true, 0.01, 100, 1e-4).expect("valid defaults")
    }
}

impl LogisticRegression {
    /// Gradient descent with the given settings (`InvalidParameter` for a learning rate or
    /// tolerance that is not finite and `> 0`, or `max_iterations == 0`).
    pub fn new(
        fit_intercept: bool,
        learning_rate: f64,
        max_iterations: usize,
        tolerance: f64,
    ) -> Result<Self> {
        let model = Self {
            fit_intercept,
            penalty: Penalty::None,
            c: 1.0,
            max_iter: max_iterations,
            tol: tolerance,
            solver: LogisticSolver::GradientDescent,
            learning_rate,
            regularization: None,
            options: LogisticOptions::ORIGINAL,
            fitted: None,
        };
        model.check_params()?;
        Ok(model)
    }

    crate::accessors::checked_setters! {
        /// Add a penalty (negative or non-finite strength -> `InvalidParameter`).
        with_regularization(regularization: Some(RegularizationType)),
    }

    /// scikit-learn's `LogisticRegression` defaults (its [`LogisticOptions`]): intercept, L2
    /// with `C = 1`, L-BFGS, `max_iter = 100`, `tol = 1e-4`; parameters are checked at `fit`.
    pub fn with_defaults() -> Self {
        Self {
            fit_intercept: true,
            penalty: Penalty::L2,
            c: 1.0,
            max_iter: 100,
            tol: 1e-4,
            solver: LogisticSolver::Lbfgs,
            learning_rate: 0.1,
            regularization: None,
            options: LogisticOptions::SCIKIT_LEARN,
            fitted: None,
        }
    }

    crate::accessors::builder_setters! {
        with_options(options: LogisticOptions),
        with_fit_intercept(fit_intercept: bool),
        with_solver(solver: LogisticSolver),
        with_max_iter(max_iter: usize),
        with_tol(tol: f64),
        with_learning_rate(learning_rate: f64),
    }

    crate::accessors::field_getters! {
        get_fit_intercept -> fit_intercept: bool,
        get_learning_rate -> learning_rate: f64,
        get_max_iterations -> max_iter: usize,
        get_tolerance -> tol: f64,
        get_regularization_type -> regularization: Option<RegularizationType>,
        get_options -> options: LogisticOptions,
    }

    /// Penalty and its inverse strength `C`.
    pub fn with_penalty(mut self, penalty: Penalty, c: f64) -> Self {
        self.penalty = penalty;
        self.c = c;
        self
    }

    /// The original's weight vector of a binary fit: `[intercept, w_1, ..., w_d]` with an
    /// intercept, `[w_1, ..., w_d]` without.
    pub fn get_weights(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().and_then(|f| f.weights.as_ref())
    }

    /// The one check of LogisticRegression's hyper-parameters, for every door: the original's
    /// gradient descent needs a step and a tolerance > 0, scikit-learn's solvers take tol 0.
    pub fn check_params(&self) -> Result<()> {
        if self.penalty != Penalty::None {
            require_positive("C", self.c)?;
        }
        require_nonzero("max_iter", self.max_iter)?;
        if self.solver == LogisticSolver::GradientDescent {
            require_positive("learning_rate", self.learning_rate)?;
            require_positive("tol", self.tol)?;
        } else {
            require_non_negative("tol", self.tol)?;
        }
        match self.regularization {
            Some(regularization) => check_regularization(regularization),
            None => Ok(()),
        }
    }

    /// Per-sample (L2, L1) strengths next to the (weighted) mean loss: `penalty`'s
    /// `1 / (C S)` with `S` the weight sum (`n` unweighted), plus the original's
    /// `regularization` (each door leaves the other's at none, and a sum with zero is exact).
    fn strengths(&self, weight_sum: f64) -> (f64, f64) {
        let s = 1.0 / (self.c * weight_sum);
        let (l2, l1) = match self.penalty {
            Penalty::L2 => (s, 0.0),
            Penalty::L1 => (0.0, s),
            Penalty::None => (0.0, 0.0),
        };
        match self.regularization {
            Some(RegularizationType::L2(a)) => (l2 + a, l1),
            Some(RegularizationType::L1(a)) => (l2, l1 + a),
            None => (l2, l1),
        }
    }

    /// Fit to `x` (`n_samples x n_features`) and labels `y`.
    ///
    /// [`ClassLabels::ZeroOne`]: labels must be 0 or 1 (`InvalidInput` otherwise); empty `x`
    /// -> `EmptyInput`; NaN/inf -> `NonFinite`; length mismatch -> `DimensionMismatch`; a
    /// diverging descent -> `NonFinite`. [`ClassLabels::Observed`]: any labels, at least two
    /// distinct, scikit-learn's checks and messages.
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<&mut Self> {
        self.fit_weighted(x, y, None)
    }

    /// [`fit`](Self::fit) with a weight per sample (`None`: all ones, the same fit bit for
    /// bit): the weighted mean loss and the penalty over the weight sum (module docs).
    /// Weights must be finite and `>= 0` with a positive sum, one per sample
    /// (`InvalidInput` otherwise); a zero weight drops its sample from the objective.
    pub fn fit_weighted(
        &mut self,
        x: &ArrayRef2<f64>,
        y: &ArrayRef1<f64>,
        sample_weight: Option<ArrayView1<f64>>,
    ) -> Result<&mut Self> {
        self.fit_weighted_from(x, y, sample_weight, None)
    }

    /// [`fit_weighted`](Self::fit_weighted) with the solver started at `start` instead of
    /// zero (scikit-learn's `warm_start`): the coefficients, one row per output (`1 x d` for
    /// two classes, `n_classes x d` otherwise, rows in the order of the sorted labels), and
    /// the intercepts (`None`, or ignored, without an intercept). A start of another shape,
    /// or one that is not finite, is `InvalidInput`. The Newton solvers then take
    /// scikit-learn's steps from there (see [`crate::machine_learning::logistic_newton`]).
    pub fn fit_weighted_from(
        &mut self,
        x: &ArrayRef2<f64>,
        y: &ArrayRef1<f64>,
        sample_weight: Option<ArrayView1<f64>>,
        start: Option<(ArrayView2<f64>, Option<ArrayView1<f64>>)>,
    ) -> Result<&mut Self> {
        let (x, y) = (x.view(), y.view());
        let (classes, index) = if self.options.labels == ClassLabels::Observed {
            self.check_params()?;
            check_xy(&x, &y)?;
            labels::encode(y, "LogisticRegression")?
        } else {
            self.check_params()?;
            require_xy(&x, &y)?;
            if let Some(bad) = y.iter().find(|&&v| v != 0.0 && v != 1.0) {
                return Err(Error::invalid_input(format!(
                    "labels must be 0 or 1, found {bad}"
                )));
            }
            let index = y.iter().map(|&v| usize::from(v == 1.0)).collect();
            (Array1::from(vec![0.0, 1.0]), index)
        };
        let weight_sum = match sample_weight {
            Some(w) => check_sample_weight(w, x.nrows())?,
            None => x.nrows() as f64,
        };
        crate::validation::check_power_sum_range(&x, 2.0, "X", "the solver's products")?;
        let k = classes.len();
        let d = x.ncols();
        let n_out = if k == 2 { 1 } else { k };
        let (l2, l1) = self.strengths(weight_sum);
        let weights = sample_weight.map(|w| w.to_vec());
        let problem = Problem {
            x,
            n_out,
            d,
            fit_intercept: self.fit_intercept,
            l2,
            weights: weights.as_deref(),
            weight_sum,
            target: if k == 2 {
                Target::Binary(Array1::from_iter(index.iter().map(|&i| i as f64)))
            } else {
                Target::Multinomial(index)
            },
        };
        let n_params = n_out * (d + 1);
        let start = match start {
            Some((coef, intercept)) => Some(problem.start_point(coef, intercept)?),
            None => None,
        };
        // Coefficients are penalised, intercepts (the last n_out entries) are not.
        let mask: Vec<bool> = (0..n_params).map(|i| i < n_out * d).collect();
        let (theta, n_iter, converged, newton_stop) = match self.solver {
            LogisticSolver::Lbfgs => {
                let opts = optimize::LbfgsOptions {
                    max_iter: self.max_iter,
                    gtol: self.tol,
                    // scikit-learn's lbfgs setting: the gradient rule decides, not the decrease.
                    ftol: 64.0 * f64::EPSILON,
                    l1,
                    l1_mask: Some(mask),
                    ..Default::default()
                };
                let r = optimize::minimize(
                    |theta, grad| problem.eval(theta, grad),
                    start.unwrap_or_else(|| Array1::zeros(n_params)),
                    &opts,
                )?;
                (r.x, r.n_iter, r.converged, None)
            }
            LogisticSolver::GradientDescent => {
                let start = start.unwrap_or_else(|| Array1::zeros(n_params));
                let (theta, n_iter, converged) =
                    self.gradient_descent(&problem, start, l1, &mask)?;
                (theta, n_iter, converged, None)
            }
            LogisticSolver::NewtonCholesky | LogisticSolver::NewtonCg => {
                let (name, newton) = if self.solver == LogisticSolver::NewtonCholesky {
                    (
                        "newton-cholesky",
                        logistic_newton::newton_cholesky as logistic_newton::NewtonSolver,
                    )
                } else {
                    (
                        "newton-cg",
                        logistic_newton::newton_cg as logistic_newton::NewtonSolver,
                    )
                };
                if l1 > 0.0 {
                    return Err(Error::invalid_parameter(
                        "solver",
                        format!("{name} supports only the L2 penalty or none"),
                    ));
                }
                let start = start.as_ref().map(|t| t.view());
                let run = newton(&problem, start, self.max_iter, self.tol)?;
                (run.theta, run.n_iter, run.converged, Some(run.stop))
            }
        };
        let coef = theta
            .slice(s![..n_out * d])
            .to_owned()
            .into_shape_with_order((n_out, d))
            .expect("n_out * d entries");
        let intercept = theta.slice(s![n_out * d..]).to_owned();
        let weights = (n_out == 1).then(|| {
            let mut w: Vec<f64> = Vec::with_capacity(d + 1);
            if self.fit_intercept {
                w.push(intercept[0]);
            }
            w.extend(coef.row(0).iter());
            Array1::from(w)
        });
        self.fitted = Some(Fitted {
            classes,
            coef,
            intercept,
            n_iter,
            converged,
            newton_stop,
            weights,
        });
        Ok(self)
    }

    fn gradient_descent(
        &self,
        problem: &Problem,
        start: Array1<f64>,
        l1: f64,
        mask: &[bool],
    ) -> Result<(Array1<f64>, usize, bool)> {
        let lr = self.learning_rate;
        let mut theta = start;
        let mut grad = Array1::<f64>::zeros(theta.len());
        for iter in 1..=self.max_iter {
            problem.eval(theta.view(), &mut grad)?;
            let mut step = 0.0f64;
            Zip::from(&mut theta)
                .and(&grad)
                .and(mask)
                .for_each(|t, &g, &penalised| {
                    let mut next = *t - lr * g;
                    if penalised && l1 > 0.0 {
                        // proximal step of l1 * |t|: soft thresholding
                        next = next.signum() * (next.abs() - lr * l1).max(0.0);
                    }
                    step = step.max((next - *t).abs());
                    *t = next;
                });
            if !step.is_finite() {
                return Err(Error::non_finite(format!(
                    "gradient descent (it diverged at iteration {iter}; lower learning_rate, now {lr}, or scale the features)"
                )));
            }
            if step < self.tol {
                return Ok((theta, iter, true));
            }
        }
        Ok((theta, self.max_iter, false))
    }

    fn fitted(&self) -> Result<&Fitted> {
        fitted_state(&self.fitted, "LogisticRegression")
    }

    /// Class scores `x · coefᵀ + intercept` (`decision_function`): `n x 1` for two classes
    /// (positive means `classes[1]`), `n x n_classes` otherwise.
    pub fn decision_function(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let f = self.fitted()?;
        let x = x.view();
        require_data_width(&x, f.coef.ncols(), "x")?;
        let out = scores(x, f.coef.view(), f.intercept.view());
        // finite X and coefficients can still have a product beyond f64 (huge features)
        if !out.iter().all(|v| v.is_finite()) {
            return Err(Error::invalid_input(
                "the decision values overflow float64 on this X (features too large for the \
                 fitted coefficients): rescale the features",
            ));
        }
        Ok(out)
    }

    /// Class probabilities, `n x n_classes`, columns in `classes` order (`predict_proba` of
    /// the Python layer).
    pub fn class_probabilities(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let mut z = self.decision_function(x)?;
        if z.ncols() == 1 {
            elementwise::sigmoid_inplace(&mut z);
            let mut proba = Array2::<f64>::zeros((z.nrows(), 2));
            Zip::from(proba.rows_mut())
                .and(z.column(0))
                .for_each(|mut row, &p| {
                    row[0] = 1.0 - p;
                    row[1] = p;
                });
            Ok(proba)
        } else {
            elementwise::softmax_rows_inplace(z.view_mut());
            Ok(z)
        }
    }

    /// The original's `predict_proba`: the probability of label 1 per sample (binary fits;
    /// a multinomial fit gives the probability of its last class).
    pub fn predict_proba(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let p = self.class_probabilities(x)?;
        Ok(p.column(p.ncols() - 1).to_owned())
    }

    /// Predicted labels (the original API: 1.0 where the probability of 1 is at least 0.5).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let z = self.decision_function(x)?;
        let zero_is_positive = self.options.zero_score == ZeroScoreClass::Positive;
        Ok(labels::from_scores(
            &self.fitted()?.classes,
            z.view(),
            zero_is_positive,
        ))
    }
}

crate::machine_learning::linear_model::supervised_traits!(LogisticRegression, f64, Array1<f64>);
crate::machine_learning::linear_model::supervised_conveniences!(LogisticRegression: fit_predict, accuracy_score);
crate::machine_learning::path_persistence!(LogisticRegression);

/// All monomials of the columns of `x` of degree 1 to `degree`, by degree, each degree's
/// products in lexicographic order of the column indices (scikit-learn's
/// `PolynomialFeatures(include_bias=False)` order): `[a, b]`, degree 2 -> `[a, b, a², ab, b²]`.
pub fn generate_polynomial_features<S>(x: &ArrayBase<S, Ix2>, degree: usize) -> Array2<f64>
where
    S: Data<Elem = f64> + Send + Sync,
{
    let d = x.ncols();
    // Index tuples i1 <= i2 <= ... per degree; each extends a tuple of the previous degree.
    let mut terms: Vec<Vec<usize>> = Vec::new();
    let mut last: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..degree {
        let next: Vec<Vec<usize>> = last
            .iter()
            .flat_map(|t| {
                let start = t.last().copied().unwrap_or(0);
                (start..d).map(move |j| {
                    let mut u = t.clone();
                    u.push(j);
                    u
                })
            })
            .collect();
        terms.extend(next.iter().cloned());
        last = next;
    }
    Array2::from_shape_fn((x.nrows(), terms.len()), |(i, t)| {
        terms[t].iter().map(|&j| x[[i, j]]).product()
    })
}

/// Fraction of equal labels (shared by the classifiers' `score`).
pub(crate) fn accuracy(pred: ArrayView1<f64>, y: ArrayView1<f64>) -> Result<f64> {
    crate::validation::check_n_samples(pred.len(), y.len())?;
    let hits = Zip::from(&pred)
        .and(&y)
        .fold(0usize, |n, a, b| n + usize::from(a == b));
    Ok(hits as f64 / y.len().max(1) as f64)
}

/// The fitted-state accessors of a linear classifier whose `Fitted` holds `classes`, `coef`,
/// `intercept`, `n_iter` and `converged` (LogisticRegression, LinearSVC).
macro_rules! linear_classifier_accessors {
    ($model:ty) => {
        impl $model {
            #[inline]
            pub fn get_actual_iterations(&self) -> Option<usize> {
                self.n_iter()
            }

            $crate::accessors::fitted_getters! {
                fitted;
                /// Sorted distinct training labels (`classes_`).
                classes -> &classes: ndarray::Array1<f64>,
                /// Coefficients (`coef_`): `1 x n_features` for two classes (positive favours
                /// `classes[1]`), one row per class otherwise.
                coefficients -> &coef: ndarray::Array2<f64>,
                /// Intercepts (`intercept_`), one per row of the coefficients; zeros without an
                /// intercept.
                intercept -> &intercept: ndarray::Array1<f64>,
                /// Iterations the solver ran (`n_iter_`; for one-vs-rest, the most any binary
                /// problem took).
                n_iter -> n_iter: usize,
                /// Whether the solver met its tolerance before `max_iter` (for one-vs-rest, every
                /// binary problem).
                converged -> converged: bool,
            }
        }
    };
}
pub(crate) use linear_classifier_accessors;

linear_classifier_accessors!(LogisticRegression);

impl LogisticRegression {
    /// How the fit's Newton run ended (`newton-cholesky`, `newton-cg`): converged, cut by
    /// `max_iter`, or handed over where scikit-learn would go on otherwise (or decide within
    /// rounding). `None` before the fit and for the other solvers.
    pub fn newton_stop(&self) -> Option<NewtonStop> {
        self.fitted.as_ref().and_then(|f| f.newton_stop)
    }
}

/// `x · coefᵀ + intercept` (rows of `coef` are the outputs).
pub(crate) fn scores(
    x: ArrayView2<f64>,
    coef: ArrayView2<f64>,
    intercept: ArrayView1<f64>,
) -> Array2<f64> {
    let par = matmul::nested_parallelism();
    let mut z = if coef.nrows() == 1 {
        matmul::matvec(x, coef.row(0), par)
            .expect("feature count checked")
            .insert_axis(Axis(1))
    } else {
        matmul::dot_par(x, coef.t(), par).expect("feature count checked")
    };
    for mut row in z.rows_mut() {
        row += &intercept;
    }
    z
}

/// The weight sum of valid sample weights: one finite, non-negative weight per sample, not
/// all zero (the objective divides by the sum).
fn check_sample_weight(w: ArrayView1<f64>, n: usize) -> Result<f64> {
    if w.len() != n {
        return Err(Error::invalid_input(format!(
            "sample_weight must hold one weight per sample ({n}), got {}",
            w.len()
        )));
    }
    if let Some(bad) = w.iter().find(|v| !v.is_finite() || **v < 0.0) {
        return Err(Error::invalid_input(format!(
            "sample_weight must be finite and >= 0, found {bad}"
        )));
    }
    let sum: f64 = w.sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return Err(Error::invalid_input(format!(
            "sample_weight must have a positive finite sum, got {sum}"
        )));
    }
    Ok(sum)
}

pub(crate) enum Target {
    /// 0/1 per sample.
    Binary(Array1<f64>),
    /// Class index per sample.
    Multinomial(Vec<usize>),
}

/// The smooth part of the objective over `theta = [coef (n_out x d, row-major), intercept]`.
pub(crate) struct Problem<'a> {
    pub(crate) x: ArrayView2<'a, f64>,
    pub(crate) n_out: usize,
    pub(crate) d: usize,
    pub(crate) fit_intercept: bool,
    pub(crate) l2: f64,
    /// Per-sample weights (`None`: all ones).
    pub(crate) weights: Option<&'a [f64]>,
    /// Divides the summed loss: the weight sum, `n` unweighted.
    pub(crate) weight_sum: f64,
    pub(crate) target: Target,
}

impl Problem<'_> {
    /// A run's starting point in `theta`'s layout from coefficients (`n_out x d`, one row per
    /// output) and intercepts (`n_out` of them; ignored, and may be `None`, without an
    /// intercept): scikit-learn's `warm_start`. Another shape, or a value that is not
    /// finite, is `InvalidInput`.
    pub(crate) fn start_point(
        &self,
        coef: ArrayView2<f64>,
        intercept: Option<ArrayView1<f64>>,
    ) -> Result<Array1<f64>> {
        let (n_out, d) = (self.n_out, self.d);
        let intercept = intercept.filter(|_| self.fit_intercept);
        if coef.dim() != (n_out, d)
            || (self.fit_intercept && intercept.is_none_or(|b| b.len() != n_out))
        {
            return Err(Error::invalid_input(format!(
                "the start must hold {n_out} x {d} coefficients{}, got {:?}{}",
                if self.fit_intercept {
                    format!(" and {n_out} intercepts")
                } else {
                    String::new()
                },
                coef.dim(),
                intercept.map_or(String::new(), |b| format!(" and {}", b.len()))
            )));
        }
        let mut theta = Array1::<f64>::zeros(n_out * (d + 1));
        for (c, row) in coef.rows().into_iter().enumerate() {
            theta.slice_mut(s![c * d..(c + 1) * d]).assign(&row);
        }
        if let Some(b) = intercept {
            theta.slice_mut(s![n_out * d..]).assign(&b);
        }
        if !theta.iter().all(|v| v.is_finite()) {
            return Err(Error::invalid_input("the start must be finite"));
        }
        Ok(theta)
    }

    pub(crate) fn eval(&self, theta: ArrayView1<f64>, grad: &mut Array1<f64>) -> Result<f64> {
        let n = self.weight_sum;
        let (n_out, d) = (self.n_out, self.d);
        let coef = theta
            .slice(s![..n_out * d])
            .into_shape_with_order((n_out, d))
            .expect("n_out * d entries");
        let intercept = theta.slice(s![n_out * d..]);
        let par = matmul::nested_parallelism();
        let mut z = scores(self.x, coef, intercept);
        let z_slice = z.as_slice_mut().expect("fresh standard-layout scores");
        let mut r = vec![0.0; z_slice.len()];
        let (loss, rsum) = match &self.target {
            Target::Binary(y) => {
                let (loss, rsum) = losses::logistic_loss_grad_weighted(
                    z_slice,
                    y.as_slice().expect("owned"),
                    self.weights,
                    &mut r,
                );
                (loss, vec![rsum])
            }
            Target::Multinomial(labels) => {
                losses::softmax_loss_grad_weighted(z_slice, n_out, labels, self.weights, &mut r)
            }
        };
        let r = Array2::from_shape_vec((self.x.nrows(), n_out), r).expect("n x n_out gradient");
        // d loss / d coef = rᵀ x
        let gcoef = if n_out == 1 {
            matmul::matvec(self.x.t(), r.column(0), par)?.insert_axis(Axis(0))
        } else {
            matmul::dot_par(r.t(), self.x, par)?
        };
        let (mut gc, mut gb) = grad.view_mut().split_at(Axis(0), n_out * d);
        Zip::from(&mut gc)
            .and(
                gcoef
                    .view()
                    .into_shape_with_order(n_out * d)
                    .expect("contiguous"),
            )
            .and(theta.slice(s![..n_out * d]))
            .for_each(|g, &gl, &w| *g = gl / n + self.l2 * w);
        for (g, rs) in gb.iter_mut().zip(rsum) {
            *g = if self.fit_intercept { rs / n } else { 0.0 };
        }
        let penalty = if self.l2 > 0.0 {
            0.5 * self.l2 * coef.iter().map(|w| w * w).sum::<f64>()
        } else {
            0.0
        };
        Ok(loss / n + penalty)
    }
}

impl Persist for LogisticRegression {
    const MODEL_NAME: &'static str = "LogisticRegression";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Three well-separated blobs in 2-D, labels 10, 20, 30 (non-contiguous on purpose).
    fn blobs(per_class: usize) -> (Array2<f64>, Array1<f64>) {
        let centers = [(-4.0, 0.0), (4.0, 1.0), (0.0, 6.0)];
        let n = per_class * 3;
        let x = Array2::from_shape_fn((n, 2), |(i, j)| {
            let c = centers[i % 3];
            let jitter = ((i * 7919 + j * 104_729) % 1000) as f64 / 500.0 - 1.0;
            if j == 0 {
                c.0 + 1.5 * jitter
            } else {
                c.1 + 1.5 * jitter
            }
        });
        let y = Array1::from_iter((0..n).map(|i| 10.0 * ((i % 3) + 1) as f64));
        (x, y)
    }

    /// The objective on `blobs(10)` with its labels folded into `k` classes (binary for 2,
    /// softmax otherwise), the given L2 strength and optional sample weights.
    fn blob_problem<'a>(
        x: &'a Array2<f64>,
        y: &Array1<f64>,
        k: usize,
        l2: f64,
        weights: Option<&'a [f64]>,
    ) -> Problem<'a> {
        let y_idx: Vec<usize> = y.iter().map(|v| ((*v / 10.0) as usize - 1) % k).collect();
        let target = if k == 2 {
            Target::Binary(Array1::from_iter(y_idx.iter().map(|&i| i as f64)))
        } else {
            Target::Multinomial(y_idx)
        };
        Problem {
            x: x.view(),
            n_out: if k == 2 { 1 } else { k },
            d: 2,
            fit_intercept: true,
            l2,
            weights,
            weight_sum: weights.map_or(x.nrows() as f64, |w| w.iter().sum()),
            target,
        }
    }

    /// `eval`'s gradient at `theta` against central differences of its value (an independent
    /// oracle): with h = 1e-6 on an O(1) smooth function the error is ~1e-9.
    fn assert_gradient_matches_differences(p: &Problem<'_>, theta: Array1<f64>, label: &str) {
        let mut g = Array1::zeros(theta.len());
        p.eval(theta.view(), &mut g).unwrap();
        for i in 0..theta.len() {
            let h = 1e-6;
            let (mut up, mut down) = (theta.clone(), theta.clone());
            up[i] += h;
            down[i] -= h;
            let mut scratch = Array1::zeros(theta.len());
            let fd = (p.eval(up.view(), &mut scratch).unwrap()
                - p.eval(down.view(), &mut scratch).unwrap())
                / (2.0 * h);
            assert!((fd - g[i]).abs() < 1e-7, "{label} i={i}: {fd} vs {}", g[i]);
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let (x, y) = blobs(10);
        for (k, l2) in [(2usize, 0.3), (3, 0.0), (3, 0.7)] {
            let p = blob_problem(&x, &y, k, l2, None);
            let theta = Array1::from_shape_fn(p.n_out * 3, |i| (i as f64 * 0.37).sin() * 0.5);
            assert_gradient_matches_differences(&p, theta, &format!("k={k} l2={l2}"));
        }
    }

    /// The weighted objective's gradient, binary and softmax.
    #[test]
    fn weighted_gradient_matches_finite_differences() {
        let (x, y) = blobs(10);
        let w: Vec<f64> = (0..x.nrows()).map(|i| (i % 4) as f64 * 0.7).collect();
        for k in [2usize, 3] {
            let p = blob_problem(&x, &y, k, 0.4, Some(&w));
            let theta = Array1::from_shape_fn(p.n_out * 3, |i| (i as f64 * 0.61).cos() * 0.4);
            assert_gradient_matches_differences(&p, theta, &format!("weighted k={k}"));
        }
    }

    /// Integer weights are repeated samples and a zero weight a dropped one: the weighted
    /// objective (weight sum as `n`) is then the same function as the expanded data's, so
    /// the fits share one optimum. Each run stops on a gradient below `tol = 1e-10` or on a
    /// relative decrease of 64 eps of an O(1) objective; the objective is `1 / (C S)`-strongly
    /// convex in the coefficients, which leaves them up to `sqrt(2 * 64 eps * C S)` apart
    /// (about 1e-6 here).
    #[test]
    fn integer_weights_fit_as_repeated_samples() {
        let (x, y) = blobs(12);
        // Weights 0, 1, 2 in runs of three, so every class gets each weight (labels cycle
        // with period three).
        let w: Vec<f64> = (0..x.nrows()).map(|i| ((i / 3) % 3) as f64).collect();
        let mut rows = Vec::new();
        for (i, &wi) in w.iter().enumerate() {
            rows.extend(std::iter::repeat_n(i, wi as usize));
        }
        let (xr, yr) = (x.select(Axis(0), &rows), y.select(Axis(0), &rows));
        for keep in [vec![10.0, 20.0], vec![10.0, 20.0, 30.0]] {
            let sel: Vec<usize> = (0..x.nrows()).filter(|&i| keep.contains(&y[i])).collect();
            let selr: Vec<usize> = (0..xr.nrows()).filter(|&i| keep.contains(&yr[i])).collect();
            let wv = Array1::from_iter(sel.iter().map(|&i| w[i]));
            let fit = |m: LogisticRegression| m.with_tol(1e-10).with_max_iter(5000);
            let mut weighted =
                fit(LogisticRegression::with_defaults().with_penalty(Penalty::L2, 0.5));
            weighted
                .fit_weighted(
                    &x.select(Axis(0), &sel),
                    &y.select(Axis(0), &sel),
                    Some(wv.view()),
                )
                .unwrap();
            let mut repeated =
                fit(LogisticRegression::with_defaults().with_penalty(Penalty::L2, 0.5));
            repeated
                .fit(&xr.select(Axis(0), &selr), &yr.select(Axis(0), &selr))
                .unwrap();
            assert!(weighted.converged().unwrap() && repeated.converged().unwrap());
            let radius = (2.0 * 64.0 * f64::EPSILON * 0.5 * wv.sum()).sqrt();
            for (a, b) in weighted
                .coefficients()
                .unwrap()
                .iter()
                .chain(weighted.intercept().unwrap())
                .zip(
                    repeated
                        .coefficients()
                        .unwrap()
                        .iter()
                        .chain(repeated.intercept().unwrap()),
                )
            {
                assert!((a - b).abs() <= radius, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn bad_sample_weights_are_refused_and_leave_the_model_unchanged() {
        let x = array![[0.0], [1.0], [2.0], [3.0]];
        let y = array![0.0, 0.0, 1.0, 1.0];
        let mut m = LogisticRegression::with_defaults();
        m.fit(&x, &y).unwrap();
        let before = m.coefficients().unwrap().clone();
        for w in [
            array![1.0, 1.0, 1.0],
            array![1.0, -1.0, 1.0, 1.0],
            array![1.0, f64::NAN, 1.0, 1.0],
            array![0.0, 0.0, 0.0, 0.0],
        ] {
            assert!(m.fit_weighted(&x, &y, Some(w.view())).is_err(), "{w}");
            assert_eq!(m.coefficients().unwrap(), &before);
        }
        // All ones is the unweighted fit exactly.
        let mut ones = LogisticRegression::with_defaults();
        ones.fit_weighted(&x, &y, Some(Array1::ones(4).view()))
            .unwrap();
        assert_eq!(ones.coefficients().unwrap(), &before);
    }

    #[test]
    fn separates_blobs_with_arbitrary_labels() {
        let (x, y) = blobs(40);
        let mut m = LogisticRegression::with_defaults();
        m.fit(&x, &y).unwrap();
        assert_eq!(m.classes().unwrap().to_vec(), vec![10.0, 20.0, 30.0]);
        assert_eq!(m.coefficients().unwrap().dim(), (3, 2));
        assert_eq!(m.score(&x, &y).unwrap(), 1.0);
        let proba = m.class_probabilities(&x).unwrap();
        for row in proba.rows() {
            assert!((row.sum() - 1.0).abs() < 1e-12);
        }
        assert!(m.converged().unwrap());
    }

    #[test]
    fn binary_fit_has_one_coefficient_row_and_consistent_outputs() {
        let (x, y) = blobs(30);
        let keep: Vec<usize> = (0..x.nrows()).filter(|&i| y[i] != 30.0).collect();
        let xb = x.select(Axis(0), &keep);
        let yb = y.select(Axis(0), &keep);
        let mut m = LogisticRegression::with_defaults();
        m.fit(&xb, &yb).unwrap();
        assert_eq!(m.coefficients().unwrap().dim(), (1, 2));
        let z = m.decision_function(&xb).unwrap();
        let p = m.class_probabilities(&xb).unwrap();
        let pred = m.predict(&xb).unwrap();
        for i in 0..xb.nrows() {
            let want = 1.0 / (1.0 + (-z[[i, 0]]).exp());
            assert!((p[[i, 1]] - want).abs() < 1e-15);
            assert_eq!(pred[i], if z[[i, 0]] > 0.0 { 20.0 } else { 10.0 });
        }
        assert_eq!(m.score(&xb, &yb).unwrap(), 1.0);
    }

    #[test]
    fn optimum_satisfies_the_first_order_conditions() {
        // At the L2 optimum: X^T (p - y) / n + w / (C n) = 0 and sum(p - y) = 0.
        let x = array![
            [0.0, 1.0],
            [1.0, 0.5],
            [2.0, -1.0],
            [3.0, 0.0],
            [1.5, 2.0],
            [2.5, 1.0]
        ];
        let y = array![0.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        let mut m = LogisticRegression::with_defaults()
            .with_tol(1e-10)
            .with_max_iter(1000);
        m.fit(&x, &y).unwrap();
        let w = m.coefficients().unwrap().row(0).to_owned();
        let b = m.intercept().unwrap()[0];
        let p = x.dot(&w).mapv(|z| 1.0 / (1.0 + (-(z + b)).exp()));
        let r = &p - &y;
        let g = x.t().dot(&r) / 6.0 + &w / 6.0;
        assert!(g.iter().all(|v| v.abs() < 1e-9), "{g:?}");
        assert!((r.sum() / 6.0).abs() < 1e-9);
    }

    #[test]
    fn gradient_descent_reaches_the_lbfgs_solution() {
        let (x, y) = blobs(20);
        let mut a = LogisticRegression::with_defaults()
            .with_tol(1e-10)
            .with_max_iter(2000);
        a.fit(&x, &y).unwrap();
        let mut b = LogisticRegression::with_defaults()
            .with_solver(LogisticSolver::GradientDescent)
            .with_learning_rate(0.5)
            .with_tol(1e-10)
            .with_max_iter(200_000);
        b.fit(&x, &y).unwrap();
        for (u, v) in a
            .coefficients()
            .unwrap()
            .iter()
            .zip(b.coefficients().unwrap())
        {
            // Both solve the same strictly convex problem to ~1e-10 gradient: 1e-6 apart at most.
            assert!((u - v).abs() < 1e-6, "{u} vs {v}");
        }
    }

    #[test]
    fn l1_zeroes_a_noise_feature() {
        let (x, y) = blobs(30);
        // Add a tiny noise column that carries no signal.
        let noise = Array1::from_shape_fn(x.nrows(), |i| ((i * 31) % 7) as f64 * 1e-3);
        let x3 = ndarray::concatenate![Axis(1), x, noise.insert_axis(Axis(1))];
        let mut m = LogisticRegression::with_defaults().with_penalty(Penalty::L1, 0.5);
        m.fit(&x3, &y).unwrap();
        assert!(m
            .coefficients()
            .unwrap()
            .column(2)
            .iter()
            .all(|&v| v == 0.0));
        assert!(m.score(&x3, &y).unwrap() > 0.95);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let mut m = LogisticRegression::with_defaults();
        assert!(matches!(
            m.predict(&array![[1.0]]),
            Err(Error::NotFitted(_))
        ));
        assert!(m
            .fit(&Array2::<f64>::zeros((0, 2)), &Array1::<f64>::zeros(0))
            .is_err());
        assert!(m
            .fit(&array![[1.0], [f64::NAN]], &array![0.0, 1.0])
            .is_err());
        assert!(m
            .fit(&array![[1.0], [2.0]], &array![0.0, f64::INFINITY])
            .is_err());
        assert!(m.fit(&array![[1.0], [2.0]], &array![1.0]).is_err());
        let err = m
            .fit(&array![[1.0], [2.0]], &array![1.0, 1.0])
            .unwrap_err()
            .to_string();
        assert!(err.contains("one class"), "{err}");
        assert!(LogisticRegression::with_defaults()
            .with_penalty(Penalty::L2, 0.0)
            .fit(&array![[1.0], [2.0]], &array![0.0, 1.0])
            .is_err());
        assert!(LogisticRegression::with_defaults()
            .with_max_iter(0)
            .fit(&array![[1.0], [2.0]], &array![0.0, 1.0])
            .is_err());
        m.fit(&array![[1.0], [2.0]], &array![0.0, 1.0]).unwrap();
        assert!(m.predict(&array![[1.0, 2.0]]).is_err());
    }

    #[test]
    fn save_and_load_round_trip_exactly() {
        let (x, y) = blobs(10);
        let mut m = LogisticRegression::with_defaults();
        m.fit(&x, &y).unwrap();
        let back = LogisticRegression::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.class_probabilities(&x).unwrap(),
            m.class_probabilities(&x).unwrap()
        );
    }

    /// The original API: labels 0/1 only, `get_weights` = `[bias, w...]`, probabilities of
    /// label 1, and its error variants.
    #[test]
    fn original_api_contract() {
        assert!(matches!(
            LogisticRegression::new(true, 0.0, 10, 1e-4),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(LogisticRegression::new(true, 0.1, 0, 1e-4).is_err());
        assert!(LogisticRegression::new(true, 0.1, 10, 0.0).is_err());
        let x = array![[-2.0, 1.0], [-1.0, 0.0], [1.0, 0.0], [2.0, 1.0]];
        let mut m = LogisticRegression::new(true, 0.5, 2000, 1e-9).unwrap();
        assert!(matches!(
            m.fit(&x, &array![0.0, 2.0, 1.0, 1.0]),
            Err(Error::InvalidInput(_))
        ));
        m.fit(&x, &array![0.0, 0.0, 1.0, 1.0]).unwrap();
        let w = m.get_weights().unwrap();
        assert_eq!(w.len(), 3);
        let p = m.predict_proba(&x).unwrap();
        for (i, &pi) in p.iter().enumerate() {
            // sigmoid(b + w·x) from the reported weights
            let z = w[0] + w[1] * x[[i, 0]] + w[2] * x[[i, 1]];
            assert!((pi - 1.0 / (1.0 + (-z).exp())).abs() < 1e-12);
        }
        assert_eq!(m.predict(&x).unwrap(), array![0.0, 0.0, 1.0, 1.0]);
        let mut huge = LogisticRegression::new(true, f64::MAX, 10, 1e-9).unwrap();
        assert!(matches!(
            huge.fit(&(&x * 1e9), &array![0.0, 0.0, 1.0, 1.0]),
            Err(Error::NonFinite(_))
        ));
    }

    /// Degree-2 expansion of `[a, b]` is `[a, b, a², ab, b²]`; three features to degree 3
    /// give 3 + 6 + 10 = 19 monomials.
    #[test]
    fn polynomial_features_follow_the_degree_then_lexicographic_order() {
        let out = generate_polynomial_features(&array![[3.0, 2.0]], 2);
        assert_eq!(out, array![[3.0, 2.0, 9.0, 6.0, 4.0]]);
        assert_eq!(
            generate_polynomial_features(&array![[1.0, 2.0, 3.0]], 3).ncols(),
            19
        );
    }

    /// A start of another shape, or not finite, is refused before any work (the model keeps
    /// its previous fit); a fit started at its own optimum keeps it (newton-cholesky: one
    /// iteration, scikit-learn's rule), and every solver starts where it is told.
    #[test]
    fn fits_start_where_told_and_refuse_bad_starts() {
        let (x, y) = blobs(10);
        let mut m = LogisticRegression::with_defaults()
            .with_penalty(Penalty::L2, 0.5)
            .with_solver(LogisticSolver::NewtonCholesky)
            .with_tol(1e-10);
        m.fit(&x, &y).unwrap();
        let (coef, intercept) = (
            m.coefficients().unwrap().clone(),
            m.intercept().unwrap().clone(),
        );
        let before = m.n_iter().unwrap();
        assert!(before > 2);
        for (bad_coef, bad_intercept) in [
            (coef.slice(s![..2, ..]).to_owned(), Some(intercept.clone())),
            (coef.clone(), Some(intercept.slice(s![..2]).to_owned())),
            (coef.clone(), None),
            (coef.mapv(|_| f64::NAN), Some(intercept.clone())),
        ] {
            let err = m
                .fit_weighted_from(
                    &x,
                    &y,
                    None,
                    Some((bad_coef.view(), bad_intercept.as_ref().map(|b| b.view()))),
                )
                .unwrap_err();
            assert!(matches!(err, Error::InvalidInput(_)), "{err}");
            assert_eq!(m.n_iter().unwrap(), before);
        }
        m.fit_weighted_from(&x, &y, None, Some((coef.view(), Some(intercept.view()))))
            .unwrap();
        assert_eq!((m.n_iter().unwrap(), m.converged().unwrap()), (1, true));
        for (a, b) in m.coefficients().unwrap().iter().zip(&coef) {
            assert!((a - b).abs() < 1e-8, "{a} vs {b}");
        }
        // Gradient descent with one step of a tiny learning rate stays next to its start.
        let mut gd = LogisticRegression::with_defaults()
            .with_penalty(Penalty::L2, 0.5)
            .with_solver(LogisticSolver::GradientDescent)
            .with_learning_rate(1e-12)
            .with_max_iter(1);
        gd.fit_weighted_from(&x, &y, None, Some((coef.view(), Some(intercept.view()))))
            .unwrap();
        for (a, b) in gd.coefficients().unwrap().iter().zip(&coef) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
    }

    /// The Newton solvers tell how their run ended (converged, cut by max_iter), and keep it
    /// through a save and load; the other solvers report none, nor does an unfitted model.
    #[test]
    fn newton_runs_report_how_they_ended() {
        let (x, y) = blobs(10);
        let fit = |solver, max_iter| {
            let mut m = LogisticRegression::with_defaults()
                .with_penalty(Penalty::L2, 0.5)
                .with_solver(solver)
                .with_max_iter(max_iter)
                .with_tol(1e-10);
            assert_eq!(m.newton_stop(), None);
            m.fit(&x, &y).unwrap();
            m
        };
        for solver in [LogisticSolver::NewtonCholesky, LogisticSolver::NewtonCg] {
            let cut = fit(solver, 1);
            assert_eq!(
                (cut.newton_stop(), cut.n_iter(), cut.converged()),
                (Some(NewtonStop::MaxIter), Some(1), Some(false))
            );
            let done = fit(solver, 100);
            assert_eq!(done.newton_stop(), Some(NewtonStop::Converged));
            assert!(done.n_iter().unwrap() < 100);
            // a diagnostic of the fit, not saved (the saved form stays the one before it)
            let loaded = LogisticRegression::from_bytes(&cut.to_bytes().unwrap()).unwrap();
            assert_eq!(loaded.newton_stop(), None);
            assert_eq!(loaded.get_weights(), cut.get_weights());
        }
        assert_eq!(fit(LogisticSolver::Lbfgs, 100).newton_stop(), None);
    }
}
