//! Crammer and Singer's multi-class SVM by dual coordinate descent (Keerthi et al. 2008,
//! as the liblinear paper's appendix states it; liblinear's solver 4). Each sample owns one
//! dual variable per class, summing to zero, at most `C_i` for its own class and at most 0
//! for the others; a visit solves that sample's block exactly (a sort and a running sum
//! find the common threshold). Per sample, classes whose variable sits at its bound with a
//! gradient below the block's smallest free gradient are shrunk away; a sample left with
//! one class leaves the pass. A pass's largest gradient spread decides: below `eps` on a
//! pass over everything, done; below the shrinking tolerance (which halves towards `eps`
//! each time), every sample and class comes back.

use super::random::MersenneTwister;
use super::{larger, smaller, Rows};

/// scikit-learn's fork constructs this solver without passing `max_iter`, so its own
/// default caps the passes whatever the estimator's `max_iter`.
pub const MAX_PASSES: i32 = 100_000;
/// Below this a block's gradient spread counts as zero (no update, no say in stopping).
const FLAT_BLOCK: f64 = 1e-12;

/// One sample's block sub-problem: the new variables `alpha_new[..active]` (in the block's
/// current class order) from `b[m] = G_m - A alpha_m`, `A = |x_i|^2`, the position `own` of
/// the sample's class (`>= active` when shrunk away) and its `C`.
fn solve_block(a: f64, own: usize, c_own: f64, active: usize, b: &[f64], alpha_new: &mut [f64]) {
    let mut sorted = b[..active].to_vec();
    if own < active {
        sorted[own] += a * c_own;
    }
    // descending; equal values are interchangeable, so any sort gives the same sums
    sorted.sort_by(|x, y| y.partial_cmp(x).unwrap_or(std::cmp::Ordering::Equal));
    let mut beta = sorted[0] - a * c_own;
    let mut r = 1;
    while r < active && beta < r as f64 * sorted[r] {
        beta += sorted[r];
        r += 1;
    }
    beta /= r as f64;
    for m in 0..active {
        let free = (beta - b[m]) / a;
        alpha_new[m] = if m == own {
            smaller(c_own, free)
        } else {
            smaller(0.0, free)
        };
    }
}

/// Trains the joint problem over the rows `order` (liblinear's grouped order) with class
/// codes `class` (`0..n_class`) and per-sample `cost`; returns one weight row per class
/// over the columns and the number of passes.
pub fn solve(
    rows: &Rows<'_>,
    order: &[usize],
    class: &[usize],
    n_class: usize,
    cost: &[f64],
    eps: f64,
    rng: &mut MersenneTwister,
) -> (Vec<Vec<f64>>, i32) {
    let l = order.len();
    let n = rows.n_cols;
    // w[f * n_class + m]: class m's weight on column f (liblinear's interleaved layout)
    let mut w = vec![0.0; n * n_class];
    let mut alpha = vec![0.0; l * n_class];
    // per sample, its classes in the block's current order (the first `block_size[i]` active)
    let mut class_at: Vec<usize> = (0..l).flat_map(|_| 0..n_class).collect();
    let mut own_at: Vec<usize> = class.to_vec();
    let mut block_size = vec![n_class; l];
    let x_sq: Vec<f64> = order
        .iter()
        .map(|&r| rows.row(r).1.iter().fold(0.0, |acc, &v| acc + v * v))
        .collect();
    let mut index: Vec<usize> = (0..l).collect();
    let mut active = l;
    let mut shrink_tol = larger(10.0 * eps, 1.0);
    let mut from_all = true;
    let mut g = vec![0.0; n_class];
    let mut b = vec![0.0; n_class];
    let mut alpha_new = vec![0.0; n_class];
    let mut moved: Vec<(usize, f64)> = Vec::with_capacity(n_class);
    let mut iter = 0;
    while iter < MAX_PASSES {
        let mut spread_max = f64::NEG_INFINITY;
        rng.shuffle(&mut index[..active]);
        let mut s = 0;
        while s < active {
            let i = index[s];
            let a = x_sq[i];
            if a <= 0.0 {
                s += 1;
                continue;
            }
            let c_i = cost[i];
            let alpha_i = &mut alpha[i * n_class..(i + 1) * n_class];
            let classes = &mut class_at[i * n_class..(i + 1) * n_class];
            let size = block_size[i];
            let own = own_at[i];
            for gm in &mut g[..size] {
                *gm = 1.0;
            }
            if own < size {
                g[own] = 0.0;
            }
            let (idx, val) = rows.row(order[i]);
            for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
                let wf = &w[f * n_class..(f + 1) * n_class];
                for m in 0..size {
                    g[m] += wf[classes[m]] * v;
                }
            }
            let mut min_g = f64::INFINITY;
            let mut max_g = f64::NEG_INFINITY;
            for m in 0..size {
                if alpha_i[classes[m]] < 0.0 && g[m] < min_g {
                    min_g = g[m];
                }
                if g[m] > max_g {
                    max_g = g[m];
                }
            }
            if own < size && alpha_i[class[i]] < c_i && g[own] < min_g {
                min_g = g[own];
            }
            // a class at its bound whose gradient lies below every free one is shrunk
            let at_bound_below = |m: usize, own: usize, alpha_m: f64, g_m: f64| {
                let bound = if m == own { c_i } else { 0.0 };
                alpha_m == bound && g_m < min_g
            };
            let mut size = size;
            let mut own = own;
            let mut m = 0;
            while m < size {
                if at_bound_below(m, own, alpha_i[classes[m]], g[m]) {
                    size -= 1;
                    // bring in the last active class that stays, dropping shrinkable ones
                    while size > m {
                        if !at_bound_below(size, own, alpha_i[classes[size]], g[size]) {
                            classes.swap(m, size);
                            g.swap(m, size);
                            if own == size {
                                own = m;
                            } else if own == m {
                                own = size;
                            }
                            break;
                        }
                        size -= 1;
                    }
                }
                m += 1;
            }
            block_size[i] = size;
            own_at[i] = own;
            if size <= 1 {
                active -= 1;
                index.swap(s, active);
                continue;
            }
            if max_g - min_g <= FLAT_BLOCK {
                s += 1;
                continue;
            }
            spread_max = larger(max_g - min_g, spread_max);
            for m in 0..size {
                b[m] = g[m] - a * alpha_i[classes[m]];
            }
            solve_block(a, own, c_i, size, &b, &mut alpha_new);
            moved.clear();
            for m in 0..size {
                let d = alpha_new[m] - alpha_i[classes[m]];
                alpha_i[classes[m]] = alpha_new[m];
                if d.abs() >= FLAT_BLOCK {
                    moved.push((classes[m], d));
                }
            }
            for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
                let wf = &mut w[f * n_class..(f + 1) * n_class];
                for &(k, d) in &moved {
                    wf[k] += d * v;
                }
            }
            s += 1;
        }
        iter += 1;
        if spread_max < shrink_tol {
            if spread_max < eps && from_all {
                break;
            }
            active = l;
            block_size.fill(n_class);
            shrink_tol = larger(shrink_tol / 2.0, eps);
            from_all = true;
        } else {
            from_all = false;
        }
    }
    let coef = (0..n_class)
        .map(|m| (0..n).map(|f| w[f * n_class + m]).collect())
        .collect();
    (coef, iter)
}
