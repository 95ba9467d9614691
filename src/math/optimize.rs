//! Unconstrained minimisation for the linear models: limited-memory quasi-Newton (L-BFGS for
//! smooth objectives, and its orthant-wise variant OWL-QN, Andrew & Gao 2007, for a smooth
//! objective plus an L1 term), and a truncated Newton method (Newton-CG) for strictly convex
//! objectives with Hessian-vector products.
//!
//! The objective is a closure that returns `f(x)` and writes `∇f(x)`; the L1 term
//! `l1 * sum_{i penalised} |x_i|` is handled here, so the closure stays smooth. The line
//! search backtracks from the quasi-Newton step until the Armijo condition holds (for
//! OWL-QN, along the projected path that never crosses an orthant boundary).

use crate::error::{Error, Result};
use ndarray::{Array1, ArrayView1, Zip};
use std::collections::VecDeque;

/// Stopping rules and the L1 term.
#[derive(Debug, Clone)]
pub struct LbfgsOptions {
    /// Iteration cap (each iteration is one quasi-Newton step and its line search).
    pub max_iter: usize,
    /// Stop when the largest entry of the (pseudo-)gradient is at most this
    /// (scipy's `pgtol`, scikit-learn's `tol` for `lbfgs`).
    pub gtol: f64,
    /// Stop when one step lowers the objective by at most `ftol * max(|f|, |f_new|, 1)`
    /// (scipy's `factr * eps`).
    pub ftol: f64,
    /// Number of correction pairs kept.
    pub memory: usize,
    /// Strength of the L1 term (0 for plain L-BFGS).
    pub l1: f64,
    /// Which coordinates the L1 term applies to (all when `None`), e.g. not the intercepts.
    pub l1_mask: Option<Vec<bool>>,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        Self {
            max_iter: 100,
            gtol: 1e-4,
            ftol: 1e7 * f64::EPSILON,
            memory: 10,
            l1: 0.0,
            l1_mask: None,
        }
    }
}

/// What the minimiser found.
#[derive(Debug, Clone)]
pub struct LbfgsResult {
    pub x: Array1<f64>,
    /// Objective at `x`, L1 term included.
    pub f: f64,
    /// Iterations run.
    pub n_iter: usize,
    /// Whether a stopping rule other than `max_iter` ended the run.
    pub converged: bool,
}

impl LbfgsResult {
    /// A run that a stopping rule ended after `n_iter` iterations.
    fn converged(x: Array1<f64>, f: f64, n_iter: usize) -> Self {
        Self {
            x,
            f,
            n_iter,
            converged: true,
        }
    }

    /// A run that used all of `opts.max_iter`: converged only if its last gradient (the
    /// pseudo-gradient under an L1 term) is within `gtol` anyway.
    fn after_max_iter(x: Array1<f64>, f: f64, gradient: &Array1<f64>, opts: &LbfgsOptions) -> Self {
        Self {
            x,
            f,
            n_iter: opts.max_iter,
            converged: max_abs(gradient) <= opts.gtol,
        }
    }
}

/// scipy's `ftol` rule: the step cut `f` by at most `ftol` relative to the larger of `|f|`
/// before and after it, and 1.
fn reduction_within_ftol(reduction: f64, f: f64, ftol: f64) -> bool {
    reduction <= ftol * f.abs().max((f + reduction).abs()).max(1.0)
}

/// Armijo sufficient-decrease constant.
const C1: f64 = 1e-4;
/// Backtracking halvings before the line search gives up.
const MAX_BACKTRACK: usize = 50;

/// Minimise `objective(x, grad) + l1 * |x|_1` from `x0`.
///
/// The closure returns `f(x)` and writes `∇f(x)` into `grad`; an `Err` aborts the run.
pub fn minimize<F>(mut objective: F, x0: Array1<f64>, opts: &LbfgsOptions) -> Result<LbfgsResult>
where
    F: FnMut(ArrayView1<f64>, &mut Array1<f64>) -> Result<f64>,
{
    let n = x0.len();
    let penalised = |i: usize| opts.l1 > 0.0 && opts.l1_mask.as_ref().is_none_or(|m| m[i]);
    let mask: Vec<bool> = (0..n).map(penalised).collect();
    let l1_term = |x: &Array1<f64>| -> f64 {
        if opts.l1 > 0.0 {
            opts.l1
                * x.iter()
                    .zip(&mask)
                    .filter(|(_, &m)| m)
                    .map(|(v, _)| v.abs())
                    .sum::<f64>()
        } else {
            0.0
        }
    };
    let mut x = x0;
    let mut g = Array1::<f64>::zeros(n);
    let mut f = objective(x.view(), &mut g)? + l1_term(&x);
    if !f.is_finite() {
        return Err(Error::computation(
            "L-BFGS: the objective is not finite at the starting point",
        ));
    }
    let mut pairs: VecDeque<(Array1<f64>, Array1<f64>, f64)> = VecDeque::with_capacity(opts.memory);
    let mut pg = pseudo_gradient(&x, &g, opts.l1, &mask);
    let mut x_new = Array1::<f64>::zeros(n);
    let mut g_new = Array1::<f64>::zeros(n);
    for iter in 0..opts.max_iter {
        if max_abs(&pg) <= opts.gtol {
            return Ok(LbfgsResult::converged(x, f, iter));
        }
        // Two-loop recursion: d = -H pg.
        let mut d = pg.mapv(|v| -v);
        let mut alphas = Vec::with_capacity(pairs.len());
        for (s, y, rho) in pairs.iter().rev() {
            let a = rho * s.dot(&d);
            d.scaled_add(-a, y);
            alphas.push(a);
        }
        if let Some((s, y, _)) = pairs.back() {
            d *= s.dot(y) / y.dot(y);
        }
        for ((s, y, rho), a) in pairs.iter().zip(alphas.into_iter().rev()) {
            let b = rho * y.dot(&d);
            d.scaled_add(a - b, s);
        }
        if opts.l1 > 0.0 {
            // OWL-QN: keep only the components that descend along the pseudo-gradient.
            Zip::from(&mut d).and(&pg).for_each(|di, &p| {
                if *di * p >= 0.0 {
                    *di = 0.0;
                }
            });
        }
        let mut slope = pg.dot(&d);
        if slope >= 0.0 || !slope.is_finite() {
            // Curvature memory went bad: restart from steepest descent.
            pairs.clear();
            d = pg.mapv(|v| -v);
            slope = pg.dot(&d);
        }
        // First step: scale to unit length, as the memory holds no curvature yet.
        let mut step = if pairs.is_empty() {
            (1.0 / d.dot(&d).sqrt()).min(1.0)
        } else {
            1.0
        };
        // Orthant of the current point: sign(x_i), or sign(-pg_i) where x_i = 0.
        let orthant: Array1<f64> =
            Zip::from(&x)
                .and(&pg)
                .map_collect(|&xi, &p| if xi != 0.0 { xi.signum() } else { -p.signum() });
        let mut accepted = None;
        for _ in 0..MAX_BACKTRACK {
            take_step(&mut x_new, &x, &d, step);
            if opts.l1 > 0.0 {
                Zip::from(&mut x_new)
                    .and(&orthant)
                    .and(&mask)
                    .for_each(|xn, &o, &m| {
                        if m && *xn * o <= 0.0 {
                            *xn = 0.0;
                        }
                    });
            }
            let f_trial = objective(x_new.view(), &mut g_new)? + l1_term(&x_new);
            // Armijo along the (projected) displacement.
            let decrease = if opts.l1 > 0.0 {
                Zip::from(&pg)
                    .and(&x_new)
                    .and(&x)
                    .fold(0.0, |s, &p, &xn, &xi| s + p * (xn - xi))
            } else {
                step * slope
            };
            if f_trial.is_finite() && f_trial <= f + C1 * decrease {
                accepted = Some(f_trial);
                break;
            }
            step *= 0.5;
        }
        let Some(f_next) = accepted else {
            // No decrease found along a descent direction: we are at the numerical optimum.
            return Ok(LbfgsResult::converged(x, f, iter + 1));
        };
        let s = &x_new - &x;
        let y = &g_new - &g;
        let sy = s.dot(&y);
        if sy > 1e-10 * y.dot(&y) && sy > 0.0 {
            if pairs.len() == opts.memory {
                pairs.pop_front();
            }
            pairs.push_back((s, y, 1.0 / sy));
        }
        let reduction = f - f_next;
        std::mem::swap(&mut x, &mut x_new);
        std::mem::swap(&mut g, &mut g_new);
        f = f_next;
        pg = pseudo_gradient(&x, &g, opts.l1, &mask);
        if reduction_within_ftol(reduction, f, opts.ftol) {
            return Ok(LbfgsResult::converged(x, f, iter + 1));
        }
    }
    Ok(LbfgsResult::after_max_iter(x, f, &pg, opts))
}

/// A smooth objective with Hessian-vector products, for [`minimize_newton_cg`].
pub trait SecondOrder {
    /// `f(x)`; writes `∇f(x)` into `grad` and keeps what [`SecondOrder::hess_vec`] needs at `x`.
    fn eval(&mut self, x: ArrayView1<f64>, grad: &mut Array1<f64>) -> Result<f64>;
    /// `∇²f(x) v` at the point of the latest [`SecondOrder::eval`] (a generalised Hessian is
    /// fine where `f` is only once differentiable, as for the squared hinge).
    fn hess_vec(&self, v: ArrayView1<f64>) -> Result<Array1<f64>>;
}

/// Truncated Newton: each step solves `H p = -g` by conjugate gradients to a relative residual
/// of `min(0.5, sqrt(|g|))` (at most `max(50, n)` products), then backtracks from the full
/// step until the Armijo condition holds. The Hessian must be positive definite (a strictly
/// convex objective). Stops like [`minimize`] (`gtol` on the largest gradient entry, `ftol`
/// on the relative decrease); `l1` and `memory` are ignored.
pub fn minimize_newton_cg<O: SecondOrder>(
    objective: &mut O,
    x0: Array1<f64>,
    opts: &LbfgsOptions,
) -> Result<LbfgsResult> {
    let n = x0.len();
    let mut x = x0;
    let mut g = Array1::<f64>::zeros(n);
    let mut f = objective.eval(x.view(), &mut g)?;
    if !f.is_finite() {
        return Err(Error::computation(
            "Newton-CG: the objective is not finite at the starting point",
        ));
    }
    let mut x_new = Array1::<f64>::zeros(n);
    let mut g_new = Array1::<f64>::zeros(n);
    for iter in 0..opts.max_iter {
        if max_abs(&g) <= opts.gtol {
            return Ok(LbfgsResult::converged(x, f, iter));
        }
        let gnorm = g.dot(&g).sqrt();
        let mut p = conjugate_gradient(objective, &g, gnorm.sqrt().min(0.5) * gnorm, n.max(50))?;
        let mut slope = g.dot(&p);
        if slope >= 0.0 || !slope.is_finite() {
            p = g.mapv(|v| -v);
            slope = -gnorm * gnorm;
        }
        let mut step = 1.0;
        let mut accepted = None;
        for _ in 0..MAX_BACKTRACK {
            take_step(&mut x_new, &x, &p, step);
            let f_trial = objective.eval(x_new.view(), &mut g_new)?;
            // Near the optimum the decrease of a full Newton step drowns in the rounding of
            // f: take the step when f is flat to rounding and the gradient shrinks.
            let flat = step == 1.0
                && (f_trial - f).abs() <= 8.0 * f64::EPSILON * f.abs()
                && max_abs(&g_new) < max_abs(&g);
            if f_trial.is_finite() && (f_trial <= f + C1 * step * slope || flat) {
                accepted = Some(f_trial);
                break;
            }
            step *= 0.5;
        }
        let Some(f_next) = accepted else {
            // Re-evaluate at x so the objective's state matches the returned point.
            objective.eval(x.view(), &mut g)?;
            return Ok(LbfgsResult::converged(x, f, iter + 1));
        };
        let reduction = f - f_next;
        std::mem::swap(&mut x, &mut x_new);
        std::mem::swap(&mut g, &mut g_new);
        f = f_next;
        let rounding_only = reduction.abs() <= 8.0 * f64::EPSILON * f.abs();
        if !rounding_only && reduction_within_ftol(reduction, f, opts.ftol) {
            return Ok(LbfgsResult::converged(x, f, iter + 1));
        }
    }
    Ok(LbfgsResult::after_max_iter(x, f, &g, opts))
}

/// Conjugate gradients for `H p = -g`, stopping at residual norm `tol` or `max_iter` products.
fn conjugate_gradient<O: SecondOrder>(
    objective: &O,
    g: &Array1<f64>,
    tol: f64,
    max_iter: usize,
) -> Result<Array1<f64>> {
    let mut p = Array1::<f64>::zeros(g.len());
    let mut r = g.mapv(|v| -v);
    let mut d = r.clone();
    let mut rr = r.dot(&r);
    for _ in 0..max_iter {
        if rr.sqrt() <= tol {
            break;
        }
        let hd = objective.hess_vec(d.view())?;
        let curvature = d.dot(&hd);
        // Stop at non-positive (or NaN) curvature: the direction so far still descends.
        if curvature.is_nan() || curvature <= 0.0 {
            break;
        }
        let alpha = rr / curvature;
        p.scaled_add(alpha, &d);
        r.scaled_add(-alpha, &hd);
        let rr_next = r.dot(&r);
        d = &r + &(&d * (rr_next / rr));
        rr = rr_next;
    }
    Ok(p)
}

/// `x_new = x + step * direction`.
fn take_step(x_new: &mut Array1<f64>, x: &Array1<f64>, direction: &Array1<f64>, step: f64) {
    Zip::from(x_new)
        .and(x)
        .and(direction)
        .for_each(|xn, &xi, &di| *xn = xi + step * di);
}

fn max_abs(v: &Array1<f64>) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The gradient of the smooth part, or for OWL-QN the minimum-norm subgradient of the whole
/// objective (zero where `x_i = 0` and `|g_i| <= l1`).
fn pseudo_gradient(x: &Array1<f64>, g: &Array1<f64>, l1: f64, mask: &[bool]) -> Array1<f64> {
    if l1 <= 0.0 {
        return g.clone();
    }
    Array1::from_iter(x.iter().zip(g.iter()).zip(mask).map(|((&xi, &gi), &m)| {
        if !m {
            gi
        } else if xi > 0.0 {
            gi + l1
        } else if xi < 0.0 {
            gi - l1
        } else if gi + l1 < 0.0 {
            gi + l1
        } else if gi - l1 > 0.0 {
            gi - l1
        } else {
            0.0
        }
    }))
}

/// `value <= bound` where it holds or fails by more than `band` (the rounding of the two
/// sides); `None` within the band or for NaN: a stopping or step decision an
/// implementation summing in another order could take the other way.
pub(crate) fn at_most(value: f64, bound: f64, band: f64) -> Option<bool> {
    if value <= bound - band {
        Some(true)
    } else if value > bound + band {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// The Rosenbrock function: minimum 0 at (1, 1).
    fn rosenbrock(x: ArrayView1<f64>, g: &mut Array1<f64>) -> Result<f64> {
        let (a, b) = (x[0], x[1]);
        g[0] = -2.0 * (1.0 - a) - 400.0 * a * (b - a * a);
        g[1] = 200.0 * (b - a * a);
        Ok((1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2))
    }

    #[test]
    fn lbfgs_finds_the_rosenbrock_minimum() {
        let opts = LbfgsOptions {
            max_iter: 500,
            gtol: 1e-8,
            ftol: 0.0,
            ..Default::default()
        };
        let r = minimize(rosenbrock, array![-1.2, 1.0], &opts).unwrap();
        assert!(r.converged);
        assert!(
            (r.x[0] - 1.0).abs() < 1e-6 && (r.x[1] - 1.0).abs() < 1e-6,
            "{:?}",
            r.x
        );
    }

    #[test]
    fn owlqn_solves_a_separable_lasso_in_closed_form() {
        // f(x) = 0.5 |x - c|^2 + l1 |x|_1 has the soft-thresholding solution
        // x_i = sign(c_i) max(|c_i| - l1, 0); the last coordinate is left unpenalised.
        let c = array![3.0, -0.5, 0.2, -2.0, 0.7];
        let l1 = 1.0;
        let quad = |x: ArrayView1<f64>, g: &mut Array1<f64>| -> Result<f64> {
            g.assign(&(&x - &c));
            Ok(0.5 * g.dot(g))
        };
        let opts = LbfgsOptions {
            max_iter: 200,
            gtol: 1e-10,
            ftol: 0.0,
            l1,
            l1_mask: Some(vec![true, true, true, true, false]),
            ..Default::default()
        };
        let r = minimize(quad, Array1::zeros(5), &opts).unwrap();
        let want = [2.0, 0.0, 0.0, -1.0, 0.7];
        for (got, want) in r.x.iter().zip(want) {
            assert!((got - want).abs() < 1e-8, "{:?}", r.x);
        }
        assert_eq!(r.x[1], 0.0);
        assert_eq!(r.x[2], 0.0);
    }

    /// A strictly convex quadratic plus a quartic: f = 0.5 xᵀAx - bᵀx + 0.25 sum x^4.
    struct Quartic {
        a: ndarray::Array2<f64>,
        b: Array1<f64>,
        x: Array1<f64>,
    }

    impl SecondOrder for Quartic {
        fn eval(&mut self, x: ArrayView1<f64>, grad: &mut Array1<f64>) -> Result<f64> {
            self.x = x.to_owned();
            let ax = self.a.dot(&x);
            grad.assign(&(&ax - &self.b + &x.mapv(|v| v * v * v)));
            Ok(0.5 * x.dot(&ax) - self.b.dot(&x) + 0.25 * x.mapv(|v| v.powi(4)).sum())
        }
        fn hess_vec(&self, v: ArrayView1<f64>) -> Result<Array1<f64>> {
            Ok(self.a.dot(&v) + &(&self.x.mapv(|u| 3.0 * u * u) * &v))
        }
    }

    #[test]
    fn newton_cg_finds_the_stationary_point_and_agrees_with_lbfgs() {
        let a = ndarray::array![[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]];
        let b = ndarray::array![1.0, -2.0, 3.0];
        let mut q = Quartic {
            a: a.clone(),
            b: b.clone(),
            x: Array1::zeros(3),
        };
        let opts = LbfgsOptions {
            max_iter: 100,
            gtol: 1e-12,
            ftol: 0.0,
            ..Default::default()
        };
        let r = minimize_newton_cg(&mut q, Array1::zeros(3), &opts).unwrap();
        assert!(r.converged && r.n_iter < 20, "{r:?}");
        // Independent check: the gradient A x - b + x^3 vanishes at the result.
        let grad = a.dot(&r.x) - &b + &r.x.mapv(|v| v * v * v);
        assert!(grad.iter().all(|v| v.abs() < 1e-12), "{grad}");
        let mut q2 = Quartic {
            a,
            b,
            x: Array1::zeros(3),
        };
        let l = minimize(|x, g| q2.eval(x, g), Array1::zeros(3), &opts).unwrap();
        for (u, v) in r.x.iter().zip(l.x.iter()) {
            assert!((u - v).abs() < 1e-10);
        }
    }

    #[test]
    fn errors_from_the_objective_propagate() {
        let bad = |_: ArrayView1<f64>, _: &mut Array1<f64>| -> Result<f64> { Ok(f64::NAN) };
        assert!(minimize(bad, array![0.0], &LbfgsOptions::default()).is_err());
    }
}
