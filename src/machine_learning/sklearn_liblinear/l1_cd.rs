//! Primal coordinate descent for the L1-regularised squared-hinge SVM (Yuan et al. 2010,
//! liblinear's solver 5): over the features in a shuffled order, a one-variable Newton
//! step on the loss with the L1 term's soft threshold, then a backtracking line search
//! (halving, at most 20 times) first on a quadratic upper bound and then on the exact loss;
//! features at zero whose gradient lies well inside `[-1, 1]` are shrunk away.

use super::random::MersenneTwister;
use super::{l1_violation, Columns, Rows, SubProblem};

const MAX_LINE_SEARCH: usize = 20;
/// The line search's sufficient-decrease fraction.
const SIGMA: f64 = 0.01;

fn max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// Solves one binary sub-problem into `w` (overwritten); returns the number of outer passes.
pub fn solve(
    rows: &Rows<'_>,
    sub: &SubProblem<'_>,
    w: &mut [f64],
    eps: f64,
    max_iter: i32,
    rng: &mut MersenneTwister,
) -> i32 {
    let l = sub.order.len();
    let n = rows.n_cols;
    let cols = Columns::new(rows, sub, true);
    let cost: Vec<f64> = (0..l).map(|i| sub.cost(i)).collect();
    w.fill(0.0);
    // b_i = 1 - y_i w^T x_i, one at w = 0
    let mut b = vec![1.0; l];
    let xj_sq: Vec<f64> = (0..n)
        .map(|j| {
            let (ri, v) = cols.column(j);
            ri.iter()
                .zip(v)
                .fold(0.0, |acc, (&i, &val)| acc + cost[i] * val * val)
        })
        .collect();
    let mut index: Vec<usize> = (0..n).collect();
    let mut active = n;
    let mut gmax_old = f64::INFINITY;
    let mut gnorm1_init = -1.0;
    let mut iter = 0;
    while iter < max_iter {
        let mut gmax_new: f64 = 0.0;
        let mut gnorm1_new = 0.0;
        rng.shuffle(&mut index[..active]);
        let mut s = 0;
        while s < active {
            let j = index[s];
            let (ri, xv) = cols.column(j);
            let mut g_loss = 0.0;
            let mut h = 0.0;
            for (&i, &val) in ri.iter().zip(xv) {
                if b[i] > 0.0 {
                    let scaled = cost[i] * val;
                    g_loss -= scaled * b[i];
                    h += scaled * val;
                }
            }
            g_loss *= 2.0;
            let g = g_loss;
            h *= 2.0;
            h = max(h, 1e-12);
            let gp = g + 1.0;
            let gn = g - 1.0;
            let Some(violation) = l1_violation(w[j], g, gmax_old / l as f64) else {
                active -= 1;
                index.swap(s, active);
                continue;
            };
            gmax_new = max(gmax_new, violation);
            gnorm1_new += violation;

            let mut d = if gp < h * w[j] {
                -gp / h
            } else if gn > h * w[j] {
                -gn / h
            } else {
                -w[j]
            };
            if d.abs() < 1.0e-12 {
                s += 1;
                continue;
            }
            let mut delta = (w[j] + d).abs() - w[j].abs() + g * d;
            let mut d_old = 0.0;
            let mut loss_old = 0.0;
            let mut searches = 0;
            while searches < MAX_LINE_SEARCH {
                let d_diff = d_old - d;
                let mut cond = (w[j] + d).abs() - w[j].abs() - SIGMA * delta;
                let approx = xj_sq[j] * d * d + g_loss * d + cond;
                if approx <= 0.0 {
                    for (&i, &val) in ri.iter().zip(xv) {
                        b[i] += d_diff * val;
                    }
                    break;
                }
                let mut loss_new = 0.0;
                for (&i, &val) in ri.iter().zip(xv) {
                    if searches == 0 && b[i] > 0.0 {
                        loss_old += cost[i] * b[i] * b[i];
                    }
                    let b_new = b[i] + d_diff * val;
                    b[i] = b_new;
                    if b_new > 0.0 {
                        loss_new += cost[i] * b_new * b_new;
                    }
                }
                cond = cond + loss_new - loss_old;
                if cond <= 0.0 {
                    break;
                }
                d_old = d;
                d *= 0.5;
                delta *= 0.5;
                searches += 1;
            }
            w[j] += d;
            if searches >= MAX_LINE_SEARCH {
                // too many halvings: recompute the margins from w
                b.fill(1.0);
                for (f, &wf) in w.iter().enumerate() {
                    if wf == 0.0 {
                        continue;
                    }
                    let (rf, vf) = cols.column(f);
                    for (&i, &val) in rf.iter().zip(vf) {
                        b[i] -= wf * val;
                    }
                }
            }
            s += 1;
        }
        if iter == 0 {
            gnorm1_init = gnorm1_new;
        }
        iter += 1;
        if gnorm1_new <= eps * gnorm1_init {
            if active == n {
                break;
            }
            active = n;
            gmax_old = f64::INFINITY;
            continue;
        }
        gmax_old = gmax_new;
    }
    iter
}
