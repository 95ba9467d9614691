//! Dual coordinate descent for the L2-regularised SVM with the hinge (L1) or squared hinge
//! (L2) loss (Hsieh et al. 2008, Algorithm 3), with liblinear's shrinking: each outer pass
//! shuffles the active coordinates, skips (and shrinks away) bounded ones whose gradient
//! points outward beyond last pass's projected-gradient extremes, and stops when the
//! projected gradients' spread is within `eps` over all coordinates.

use super::random::MersenneTwister;
use super::{Rows, SubProblem};

/// Which hinge: `Hinge` bounds each dual variable by its C, `SquaredHinge` leaves it unbounded
/// and adds `1 / (2 C)` to the diagonal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HingeLoss {
    Hinge,
    SquaredHinge,
}

/// Below this a projected gradient is taken as zero (no update).
const UPDATE_THRESHOLD: f64 = 1.0e-12;

/// Solves one binary sub-problem into `w` (overwritten), drawing the pass orders from `rng`;
/// returns the number of outer passes.
pub fn solve(
    rows: &Rows<'_>,
    sub: &SubProblem<'_>,
    w: &mut [f64],
    eps: f64,
    loss: HingeLoss,
    max_iter: i32,
    rng: &mut MersenneTwister,
) -> i32 {
    let l = sub.order.len();
    let mut diag = vec![0.0; l];
    let mut upper = vec![f64::INFINITY; l];
    for i in 0..l {
        let c = sub.cost(i);
        match loss {
            HingeLoss::SquaredHinge => diag[i] = 0.5 / c,
            HingeLoss::Hinge => upper[i] = c,
        }
    }
    let sign: Vec<f64> = (0..l).map(|i| sub.sign(i)).collect();
    let mut alpha = vec![0.0; l];
    w.fill(0.0);
    // the diagonal of Q + D; the start alpha is zero, so w stays zero
    let q_diag: Vec<f64> = (0..l)
        .map(|i| {
            let (_, val) = rows.row(sub.order[i]);
            val.iter().fold(diag[i], |acc, &v| acc + v * v)
        })
        .collect();
    let mut index: Vec<usize> = (0..l).collect();
    let mut active = l;
    let mut pg_max_old = f64::INFINITY;
    let mut pg_min_old = f64::NEG_INFINITY;
    let mut iter = 0;
    while iter < max_iter {
        let mut pg_max_new = f64::NEG_INFINITY;
        let mut pg_min_new = f64::INFINITY;
        rng.shuffle(&mut index[..active]);
        let mut s = 0;
        while s < active {
            let i = index[s];
            let (idx, val) = rows.row(sub.order[i]);
            let mut g = 0.0;
            for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
                g += w[f] * v;
            }
            g = g * sign[i] - 1.0;
            let c = upper[i];
            g += alpha[i] * diag[i];
            let mut pg = 0.0;
            if alpha[i] == 0.0 {
                if g > pg_max_old {
                    active -= 1;
                    index.swap(s, active);
                    continue;
                } else if g < 0.0 {
                    pg = g;
                }
            } else if alpha[i] == c {
                if g < pg_min_old {
                    active -= 1;
                    index.swap(s, active);
                    continue;
                } else if g > 0.0 {
                    pg = g;
                }
            } else {
                pg = g;
            }
            pg_max_new = if pg_max_new > pg { pg_max_new } else { pg };
            pg_min_new = if pg_min_new < pg { pg_min_new } else { pg };
            if pg.abs() > UPDATE_THRESHOLD {
                let old = alpha[i];
                let stepped = alpha[i] - g / q_diag[i];
                let clipped = if stepped > 0.0 { stepped } else { 0.0 };
                alpha[i] = if clipped < c { clipped } else { c };
                let d = (alpha[i] - old) * sign[i];
                for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
                    w[f] += d * v;
                }
            }
            s += 1;
        }
        iter += 1;
        if pg_max_new - pg_min_new <= eps {
            if active == l {
                break;
            }
            // converged on the shrunk set: check once more over every coordinate
            active = l;
            pg_max_old = f64::INFINITY;
            pg_min_old = f64::NEG_INFINITY;
            continue;
        }
        pg_max_old = if pg_max_new <= 0.0 {
            f64::INFINITY
        } else {
            pg_max_new
        };
        pg_min_old = if pg_min_new >= 0.0 {
            f64::NEG_INFINITY
        } else {
            pg_min_new
        };
    }
    iter
}
