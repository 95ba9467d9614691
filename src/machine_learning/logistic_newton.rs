//! Newton's method for logistic regression with Cholesky-solved steps: the steps, line
//! search and stopping rule of scikit-learn's `newton-cholesky` solver, so a converged run
//! lands where scikit-learn's does (to rounding) after the same number of iterations.
//!
//! The objective is [`Problem`]'s: the weighted mean log-loss plus `l2 |W|^2 / 2`, the
//! intercepts unpenalised. Each iteration:
//!
//! 1. the Hessian at the current point (the pointwise second derivatives times the sample
//!    weights over their sum, sandwiched between the design matrix and its transpose through
//!    the product engine, plus `l2` on the coefficients' diagonal);
//! 2. the Newton step from the Cholesky factor of the Hessian restricted to the identifiable
//!    parameters: a multinomial model without penalty drops its last class (the softmax only
//!    sees differences between classes), one with a penalty drops only its last intercept
//!    (the intercepts' common shift is unpenalised and unseen by the loss); the dropped
//!    entries keep their value;
//! 3. a backtracking line search from `t = 1`, halving up to 20 times, taking the first `t`
//!    with `f(t) - f(0) <= t g.p / 2^11`, or with `|f(t) - f(0)| <= 16 eps |f(0)|` (a change
//!    lost in rounding) and a smaller `|g|_1`;
//! 4. convergence when the largest gradient entry and half the Newton decrement `p.H.p` of
//!    the step just taken are both at most `tol`; the iteration counts.
//!
//! At the end a multinomial model is centred as scikit-learn does: without penalty every
//! coefficient column and the intercepts lose their mean over the classes, with one the
//! intercepts lose theirs.
//!
//! A run starts at zero or at a given point (scikit-learn's `warm_start`). A multinomial
//! start is first re-centred as scikit-learn's solver setup does, so the dropped entries
//! of step 2 are zero: without penalty every class loses the last class's coefficients and
//! intercept, with one (and an intercept) the intercepts lose the last intercept. A started
//! run still takes at least one iteration: scikit-learn tests convergence only after a step.
//!
//! Where scikit-learn would hand the rest of the optimisation to L-BFGS (a Hessian that is
//! not positive definite or that LAPACK may call singular, a saturated pointwise Hessian, a
//! line search that finds no step), and where one of the decisions above lies within
//! rounding of its threshold (another implementation's rounding could decide otherwise),
//! the run stops at the current point with [`NewtonStop::Handover`] and `converged` false.
//!
//! [`newton_cg`] replicates scikit-learn's `newton-cg` the same way (truncated conjugate
//! gradients on the same Hessian, its stopping rule), for runs whose Wolfe line searches
//! all take their first trial step.

use crate::error::Result;
use crate::machine_learning::logistic_regression::{scores, Problem, Target};
use crate::math::optimize::at_most;
use crate::math::{elementwise, linalg, matmul};
use ndarray::{s, Array1, Array2, ArrayView1, Axis};

/// The Armijo constant of the line search, `2^-11`.
const ARMIJO_SLOPE: f64 = 1.0 / 2048.0;
/// The line search tries `t = 1, 1/2, ..., 2^-20`.
const LINE_SEARCH_TRIALS: usize = 21;
/// A change of the objective below this many eps of its value counts as rounding.
const FLAT_CHANGE: f64 = 16.0 * f64::EPSILON;
/// The objective's rounding: two implementations summing the pointwise losses in different
/// orders differ by a few eps of its value; decisions closer than this are undecided.
const LOSS_ROUNDING: f64 = 8.0 * f64::EPSILON;
/// Below this reciprocal condition number LAPACK's estimate (at least the true value) may
/// fall under eps, where scikit-learn warns and hands over to L-BFGS; above it, both
/// solves agree to `cond * eps`, far below the steps' scale.
const RCOND_FLOOR: f64 = 1e4 * f64::EPSILON;
/// `|z|` past which the binomial's pointwise Hessian may underflow to zero in another
/// implementation's `exp` (it does from about 709).
const SATURATED_SCORE: f64 = 700.0;

/// How a Newton run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NewtonStop {
    /// The gradient and half the Newton decrement are both at most `tol`.
    Converged,
    /// `max_iter` iterations without meeting `tol`.
    MaxIter,
    /// scikit-learn hands over to L-BFGS here, or one of its decisions is within rounding.
    Handover,
}

/// The end of a Newton run.
#[derive(Debug, Clone)]
pub struct NewtonRun {
    /// Parameters in [`Problem`]'s layout, centred as described in the module docs.
    pub theta: Array1<f64>,
    /// Iterations run (scikit-learn's `n_iter_` when converged or cut by `max_iter`).
    pub n_iter: usize,
    pub converged: bool,
    pub stop: NewtonStop,
}

impl NewtonRun {
    /// A run that ended at `theta` after `n_iter` iterations, for the reason `stop`.
    fn ended(theta: Array1<f64>, n_iter: usize, stop: NewtonStop) -> Result<Self> {
        Ok(Self {
            theta,
            n_iter,
            converged: stop == NewtonStop::Converged,
            stop,
        })
    }
}

/// Three-valued (Kleene) `and` and `or`: `None` is "either way".
fn both(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn either(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

fn max_abs(v: &Array1<f64>) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The parameters the Newton step moves (indices into [`Problem`]'s layout): all
/// coefficients and, with an intercept, the intercepts, except the multinomial's dropped
/// reference (module docs).
fn identifiable_parameters(problem: &Problem<'_>) -> Vec<usize> {
    let (k, d) = (problem.n_out, problem.d);
    let multinomial = k > 1;
    let dropped_class = (multinomial && problem.l2 == 0.0).then_some(k - 1);
    let mut free: Vec<usize> = (0..k)
        .filter(|&c| Some(c) != dropped_class)
        .flat_map(|c| c * d..(c + 1) * d)
        .collect();
    if problem.fit_intercept {
        let kept_intercepts = if multinomial { k - 1 } else { k };
        free.extend((0..kept_intercepts).map(|c| k * d + c));
    }
    free
}

/// scikit-learn's re-centring of a multinomial start (`NewtonCholeskySolver.setup`), which
/// the dropped entries of the Newton step (module docs) keep: without penalty every class
/// loses the last class's coefficients and intercept (the last class becomes zero), with
/// one and an intercept the intercepts lose the last intercept. Neither changes the
/// predicted probabilities; from zero neither changes anything.
fn recentre_start(problem: &Problem<'_>, theta: &mut Array1<f64>) {
    let (k, d) = (problem.n_out, problem.d);
    if k == 1 {
        return;
    }
    let shift = |theta: &mut Array1<f64>, index: &dyn Fn(usize) -> usize| {
        let last = theta[index(k - 1)];
        for c in 0..k {
            theta[index(c)] -= last;
        }
    };
    if problem.l2 == 0.0 {
        for j in 0..d {
            shift(theta, &|c| c * d + j);
        }
    }
    if problem.fit_intercept {
        shift(theta, &|c| k * d + c);
    }
}

/// The start of a run: `start` (in [`Problem`]'s layout, unfitted intercepts zeroed) or zero.
fn initial_point(problem: &Problem<'_>, start: Option<ArrayView1<f64>>) -> Array1<f64> {
    let (k, d) = (problem.n_out, problem.d);
    let mut theta = start.map_or_else(|| Array1::zeros(k * (d + 1)), |t| t.to_owned());
    if !problem.fit_intercept {
        theta.slice_mut(s![k * d..]).fill(0.0);
    }
    theta
}

/// scikit-learn's final centring of a multinomial model (module docs).
fn centre_classes(problem: &Problem<'_>, theta: &mut Array1<f64>) {
    let (k, d) = (problem.n_out, problem.d);
    if k == 1 {
        return;
    }
    let centre = |theta: &mut Array1<f64>, index: &dyn Fn(usize) -> usize| {
        let mean = (0..k).map(index).map(|i| theta[i]).sum::<f64>() / k as f64;
        for c in 0..k {
            theta[index(c)] -= mean;
        }
    };
    if problem.l2 == 0.0 {
        for j in 0..d {
            centre(theta, &|c| c * d + j);
        }
    }
    if problem.fit_intercept {
        centre(theta, &|c| k * d + c);
    }
}

impl Problem<'_> {
    /// The objective's Hessian at `theta`, `n_params x n_params` in `theta`'s layout (the
    /// rows and columns of intercepts not fitted stay zero), and whether the binomial's
    /// pointwise Hessian may have underflowed on more than a quarter of the weight (where
    /// scikit-learn gives up on Newton).
    pub(crate) fn hessian(&self, theta: ArrayView1<f64>) -> Result<(Array2<f64>, bool)> {
        let (k, d) = (self.n_out, self.d);
        let n = self.x.nrows();
        let coef = theta
            .slice(s![..k * d])
            .into_shape_with_order((k, d))
            .expect("n_out * d entries");
        let mut z = scores(self.x, coef, theta.slice(s![k * d..]));
        let share = |i: usize| self.weights.map_or(1.0, |w| w[i]) / self.weight_sum;
        // The design with a column of ones for the intercept.
        let da = d + usize::from(self.fit_intercept);
        let mut design = Array2::<f64>::ones((n, da));
        design.slice_mut(s![.., ..d]).assign(&self.x);
        let index = |c: usize, a: usize| if a < d { c * d + a } else { k * d + c };
        let n_params = k * (d + 1);
        let mut hess = Array2::<f64>::zeros((n_params, n_params));
        let mut place = |c: usize, l: usize, block: &Array2<f64>| {
            for ((a, b), &v) in block.indexed_iter() {
                hess[[index(c, a), index(l, b)]] = v;
                hess[[index(l, b), index(c, a)]] = v;
            }
        };
        let mut saturated = false;
        match &self.target {
            Target::Binary(_) => {
                let mut saturated_share = 0.0;
                let mut scaled = design;
                for (i, mut row) in scaled.rows_mut().into_iter().enumerate() {
                    let zi = z[[i, 0]];
                    if zi.abs() > SATURATED_SCORE {
                        saturated_share += share(i);
                    }
                    // p (1 - p) = e / (1 + e)^2 with e = exp(-|z|), exact in both tails.
                    let e = (-zi.abs()).exp();
                    row *= (share(i) * e / ((1.0 + e) * (1.0 + e))).sqrt();
                }
                saturated = saturated_share > 0.25;
                place(0, 0, &matmul::gram(scaled.view()));
            }
            Target::Multinomial(_) => {
                elementwise::softmax_rows_inplace(z.view_mut());
                for c in 0..k {
                    for l in c..k {
                        let mut weighted = design.clone();
                        for (i, mut row) in weighted.rows_mut().into_iter().enumerate() {
                            let (pc, pl) = (z[[i, c]], z[[i, l]]);
                            let diag = if c == l { pc } else { 0.0 };
                            row *= share(i) * (diag - pc * pl);
                        }
                        place(c, l, &matmul::dot(design.t(), weighted.view())?);
                    }
                }
            }
        }
        for i in 0..k * d {
            hess[[i, i]] += self.l2;
        }
        Ok((hess, saturated))
    }
}

/// A point of the line search.
struct Trial {
    theta: Array1<f64>,
    f: f64,
    grad: Array1<f64>,
}

enum LineSearch {
    Accepted(Trial),
    /// No step passed (scikit-learn hands over to L-BFGS), or a decision was within rounding.
    Handover,
}

/// Backtracking from `theta` along `step` (module docs). `grad_l1` is the current gradient's
/// 1-norm over the identifiable parameters only: scikit-learn zeroes the dropped entries of
/// its gradient before the solve and compares the trial's full gradient with that.
fn line_search(
    problem: &Problem<'_>,
    theta: &Array1<f64>,
    step: &Array1<f64>,
    f: f64,
    grad_l1: f64,
    slope: f64,
) -> Result<LineSearch> {
    let band = LOSS_ROUNDING * f.abs();
    let mut t = 1.0;
    for _ in 0..LINE_SEARCH_TRIALS {
        let trial_theta = theta + &(step * t);
        let mut trial_grad = Array1::zeros(theta.len());
        let trial_f = problem.eval(trial_theta.view(), &mut trial_grad)?;
        let change = trial_f - f;
        let sufficient = at_most(change, t * ARMIJO_SLOPE * slope, band);
        let flat = both(
            at_most(change.abs(), FLAT_CHANGE * f.abs(), band),
            at_most(
                trial_grad.iter().map(|g| g.abs()).sum::<f64>(),
                grad_l1,
                1e-6 * grad_l1,
            ),
        );
        match either(sufficient, flat) {
            Some(true) => {
                return Ok(LineSearch::Accepted(Trial {
                    theta: trial_theta,
                    f: trial_f,
                    grad: trial_grad,
                }))
            }
            Some(false) => t *= 0.5,
            None => return Ok(LineSearch::Handover),
        }
    }
    Ok(LineSearch::Handover)
}

/// The signature [`newton_cholesky`] and [`newton_cg`] share: a problem, an optional start,
/// `max_iter` and `tol`.
pub(crate) type NewtonSolver =
    fn(&Problem<'_>, Option<ArrayView1<'_, f64>>, usize, f64) -> Result<NewtonRun>;

/// Minimise `problem`'s objective by scikit-learn's Newton-Cholesky iteration (module docs)
/// from `start` (scikit-learn's `warm_start`, re-centred as it does; zero when `None`), at
/// most `max_iter` iterations, tolerance `tol`.
pub(crate) fn newton_cholesky(
    problem: &Problem<'_>,
    start: Option<ArrayView1<f64>>,
    max_iter: usize,
    tol: f64,
) -> Result<NewtonRun> {
    let n_params = problem.n_out * (problem.d + 1);
    let free = identifiable_parameters(problem);
    // The gradient's rounding: entries are sums of feature values times O(1) residuals.
    let x_scale = problem.x.iter().fold(
        if problem.fit_intercept { 1.0 } else { 0.0 },
        |m: f64, v| m.max(v.abs()),
    );
    let gradient_band = 1e-6 * tol + 1e3 * f64::EPSILON * x_scale;
    let decrement_band = 1e-4 * tol;
    let finish = |mut theta: Array1<f64>, n_iter: usize, stop: NewtonStop| {
        centre_classes(problem, &mut theta);
        NewtonRun::ended(theta, n_iter, stop)
    };
    let mut theta = initial_point(problem, start);
    recentre_start(problem, &mut theta);
    let mut grad = Array1::<f64>::zeros(n_params);
    let mut f = problem.eval(theta.view(), &mut grad)?;
    for iteration in 1..=max_iter {
        let (hess, saturated) = problem.hessian(theta.view())?;
        if saturated {
            return finish(theta, iteration - 1, NewtonStop::Handover);
        }
        let reduced = hess.select(Axis(0), &free).select(Axis(1), &free);
        let rhs = Array1::from_iter(free.iter().map(|&i| -grad[i]));
        let solved = linalg::cholesky_solve_with_rcond(reduced.view(), rhs.view());
        let Some((reduced_step, _)) = solved.filter(|&(_, rcond)| rcond >= RCOND_FLOOR) else {
            return finish(theta, iteration - 1, NewtonStop::Handover);
        };
        let mut step = Array1::<f64>::zeros(n_params);
        for (&i, &v) in free.iter().zip(&reduced_step) {
            step[i] = v;
        }
        let slope = grad.dot(&step);
        if slope > 0.0 {
            return finish(theta, iteration - 1, NewtonStop::Handover);
        }
        let grad_l1 = free.iter().map(|&i| grad[i].abs()).sum::<f64>();
        let LineSearch::Accepted(next) = line_search(problem, &theta, &step, f, grad_l1, slope)?
        else {
            return finish(theta, iteration - 1, NewtonStop::Handover);
        };
        (theta, f, grad) = (next.theta, next.f, next.grad);
        let decrement = step.dot(&hess.dot(&step));
        let converged = both(
            at_most(max_abs(&grad), tol, gradient_band),
            at_most(0.5 * decrement, tol, decrement_band),
        );
        match converged {
            Some(true) => return finish(theta, iteration, NewtonStop::Converged),
            Some(false) => {}
            None => return finish(theta, iteration, NewtonStop::Handover),
        }
    }
    finish(theta, max_iter, NewtonStop::MaxIter)
}

/// The Armijo and curvature constants of scikit-learn's `newton-cg` Wolfe line search.
const WOLFE_DECREASE: f64 = 1e-4;
const WOLFE_CURVATURE: f64 = 0.9;
/// The inner conjugate gradients run at most this many products past the first.
const MAX_INNER: usize = 200;

/// Truncated conjugate gradients for `H x = -g` as scikit-learn's `newton-cg` runs them:
/// stop when the residual's 1-norm is at most `tol`, at a curvature `p.H.p` in `[0, 16 eps
/// |p|^2]`, or at a negative one (after the first direction; on the first, a steepest
/// descent step scaled by it). `None` where a stopping decision lies within rounding.
fn truncated_cg(hess: &Array2<f64>, grad: &Array1<f64>, tol: f64) -> Option<Array1<f64>> {
    let flat = 16.0 * f64::EPSILON;
    let mut x = Array1::<f64>::zeros(grad.len());
    let mut residual = grad.clone();
    let mut direction = grad.mapv(|g| -g);
    let mut rr = residual.dot(&residual);
    let mut direction_norm2 = rr;
    for i in 0..=MAX_INNER {
        let residual_l1 = residual.iter().map(|r| r.abs()).sum::<f64>();
        match at_most(residual_l1, tol, 1e-4 * tol) {
            Some(true) => break,
            Some(false) => {}
            None => return None,
        }
        let product = hess.dot(&direction);
        let curvature = direction.dot(&product);
        let bound = flat * direction_norm2;
        if curvature >= 0.0 {
            match at_most(curvature, bound, 0.5 * bound) {
                Some(true) => break,
                Some(false) => {}
                None => return None,
            }
        } else {
            if i == 0 {
                x.scaled_add(rr / curvature, &direction);
            }
            break;
        }
        let alpha = rr / curvature;
        x.scaled_add(alpha, &direction);
        residual.scaled_add(alpha, &product);
        let rr_next = residual.dot(&residual);
        let beta = rr_next / rr;
        direction = &direction * beta - &residual;
        direction_norm2 = rr_next + beta * beta * direction_norm2;
        rr = rr_next;
    }
    Some(x)
}

/// Minimise `problem`'s objective from `start` (scikit-learn's `warm_start`, taken as given;
/// zero when `None`) by scikit-learn's `newton-cg` iteration: while
/// the largest gradient entry exceeds `tol`, a truncated-CG Newton direction (tolerance
/// `min(0.5, sqrt(|g|_1)) |g|_1`, all parameters, no reference class) and a Wolfe line
/// search whose first trial is `min(1, 2.02 (f_k - f_{k-1}) / g.p)` (1 at the first step).
/// Only runs whose every line search takes its first trial (Armijo `1e-4` and strong
/// curvature `0.9` both met) are replicated; elsewhere MINPACK's step refinement would
/// follow, and the run is handed over ([`NewtonStop::Handover`]), as it is where a decision
/// lies within rounding. No final centring: scikit-learn's `newton-cg` does none.
pub(crate) fn newton_cg(
    problem: &Problem<'_>,
    start: Option<ArrayView1<f64>>,
    max_iter: usize,
    tol: f64,
) -> Result<NewtonRun> {
    let n_params = problem.n_out * (problem.d + 1);
    let x_scale = problem.x.iter().fold(
        if problem.fit_intercept { 1.0 } else { 0.0 },
        |m: f64, v| m.max(v.abs()),
    );
    let gradient_band = 1e-6 * tol + 1e3 * f64::EPSILON * x_scale;
    let finish = NewtonRun::ended;
    let mut theta = initial_point(problem, start);
    let mut grad = Array1::<f64>::zeros(n_params);
    let mut f = problem.eval(theta.view(), &mut grad)?;
    let mut f_before: Option<f64> = None;
    for k in 0..max_iter {
        match at_most(max_abs(&grad), tol, gradient_band) {
            Some(true) => return finish(theta, k, NewtonStop::Converged),
            Some(false) => {}
            None => return finish(theta, k, NewtonStop::Handover),
        }
        let (hess, _) = problem.hessian(theta.view())?;
        let grad_l1 = grad.iter().map(|g| g.abs()).sum::<f64>();
        let Some(direction) = truncated_cg(&hess, &grad, 0.5f64.min(grad_l1.sqrt()) * grad_l1)
        else {
            return finish(theta, k, NewtonStop::Handover);
        };
        let slope = grad.dot(&direction);
        if slope >= 0.0 || slope.is_nan() {
            return finish(theta, k, NewtonStop::Handover);
        }
        let step = match f_before {
            None => 1.0,
            Some(before) => {
                let guess = 2.02 * (f - before) / slope;
                let band = 2.02 * 2.0 * LOSS_ROUNDING * f.abs() / slope.abs();
                if guess < 0.0 {
                    1.0
                } else {
                    match at_most(guess, 1.0, band) {
                        Some(true) => guess,
                        Some(false) => 1.0,
                        None => return finish(theta, k, NewtonStop::Handover),
                    }
                }
            }
        };
        let trial_theta = &theta + &(&direction * step);
        let mut trial_grad = Array1::<f64>::zeros(n_params);
        let trial_f = problem.eval(trial_theta.view(), &mut trial_grad)?;
        let accepted = both(
            at_most(
                trial_f,
                f + WOLFE_DECREASE * step * slope,
                LOSS_ROUNDING * f.abs(),
            ),
            at_most(
                trial_grad.dot(&direction).abs(),
                WOLFE_CURVATURE * slope.abs(),
                1e-6 * slope.abs(),
            ),
        );
        if accepted != Some(true) {
            return finish(theta, k, NewtonStop::Handover);
        }
        (f_before, f, grad, theta) = (Some(f), trial_f, trial_grad, trial_theta);
    }
    finish(theta, max_iter, NewtonStop::MaxIter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine_learning::logistic_regression::{
        LogisticRegression, LogisticSolver, Penalty,
    };

    /// A deterministic, overlapping three-class cloud in 3-D (no class separable).
    fn cloud(n: usize) -> (Array2<f64>, Vec<usize>) {
        let x = Array2::from_shape_fn((n, 3), |(i, j)| {
            ((i * 7919 + j * 104_729) % 997) as f64 / 498.5 - 1.0 + 0.3 * (i % 3) as f64
        });
        let y = (0..n).map(|i| (i * 31 + i / 7) % 3).collect();
        (x, y)
    }

    fn problem<'a>(
        x: &'a Array2<f64>,
        y: &[usize],
        classes: usize,
        l2: f64,
        fit_intercept: bool,
        weights: Option<&'a [f64]>,
    ) -> Problem<'a> {
        let labels: Vec<usize> = y.iter().map(|&c| c % classes).collect();
        Problem {
            x: x.view(),
            n_out: if classes == 2 { 1 } else { classes },
            d: x.ncols(),
            fit_intercept,
            l2,
            weights,
            weight_sum: weights.map_or(x.nrows() as f64, |w| w.iter().sum()),
            target: if classes == 2 {
                Target::Binary(labels.iter().map(|&c| c as f64).collect())
            } else {
                Target::Multinomial(labels)
            },
        }
    }

    /// The Hessian against central differences of the gradient (an independent oracle): with
    /// h = 1e-5 on O(1) smooth gradients the difference error is ~h^2 + eps / h ~ 1e-10.
    #[test]
    fn hessian_matches_gradient_differences() {
        let (x, y) = cloud(40);
        let w: Vec<f64> = (0..40).map(|i| 0.2 + (i % 5) as f64 * 0.4).collect();
        for (classes, l2, fit_intercept, weights) in [
            (2, 0.3, true, None),
            (2, 0.0, false, Some(w.as_slice())),
            (3, 0.5, true, Some(w.as_slice())),
            (3, 0.0, true, None),
            (4, 0.2, false, None),
        ] {
            let p = problem(&x, &y, classes, l2, fit_intercept, weights);
            let n_params = p.n_out * (p.d + 1);
            // Intercepts not fitted stay at zero and have no derivative to check.
            let fitted = |i: usize| fit_intercept || i < p.n_out * p.d;
            let theta = Array1::from_shape_fn(n_params, |i| {
                if fitted(i) {
                    (i as f64 * 0.73).sin() * 0.6
                } else {
                    0.0
                }
            });
            let (hess, saturated) = p.hessian(theta.view()).unwrap();
            assert!(!saturated);
            let h = 1e-5;
            for j in (0..n_params).filter(|&j| fitted(j)) {
                let (mut up, mut down) = (theta.clone(), theta.clone());
                up[j] += h;
                down[j] -= h;
                let (mut g_up, mut g_down) = (Array1::zeros(n_params), Array1::zeros(n_params));
                p.eval(up.view(), &mut g_up).unwrap();
                p.eval(down.view(), &mut g_down).unwrap();
                for i in 0..n_params {
                    let fd = (g_up[i] - g_down[i]) / (2.0 * h);
                    assert!(
                        (fd - hess[[i, j]]).abs() < 1e-8,
                        "classes={classes} l2={l2} H[{i},{j}]: {fd} vs {}",
                        hess[[i, j]]
                    );
                }
            }
        }
    }

    /// A converged Newton run is at the optimum: its gradient (the full one, reference class
    /// included) is at most tol, and an L-BFGS fit to a gradient of 1e-12 agrees with it to
    /// the distance a gradient of tol allows, tol / mu with mu >= l2 the strong convexity.
    /// With tol = 1e-8 quadratic convergence leaves the Newton point far closer than that.
    #[test]
    fn converged_runs_reach_the_lbfgs_optimum() {
        let (x, y) = cloud(60);
        let labels: Vec<f64> = y.iter().map(|&c| c as f64).collect();
        for (classes, fit_intercept) in [(2, true), (2, false), (3, true), (3, false)] {
            let y = Array1::from_iter(labels.iter().map(|&c| (c as usize % classes) as f64));
            let fit = |solver, tol| {
                let mut m = LogisticRegression::with_defaults()
                    .with_penalty(Penalty::L2, 2.0)
                    .with_fit_intercept(fit_intercept)
                    .with_solver(solver)
                    .with_tol(tol)
                    .with_max_iter(1000);
                m.fit(&x, &y).unwrap();
                m
            };
            let newton = fit(LogisticSolver::NewtonCholesky, 1e-8);
            let lbfgs = fit(LogisticSolver::Lbfgs, 1e-12);
            assert!(newton.converged().unwrap() && lbfgs.converged().unwrap());
            assert!(newton.n_iter().unwrap() < 15, "{:?}", newton.n_iter());
            let radius = 1e-8 * 2.0 * 60.0 * 10.0;
            let a = newton
                .coefficients()
                .unwrap()
                .iter()
                .chain(newton.intercept().unwrap());
            let b = lbfgs
                .coefficients()
                .unwrap()
                .iter()
                .chain(lbfgs.intercept().unwrap());
            for (u, v) in a.zip(b) {
                assert!((u - v).abs() < radius, "classes={classes}: {u} vs {v}");
            }
        }
    }

    /// Without a penalty the multinomial model drops its last class while solving and is
    /// centred afterwards: every coefficient column and the intercepts sum to zero, and the
    /// gradient there is at most tol.
    #[test]
    fn unpenalised_multinomial_is_centred() {
        let (x, y) = cloud(90);
        let p = problem(&x, &y, 3, 0.0, true, None);
        let run = newton_cholesky(&p, None, 100, 1e-10).unwrap();
        assert_eq!(run.stop, NewtonStop::Converged);
        let theta = &run.theta;
        for j in 0..3 {
            let column = (0..3).map(|c| theta[c * 3 + j]).sum::<f64>();
            assert!(column.abs() < 1e-12, "column {j}: {column}");
        }
        assert!((theta[9] + theta[10] + theta[11]).abs() < 1e-12);
        let mut g = Array1::zeros(theta.len());
        p.eval(theta.view(), &mut g).unwrap();
        assert!(max_abs(&g) <= 1e-10, "{g}");
    }

    /// A run cut by max_iter reports it, and a repeated column without a penalty (a
    /// singular Hessian, where scikit-learn hands over to L-BFGS) is handed over.
    #[test]
    fn cut_and_singular_runs_do_not_converge() {
        let (x, y) = cloud(60);
        let p = problem(&x, &y, 3, 0.1, true, None);
        let cut = newton_cholesky(&p, None, 1, 1e-12).unwrap();
        assert_eq!(
            (cut.stop, cut.n_iter, cut.converged),
            (NewtonStop::MaxIter, 1, false)
        );

        let repeated = ndarray::concatenate(Axis(1), &[x.view(), x.slice(s![.., ..1])]).unwrap();
        let p = problem(&repeated, &y, 2, 0.0, true, None);
        let run = newton_cholesky(&p, None, 100, 1e-4).unwrap();
        assert_eq!((run.stop, run.converged), (NewtonStop::Handover, false));
    }

    /// Newton-CG stops where the largest gradient entry is at most tol; with tol = 1e-9 it
    /// then lies within tol / mu (mu >= l2 = 1 / (C n)) of the Newton-Cholesky optimum.
    #[test]
    fn newton_cg_reaches_the_newton_cholesky_optimum() {
        let (x, y) = cloud(60);
        for (classes, fit_intercept) in [(2, true), (3, true), (3, false)] {
            let p = problem(&x, &y, classes, 1.0 / 120.0, fit_intercept, None);
            let cg = newton_cg(&p, None, 100, 1e-9).unwrap();
            let cholesky = newton_cholesky(&p, None, 100, 1e-12).unwrap();
            assert_eq!(
                (cg.stop, cholesky.stop),
                (NewtonStop::Converged, NewtonStop::Converged)
            );
            let mut g = Array1::zeros(cg.theta.len());
            p.eval(cg.theta.view(), &mut g).unwrap();
            assert!(max_abs(&g) <= 1e-9);
            // The multinomial intercepts may differ by a common shift (newton-cg is not
            // centred); compare class differences there.
            let shift = |t: &Array1<f64>| {
                if classes > 2 && fit_intercept {
                    t[t.len() - 1]
                } else {
                    0.0
                }
            };
            let radius = 1e-9 * 120.0 * (cg.theta.len() as f64).sqrt();
            for i in 0..cg.theta.len() {
                let intercept = i >= p.n_out * p.d;
                let (a, b) = if intercept {
                    (
                        cg.theta[i] - shift(&cg.theta),
                        cholesky.theta[i] - shift(&cholesky.theta),
                    )
                } else {
                    (cg.theta[i], cholesky.theta[i])
                };
                assert!(
                    (a - b).abs() <= radius,
                    "classes={classes} i={i}: {a} vs {b}"
                );
            }
        }
    }

    /// scikit-learn's warm start. newton-cholesky tests convergence only after a step, so a
    /// run started at its own converged point takes exactly one iteration and stays there
    /// (to the size of that last step); newton-cg tests the gradient first and stops at
    /// iteration 0 at the start itself. A run started elsewhere (here a far, uncentred
    /// point, re-centred first for newton-cholesky) reaches the same optimum.
    #[test]
    fn warm_starts_stop_at_the_optimum_and_reach_it_from_elsewhere() {
        let (x, y) = cloud(60);
        let w: Vec<f64> = (0..60).map(|i| 0.3 + (i % 4) as f64 * 0.5).collect();
        for (classes, l2, fit_intercept, weights) in [
            (2, 0.01, true, None),
            (2, 0.0, false, Some(w.as_slice())),
            (3, 0.01, true, Some(w.as_slice())),
            (3, 0.0, true, None),
            (3, 0.02, false, None),
        ] {
            let p = problem(&x, &y, classes, l2, fit_intercept, weights);
            let n_params = p.n_out * (p.d + 1);
            let tol = 1e-10;
            let case = format!("classes={classes} l2={l2} fit_intercept={fit_intercept}");
            let cold = newton_cholesky(&p, None, 100, tol).unwrap();
            assert_eq!(cold.stop, NewtonStop::Converged, "{case}");
            assert!(cold.n_iter > 2, "{case}: {}", cold.n_iter);
            let again = newton_cholesky(&p, Some(cold.theta.view()), 100, tol).unwrap();
            assert_eq!(
                (again.stop, again.n_iter),
                (NewtonStop::Converged, 1),
                "{case}"
            );
            // The gradient at the start is at most tol; the Hessian's smallest eigenvalue
            // on the identifiable parameters is far above 1e-3 here, so the last step is
            // below 1e-7.
            for (a, b) in again.theta.iter().zip(&cold.theta) {
                assert!((a - b).abs() < 1e-7, "{case}: {a} vs {b}");
            }

            let cg = newton_cg(&p, None, 100, tol).unwrap();
            assert_eq!(cg.stop, NewtonStop::Converged, "{case}");
            let cg_again = newton_cg(&p, Some(cg.theta.view()), 100, tol).unwrap();
            assert_eq!((cg_again.stop, cg_again.n_iter), (NewtonStop::Converged, 0));
            assert_eq!(cg_again.theta, cg.theta, "{case}");

            // A start far from the optimum, every class shifted differently.
            let far = Array1::from_shape_fn(n_params, |i| {
                if fit_intercept || i < p.n_out * p.d {
                    1.5 * (i as f64 * 1.7).cos() + 0.5
                } else {
                    0.0
                }
            });
            let from_far = newton_cholesky(&p, Some(far.view()), 100, tol).unwrap();
            assert_eq!(from_far.stop, NewtonStop::Converged, "{case}");
            assert!(from_far.n_iter > 1, "{case}");
            // Both centred: within tol / mu of each other, mu >= 1e-3 (see above).
            for (a, b) in from_far.theta.iter().zip(&cold.theta) {
                assert!((a - b).abs() < 1e-6, "{case}: {a} vs {b}");
            }
            let mut g = Array1::zeros(n_params);
            p.eval(from_far.theta.view(), &mut g).unwrap();
            assert!(max_abs(&g) <= tol, "{case}");
            // newton-cg from that far a start takes line searches past their first trial
            // (handed over, as the door leaves them to scikit-learn); resuming a run cut by
            // max_iter, it converges to the optimum (not centred: compare its gradient).
            let cut = newton_cg(&p, None, 2, tol).unwrap();
            assert_eq!(cut.stop, NewtonStop::MaxIter, "{case}");
            let resumed = newton_cg(&p, Some(cut.theta.view()), 100, tol).unwrap();
            assert_eq!(resumed.stop, NewtonStop::Converged, "{case}");
            assert!(resumed.n_iter > 0, "{case}");
            p.eval(resumed.theta.view(), &mut g).unwrap();
            assert!(max_abs(&g) <= tol, "{case}");
        }
    }

    /// scikit-learn's setup re-centres a multinomial start: without penalty the last class
    /// (its intercept included) becomes zero, with one only the last intercept does.
    #[test]
    fn multinomial_starts_are_recentred_as_scikit_learn() {
        let (x, y) = cloud(30);
        let start = Array1::from_iter((0..12).map(|i| i as f64 * 0.5 - 1.0));
        let p = problem(&x, &y, 3, 0.0, true, None);
        let mut theta = start.clone();
        recentre_start(&p, &mut theta);
        // coef rows [-1, -.5, 0], [.5, 1, 1.5], [2, 2.5, 3]; intercepts [3.5, 4, 4.5].
        let expected = [
            -3.0, -3.0, -3.0, -1.5, -1.5, -1.5, 0.0, 0.0, 0.0, -1.0, -0.5, 0.0,
        ];
        assert_eq!(theta.to_vec(), expected);
        let p = problem(&x, &y, 3, 0.1, true, None);
        let mut theta = start.clone();
        recentre_start(&p, &mut theta);
        let mut expected = start.to_vec();
        expected[9..].copy_from_slice(&[-1.0, -0.5, 0.0]);
        assert_eq!(theta.to_vec(), expected);
        for (classes, l2, fit_intercept) in [(3, 0.1, false), (2, 0.0, true)] {
            let p = problem(&x, &y, classes, l2, fit_intercept, None);
            let mut theta = start.slice(s![..p.n_out * 4]).to_owned();
            recentre_start(&p, &mut theta);
            assert_eq!(theta, start.slice(s![..p.n_out * 4]));
        }
    }

    #[test]
    fn three_valued_decisions() {
        assert_eq!(at_most(1.0, 2.0, 0.5), Some(true));
        assert_eq!(at_most(3.0, 2.0, 0.5), Some(false));
        assert_eq!(at_most(2.2, 2.0, 0.5), None);
        assert_eq!(at_most(f64::NAN, 2.0, 0.5), None);
        assert_eq!(either(None, Some(true)), Some(true));
        assert_eq!(either(None, Some(false)), None);
        assert_eq!(both(None, Some(false)), Some(false));
        assert_eq!(both(Some(true), None), None);
    }
}
