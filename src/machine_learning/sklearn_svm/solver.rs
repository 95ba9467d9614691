//! libsvm's SMO solver for one binary C-SVC problem, step for step:
//!
//! `min 0.5 a'Qa - e'a` subject to `y'a = 0`, `0 <= a_s <= C_s`, from `a = 0`.
//!
//! - the working pair by second-order selection (Fan, Chen and Lin 2005): `i` maximises
//!   `-y_i G_i` over the variables that may move up, `j` minimises `-(b^2)/q` over those
//!   that may move down with `b = m(i) + y_j G_j > 0` and `q = QD_i + QD_j - 2 y_i y_j K_ij`
//!   (`TAU` when not positive); the stop when the violation `m + M < eps`;
//! - the two-variable update clipped to the box as libsvm clips it, then `G += dQ`, and
//!   `G_bar` (the gradient part of the variables at their upper bound) kept for shrinking;
//! - shrinking every `min(l, 1000)` iterations, one un-shrinking with a full gradient
//!   rebuild once the violation falls below `10 eps`, a rebuild before the final stop;
//! - `rho` as the mean of `y G` over free variables, else the middle of the bounds.
//!
//! The working arrays are permuted as libsvm permutes them when it shrinks (the order
//! decides ties in the selection and the order of the gradient rebuild's sums); the `Q` rows
//! stay in sample order and are read through the permutation.

use super::kernel::QRows;

/// libsvm's replacement for a non-positive curvature.
const TAU: f64 = 1e-12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Lower,
    Upper,
    Free,
}

/// The solution of one binary problem, in the sub-problem's sample order.
#[derive(Debug, Clone)]
pub(crate) struct BinarySolution {
    /// The dual variables `a_s` (not yet multiplied by `y_s`).
    pub alpha: Vec<f64>,
    pub rho: f64,
    /// Iterations run (libsvm's `n_iter`).
    pub n_iter: usize,
    /// Whether `max_iter` stopped the solver.
    pub hit_max_iter: bool,
}

struct Smo<'q, 'g, 'a> {
    q: &'q mut QRows<'g, 'a>,
    /// The following arrays are in position order; `sample[k]` is position `k`'s sample.
    sample: Vec<usize>,
    y: Vec<i8>,
    grad: Vec<f64>,
    grad_bar: Vec<f64>,
    alpha: Vec<f64>,
    bound: Vec<Bound>,
    c: Vec<f64>,
    qd: Vec<f64>,
    /// The linear term (`-1` for each variable of C-SVC).
    linear: Vec<f64>,
    active: usize,
    eps: f64,
    unshrunk: bool,
}

impl Smo<'_, '_, '_> {
    fn l(&self) -> usize {
        self.sample.len()
    }

    /// `Q[pos_a][pos_b]` from the row `load`ed for position `pos_a`.
    fn q_at(&self, pos_a: usize, pos_b: usize) -> f64 {
        f64::from(self.q.row(self.sample[pos_a])[self.sample[pos_b]])
    }

    fn load(&mut self, pos: usize) {
        self.q.load(self.sample[pos]);
    }

    fn set_bound(&mut self, k: usize) {
        self.bound[k] = if self.alpha[k] >= self.c[k] {
            Bound::Upper
        } else if self.alpha[k] <= 0.0 {
            Bound::Lower
        } else {
            Bound::Free
        };
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.sample.swap(a, b);
        self.y.swap(a, b);
        self.grad.swap(a, b);
        self.bound.swap(a, b);
        self.alpha.swap(a, b);
        self.linear.swap(a, b);
        self.grad_bar.swap(a, b);
        self.c.swap(a, b);
        self.qd.swap(a, b);
    }

    /// The gradient's inactive entries rebuilt from `G_bar` and the free variables, by the
    /// loop order libsvm picks from the counts.
    fn reconstruct_gradient(&mut self) {
        let l = self.l();
        if self.active == l {
            return;
        }
        for k in self.active..l {
            self.grad[k] = self.grad_bar[k] + self.linear[k];
        }
        let n_free = (0..self.active)
            .filter(|&k| self.bound[k] == Bound::Free)
            .count();
        // libsvm compares these as C ints: wrapping 32-bit products keep its branch.
        let (nf, li, ai) = (n_free as i32, l as i32, self.active as i32);
        if nf.wrapping_mul(li) > 2i32.wrapping_mul(ai).wrapping_mul(li - ai) {
            for i in self.active..l {
                self.load(i);
                for j in 0..self.active {
                    if self.bound[j] == Bound::Free {
                        self.grad[i] += self.alpha[j] * self.q_at(i, j);
                    }
                }
            }
        } else {
            for i in 0..self.active {
                if self.bound[i] == Bound::Free {
                    self.load(i);
                    let alpha_i = self.alpha[i];
                    for j in self.active..l {
                        self.grad[j] += alpha_i * self.q_at(i, j);
                    }
                }
            }
        }
    }

    /// The working pair, or `None` when the active set meets the stopping rule.
    fn select_working_set(&mut self) -> Option<(usize, usize)> {
        let mut gmax = f64::NEG_INFINITY;
        let mut gmax2 = f64::NEG_INFINITY;
        let mut i_best: Option<usize> = None;
        for t in 0..self.active {
            if self.y[t] == 1 {
                if self.bound[t] != Bound::Upper && -self.grad[t] >= gmax {
                    gmax = -self.grad[t];
                    i_best = Some(t);
                }
            } else if self.bound[t] != Bound::Lower && self.grad[t] >= gmax {
                gmax = self.grad[t];
                i_best = Some(t);
            }
        }
        let i = i_best?;
        self.load(i);
        let yi = f64::from(self.y[i]);
        let qd_i = self.qd[i];
        let row_i = self.q.row(self.sample[i]);
        let mut j_best: Option<usize> = None;
        let mut obj_diff_min = f64::INFINITY;
        for j in 0..self.active {
            let (grad_diff, sign) = if self.y[j] == 1 {
                if self.bound[j] == Bound::Lower {
                    continue;
                }
                if self.grad[j] >= gmax2 {
                    gmax2 = self.grad[j];
                }
                (gmax + self.grad[j], -1.0)
            } else {
                if self.bound[j] == Bound::Upper {
                    continue;
                }
                if -self.grad[j] >= gmax2 {
                    gmax2 = -self.grad[j];
                }
                (gmax - self.grad[j], 1.0)
            };
            if grad_diff > 0.0 {
                let q_ij = f64::from(row_i[self.sample[j]]);
                let quad = qd_i + self.qd[j] + sign * 2.0 * yi * q_ij;
                let curvature = if quad > 0.0 { quad } else { TAU };
                let obj_diff = -(grad_diff * grad_diff) / curvature;
                if obj_diff <= obj_diff_min {
                    j_best = Some(j);
                    obj_diff_min = obj_diff;
                }
            }
        }
        if gmax + gmax2 < self.eps {
            return None;
        }
        j_best.map(|j| (i, j))
    }

    fn can_shrink(&self, k: usize, gmax1: f64, gmax2: f64) -> bool {
        match (self.bound[k], self.y[k] == 1) {
            (Bound::Upper, true) => -self.grad[k] > gmax1,
            (Bound::Upper, false) => -self.grad[k] > gmax2,
            (Bound::Lower, true) => self.grad[k] > gmax2,
            (Bound::Lower, false) => self.grad[k] > gmax1,
            (Bound::Free, _) => false,
        }
    }

    fn shrink(&mut self) {
        // gmax1: max -y G over the variables that may move up; gmax2: max y G over those
        // that may move down
        let mut gmax1 = f64::NEG_INFINITY;
        let mut gmax2 = f64::NEG_INFINITY;
        for k in 0..self.active {
            let g = self.grad[k];
            let (lower, upper) = (self.bound[k] == Bound::Lower, self.bound[k] == Bound::Upper);
            // `-y G` for a variable whose `y a` may grow, `y G` for one whose `y a` may shrink
            let (up_open, down_open) = if self.y[k] == 1 {
                (!upper, !lower)
            } else {
                (!lower, !upper)
            };
            let (up, down) = if self.y[k] == 1 { (-g, g) } else { (g, -g) };
            if up_open && up >= gmax1 {
                gmax1 = up;
            }
            if down_open && down >= gmax2 {
                gmax2 = down;
            }
        }
        if !self.unshrunk && gmax1 + gmax2 <= self.eps * 10.0 {
            self.unshrunk = true;
            self.reconstruct_gradient();
            self.active = self.l();
        }
        let mut k = 0;
        while k < self.active {
            if self.can_shrink(k, gmax1, gmax2) {
                self.active -= 1;
                while self.active > k {
                    if !self.can_shrink(self.active, gmax1, gmax2) {
                        self.swap(k, self.active);
                        break;
                    }
                    self.active -= 1;
                }
            }
            k += 1;
        }
    }

    fn rho(&self) -> f64 {
        let (mut ub, mut lb) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut n_free, mut sum_free) = (0usize, 0.0);
        for k in 0..self.active {
            let yg = f64::from(self.y[k]) * self.grad[k];
            let upper_side = match self.bound[k] {
                Bound::Upper => self.y[k] == -1,
                Bound::Lower => self.y[k] == 1,
                Bound::Free => {
                    n_free += 1;
                    sum_free += yg;
                    continue;
                }
            };
            // libsvm's `min` / `max` templates: the new value unless the kept one wins
            if upper_side {
                ub = if ub < yg { ub } else { yg };
            } else {
                lb = if lb > yg { lb } else { yg };
            }
        }
        if n_free > 0 {
            sum_free / n_free as f64
        } else {
            (ub + lb) / 2.0
        }
    }

    /// The two-variable step on positions `i`, `j`, clipped to the box as libsvm clips.
    fn step(&mut self, i: usize, j: usize) {
        self.load(i);
        self.load(j);
        let q_ij = self.q_at(i, j);
        let (c_i, c_j) = (self.c[i], self.c[j]);
        let (old_i, old_j) = (self.alpha[i], self.alpha[j]);
        let (mut ai, mut aj) = (old_i, old_j);
        if self.y[i] != self.y[j] {
            let mut quad = self.qd[i] + self.qd[j] + 2.0 * q_ij;
            if quad <= 0.0 {
                quad = TAU;
            }
            let delta = (-self.grad[i] - self.grad[j]) / quad;
            let diff = ai - aj;
            ai += delta;
            aj += delta;
            if diff > 0.0 {
                if aj < 0.0 {
                    aj = 0.0;
                    ai = diff;
                }
            } else if ai < 0.0 {
                ai = 0.0;
                aj = -diff;
            }
            if diff > c_i - c_j {
                if ai > c_i {
                    ai = c_i;
                    aj = c_i - diff;
                }
            } else if aj > c_j {
                aj = c_j;
                ai = c_j + diff;
            }
        } else {
            let mut quad = self.qd[i] + self.qd[j] - 2.0 * q_ij;
            if quad <= 0.0 {
                quad = TAU;
            }
            let delta = (self.grad[i] - self.grad[j]) / quad;
            let sum = ai + aj;
            ai -= delta;
            aj += delta;
            if sum > c_i {
                if ai > c_i {
                    ai = c_i;
                    aj = sum - c_i;
                }
            } else if aj < 0.0 {
                aj = 0.0;
                ai = sum;
            }
            if sum > c_j {
                if aj > c_j {
                    aj = c_j;
                    ai = sum - c_j;
                }
            } else if ai < 0.0 {
                ai = 0.0;
                aj = sum;
            }
        }
        self.alpha[i] = ai;
        self.alpha[j] = aj;
        let (d_i, d_j) = (ai - old_i, aj - old_j);
        {
            let row_i = self.q.row(self.sample[i]);
            let row_j = self.q.row(self.sample[j]);
            for k in 0..self.active {
                let s = self.sample[k];
                self.grad[k] += f64::from(row_i[s]) * d_i + f64::from(row_j[s]) * d_j;
            }
        }
        let (was_upper_i, was_upper_j) =
            (self.bound[i] == Bound::Upper, self.bound[j] == Bound::Upper);
        self.set_bound(i);
        self.set_bound(j);
        self.move_upper_part(i, was_upper_i, c_i);
        self.move_upper_part(j, was_upper_j, c_j);
    }

    /// `G_bar` gains or loses `C_k Q_k` when position `k` reaches or leaves its upper bound.
    fn move_upper_part(&mut self, k: usize, was_upper: bool, c_k: f64) {
        if was_upper == (self.bound[k] == Bound::Upper) {
            return;
        }
        self.load(k);
        let row = self.q.row(self.sample[k]);
        for (t, &s) in self.sample.iter().enumerate() {
            let term = c_k * f64::from(row[s]);
            if was_upper {
                self.grad_bar[t] -= term;
            } else {
                self.grad_bar[t] += term;
            }
        }
    }
}

/// Solves one binary C-SVC problem over `q`'s samples with signs `y` and per-sample
/// bounds `c`, as libsvm's `Solver::Solve` does from `a = 0` with the linear term `-1`.
/// `max_iter` of `None` is unlimited.
pub(crate) fn solve_binary(
    q: &mut QRows<'_, '_>,
    y: &[i8],
    c: &[f64],
    eps: f64,
    shrinking: bool,
    max_iter: Option<u64>,
) -> BinarySolution {
    let l = q.len();
    let qd = (0..l).map(|s| q.diagonal(s)).collect();
    let mut smo = Smo {
        q,
        sample: (0..l).collect(),
        y: y.to_vec(),
        grad: vec![-1.0; l],
        grad_bar: vec![0.0; l],
        alpha: vec![0.0; l],
        bound: vec![Bound::Lower; l],
        c: c.to_vec(),
        qd,
        linear: vec![-1.0; l],
        active: l,
        eps,
        unshrunk: false,
    };
    for k in 0..l {
        smo.set_bound(k);
    }
    // A variable with a zero bound starts at its upper bound: libsvm adds its (zero)
    // contributions `0 * Q` to G and G_bar, which only matters when Q holds infinities.
    for i in 0..l {
        if smo.bound[i] != Bound::Lower {
            smo.load(i);
            for j in 0..l {
                let q_ij = smo.q_at(i, j);
                smo.grad[j] += smo.alpha[i] * q_ij;
                if smo.bound[i] == Bound::Upper {
                    smo.grad_bar[j] += smo.c[i] * q_ij;
                }
            }
        }
    }

    let mut n_iter: u64 = 0;
    let mut hit_max_iter = false;
    let mut countdown = l.min(1000) + 1;
    loop {
        if max_iter.is_some_and(|m| n_iter >= m) {
            hit_max_iter = true;
            break;
        }
        countdown -= 1;
        if countdown == 0 {
            countdown = l.min(1000);
            if shrinking {
                smo.shrink();
            }
        }
        let (i, j) = match smo.select_working_set() {
            Some(pair) => pair,
            None => {
                smo.reconstruct_gradient();
                smo.active = l;
                match smo.select_working_set() {
                    Some(pair) => {
                        countdown = 1; // shrink on the next iteration
                        pair
                    }
                    None => break,
                }
            }
        };
        n_iter += 1;
        smo.step(i, j);
    }

    let rho = smo.rho();
    let mut alpha = vec![0.0; l];
    for (pos, &s) in smo.sample.iter().enumerate() {
        alpha[s] = smo.alpha[pos];
    }
    BinarySolution {
        alpha,
        rho,
        n_iter: n_iter as usize,
        hit_max_iter,
    }
}
