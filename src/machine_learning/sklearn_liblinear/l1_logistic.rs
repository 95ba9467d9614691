//! newGLMNET for L1-regularised logistic regression (Yuan, Ho and Lin 2012; liblinear's
//! solver 6). Each outer Newton step builds the loss's gradient and Hessian diagonal at
//! `w`, shrinks features at zero whose gradient lies well inside `[-1, 1]`, then minimises
//! the L1-penalised quadratic model by coordinate descent over the remaining features
//! (shuffled each pass, with its own inner shrinking and a loosening-then-tightening
//! tolerance), and accepts the model's step after a backtracking line search (halving, at
//! most 20 times) on the exact objective. The margins are kept as `exp(w . x_i)`, updated
//! by multiplication along the step.

use super::random::MersenneTwister;
use super::{l1_violation, larger, smaller, Columns, Rows, SubProblem};

/// The inner coordinate descent's pass cap per Newton step.
const MAX_INNER_PASSES: i32 = 1000;
const MAX_LINE_SEARCH: usize = 20;
/// The line search's sufficient-decrease fraction.
const SIGMA: f64 = 0.01;
/// A small ridge on the Hessian diagonal (keeps every one-variable model strictly convex).
const NU: f64 = 1e-12;
/// The cap on one coordinate's move within the quadratic model.
const MAX_COORDINATE_MOVE: f64 = 10.0;

/// The loss's per-sample factors at the current margins: `tau_i = C_i / (1 + e_i)` and
/// `d_i = C_i e_i / (1 + e_i)^2`, from `e_i = exp(w . x_i)`.
fn refresh_factors(exp_margin: &[f64], cost: &[f64], tau: &mut [f64], d: &mut [f64]) {
    for i in 0..exp_margin.len() {
        let inv = 1.0 / (1.0 + exp_margin[i]);
        tau[i] = cost[i] * inv;
        d[i] = cost[i] * exp_margin[i] * inv * inv;
    }
}

/// Solves one binary sub-problem into `w` (overwritten), drawing the coordinate orders from
/// `rng`; returns the number of Newton steps.
pub fn solve(
    rows: &Rows<'_>,
    sub: &SubProblem<'_>,
    w: &mut [f64],
    eps: f64,
    max_newton_iter: i32,
    rng: &mut MersenneTwister,
) -> i32 {
    let l = sub.order.len();
    let n = rows.n_cols;
    let cols = Columns::new(rows, sub, false);
    let cost: Vec<f64> = (0..l).map(|i| sub.cost(i)).collect();
    let negative: Vec<bool> = sub.positive.iter().map(|&p| !p).collect();
    w.fill(0.0);
    let mut w_norm = 0.0;
    let mut wpd = vec![0.0; n];
    let mut index: Vec<usize> = (0..n).collect();
    // sum over the negative samples of C_i x_ij: the gradient's constant part
    let mut neg_sum = vec![0.0; n];
    let mut exp_margin = vec![0.0; l];
    for j in 0..n {
        w_norm += w[j].abs();
        wpd[j] = w[j];
        let (ri, xv) = cols.column(j);
        for (&i, &v) in ri.iter().zip(xv) {
            exp_margin[i] += w[j] * v;
            if negative[i] {
                neg_sum[j] += cost[i] * v;
            }
        }
    }
    for e in exp_margin.iter_mut() {
        *e = e.exp();
    }
    let mut tau = vec![0.0; l];
    let mut d = vec![0.0; l];
    refresh_factors(&exp_margin, &cost, &mut tau, &mut d);

    let mut h_diag = vec![0.0; n];
    let mut grad = vec![0.0; n];
    let mut x_step = vec![0.0; l];
    let mut exp_margin_new = vec![0.0; l];
    let mut inner_eps = 1.0;
    let mut gnorm1_init = -1.0;
    let mut gmax_old = f64::INFINITY;
    let mut idle_models = 0;
    let mut newton_iter = 0;
    while newton_iter < max_newton_iter {
        let mut gmax_new: f64 = 0.0;
        let mut gnorm1_new = 0.0;
        let mut active = n;
        let mut s = 0;
        while s < active {
            let j = index[s];
            let (ri, xv) = cols.column(j);
            let mut h = NU;
            let mut tmp = 0.0;
            for (&i, &v) in ri.iter().zip(xv) {
                h += v * v * d[i];
                tmp += v * tau[i];
            }
            h_diag[j] = h;
            grad[j] = -tmp + neg_sum[j];
            let Some(violation) = l1_violation(w[j], grad[j], gmax_old / l as f64) else {
                active -= 1;
                index.swap(s, active);
                continue;
            };
            gmax_new = larger(gmax_new, violation);
            gnorm1_new += violation;
            s += 1;
        }
        if newton_iter == 0 {
            gnorm1_init = gnorm1_new;
        }
        // small enough a violation, or ten quadratic models in a row that moved nothing
        if gnorm1_new <= eps * gnorm1_init || idle_models >= 10 {
            break;
        }
        idle_models += 1;

        // the quadratic model's coordinate descent over wpd, x_step tracking X (wpd - w)
        let mut passes = 0;
        let mut qp_gmax_old = f64::INFINITY;
        let mut qp_active = active;
        x_step.fill(0.0);
        while passes < MAX_INNER_PASSES {
            let mut qp_gmax_new: f64 = 0.0;
            let mut qp_gnorm1_new = 0.0;
            rng.shuffle(&mut index[..qp_active]);
            let mut s = 0;
            while s < qp_active {
                let j = index[s];
                let h = h_diag[j];
                let (ri, xv) = cols.column(j);
                let mut g = grad[j] + (wpd[j] - w[j]) * NU;
                for (&i, &v) in ri.iter().zip(xv) {
                    g += v * d[i] * x_step[i];
                }
                let gp = g + 1.0;
                let gn = g - 1.0;
                let Some(violation) = l1_violation(wpd[j], g, qp_gmax_old / l as f64) else {
                    qp_active -= 1;
                    index.swap(s, qp_active);
                    continue;
                };
                let mut z = if gp < h * wpd[j] {
                    -gp / h
                } else if gn > h * wpd[j] {
                    -gn / h
                } else {
                    -wpd[j]
                };
                if z.abs() < 1.0e-12 {
                    s += 1;
                    continue;
                }
                z = smaller(larger(z, -MAX_COORDINATE_MOVE), MAX_COORDINATE_MOVE);
                idle_models = 0;
                qp_gmax_new = larger(qp_gmax_new, violation);
                qp_gnorm1_new += violation;
                wpd[j] += z;
                for (&i, &v) in ri.iter().zip(xv) {
                    x_step[i] += v * z;
                }
                s += 1;
            }
            passes += 1;
            if qp_gnorm1_new <= inner_eps * gnorm1_init {
                if qp_active == active {
                    break;
                }
                // converged on the shrunk set: once more over the outer active set
                qp_active = active;
                qp_gmax_old = f64::INFINITY;
                continue;
            }
            qp_gmax_old = qp_gmax_new;
        }

        // the model's predicted decrease, and the line search on the exact objective
        let mut delta = 0.0;
        let mut w_norm_new = 0.0;
        for j in 0..n {
            delta += grad[j] * (wpd[j] - w[j]);
            if wpd[j] != 0.0 {
                w_norm_new += wpd[j].abs();
            }
        }
        delta += w_norm_new - w_norm;
        let mut neg_step = 0.0;
        for i in 0..l {
            if negative[i] {
                neg_step += cost[i] * x_step[i];
            }
        }
        let mut searches = 0;
        while searches < MAX_LINE_SEARCH {
            let mut cond = w_norm_new - w_norm + neg_step - SIGMA * delta;
            for i in 0..l {
                let exp_step = x_step[i].exp();
                exp_margin_new[i] = exp_margin[i] * exp_step;
                cond += cost[i] * ((1.0 + exp_margin_new[i]) / (exp_step + exp_margin_new[i])).ln();
            }
            if cond <= 0.0 {
                w_norm = w_norm_new;
                w.copy_from_slice(&wpd);
                exp_margin.copy_from_slice(&exp_margin_new);
                refresh_factors(&exp_margin, &cost, &mut tau, &mut d);
                break;
            }
            w_norm_new = 0.0;
            for j in 0..n {
                wpd[j] = (w[j] + wpd[j]) * 0.5;
                if wpd[j] != 0.0 {
                    w_norm_new += wpd[j].abs();
                }
            }
            delta *= 0.5;
            neg_step *= 0.5;
            for v in x_step.iter_mut() {
                *v *= 0.5;
            }
            searches += 1;
        }
        if searches >= MAX_LINE_SEARCH {
            // no step accepted: recompute the margins from w (the factors stay as they were)
            exp_margin.fill(0.0);
            for (j, &wj) in w.iter().enumerate() {
                if wj == 0.0 {
                    continue;
                }
                let (ri, xv) = cols.column(j);
                for (&i, &v) in ri.iter().zip(xv) {
                    exp_margin[i] += wj * v;
                }
            }
            for e in exp_margin.iter_mut() {
                *e = e.exp();
            }
        }
        if passes == 1 {
            inner_eps *= 0.25;
        }
        newton_iter += 1;
        gmax_old = gmax_new;
    }
    newton_iter
}
