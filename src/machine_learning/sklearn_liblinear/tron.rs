//! The trust-region Newton method (TRON) of scikit-learn's liblinear fork, with conjugate
//! gradients for the trust-region step, and the squared-hinge primal objective it minimises
//! for the L2-regularised L2-loss SVM.
//!
//! scikit-learn runs TRON's vector operations (dot, axpy, scal, nrm2) through the BLAS scipy
//! ships; here they are plain sequential loops, so the iterates agree to rounding, not to the
//! bit. The objective's own sums (`X v`, `X^T v`, `w^T w`, the loss) are liblinear's loops
//! and run in its order.

use super::{Rows, SubProblem};

/// A twice-differentiable objective for TRON. `gradient` is called at the point last passed
/// to `value`, and `hessian_times` at the point of the last `gradient`.
pub trait TrustRegionObjective {
    fn dimension(&self) -> usize;
    fn value(&mut self, w: &[f64]) -> f64;
    fn gradient(&mut self, w: &[f64], g: &mut [f64]);
    fn hessian_times(&mut self, s: &[f64], hs: &mut [f64]);
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |acc, (&x, &y)| acc + x * y)
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// `y += alpha x`
fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// `out[k] = x_r . v` for the rows `r = row_at(k)`, `k < out.len()`: each a sequential sum
/// over the row's stored entries, liblinear's order. Full rows ([`Rows::full`]) are read as
/// dense slices, eight at a time: eight independent sums side by side rather than one
/// chain of additions, each still added in column order, so the bits are the same.
fn row_dots(rows: &Rows<'_>, row_at: impl Fn(usize) -> usize, v: &[f64], out: &mut [f64]) {
    const LANES: usize = 8;
    if !rows.full {
        for (k, slot) in out.iter_mut().enumerate() {
            let (idx, val) = rows.row(row_at(k));
            let mut acc = 0.0;
            for (f, &x) in idx.iter().map(|&f| f as usize).zip(val) {
                acc += v[f] * x;
            }
            *slot = acc;
        }
        return;
    }
    let width = rows.n_cols;
    let v = &v[..width];
    let row = |k: usize| &rows.value[row_at(k) * width..][..width];
    let mut blocks = out.chunks_exact_mut(LANES);
    let mut first = 0;
    for block in &mut blocks {
        let r: [&[f64]; LANES] = std::array::from_fn(|l| row(first + l));
        let mut acc = [0.0; LANES];
        for (j, &vj) in v.iter().enumerate() {
            for l in 0..LANES {
                acc[l] += vj * r[l][j];
            }
        }
        block.copy_from_slice(&acc);
        first += LANES;
    }
    for (k, slot) in blocks.into_remainder().iter_mut().enumerate() {
        let mut acc = 0.0;
        for (&vj, &x) in v.iter().zip(row(first + k)) {
            acc += vj * x;
        }
        *slot = acc;
    }
}

/// `out = sum_k coef[k] x_r` over the rows `r = row_at(k)`, `k < coef.len()`, added row
/// after row as liblinear does (full rows as dense slices, the same additions in the same
/// order).
fn add_scaled_rows(
    rows: &Rows<'_>,
    row_at: impl Fn(usize) -> usize,
    coef: &[f64],
    out: &mut [f64],
) {
    out.fill(0.0);
    if rows.full {
        let width = rows.n_cols;
        let out = &mut out[..width];
        for (k, &c) in coef.iter().enumerate() {
            let row = &rows.value[row_at(k) * width..][..width];
            for (o, &x) in out.iter_mut().zip(row) {
                *o += c * x;
            }
        }
        return;
    }
    for (k, &c) in coef.iter().enumerate() {
        let (idx, val) = rows.row(row_at(k));
        for (f, &x) in idx.iter().map(|&f| f as usize).zip(val) {
            out[f] += c * x;
        }
    }
}

// Acceptance thresholds on actual / predicted reduction and the radius update factors.
const ETA0: f64 = 1e-4;
const ETA1: f64 = 0.25;
const ETA2: f64 = 0.75;
const SIGMA1: f64 = 0.25;
const SIGMA2: f64 = 0.5;
const SIGMA3: f64 = 4.0;

fn min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

fn max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// Minimises `objective` from `w = 0` (written into `w`) until the gradient norm falls to
/// `eps` times its starting value or `max_iter` steps are accepted; returns the number of
/// accepted steps (liblinear's count).
pub fn minimise(
    objective: &mut impl TrustRegionObjective,
    w: &mut [f64],
    eps: f64,
    max_iter: i32,
) -> i32 {
    let n = objective.dimension();
    let mut s = vec![0.0; n];
    let mut r = vec![0.0; n];
    let mut g = vec![0.0; n];
    let mut w_new = vec![0.0; n];
    w.fill(0.0);
    let mut f = objective.value(w);
    objective.gradient(w, &mut g);
    let mut delta = norm(&g);
    let gnorm_start = delta;
    let search = gnorm_start > eps * gnorm_start;
    let mut iter: i32 = 1;
    while iter <= max_iter && search {
        conjugate_gradient(objective, delta, &g, &mut s, &mut r);
        w_new.copy_from_slice(w);
        axpy(1.0, &s, &mut w_new);
        let gs = dot(&g, &s);
        let predicted = -0.5 * (gs - dot(&s, &r));
        let f_new = objective.value(&w_new);
        let actual = f - f_new;
        let snorm = norm(&s);
        if iter == 1 {
            delta = min(delta, snorm);
        }
        let alpha = if f_new - f - gs <= 0.0 {
            SIGMA3
        } else {
            max(SIGMA1, -0.5 * (gs / (f_new - f - gs)))
        };
        delta = if actual < ETA0 * predicted {
            min(max(alpha, SIGMA1) * snorm, SIGMA2 * delta)
        } else if actual < ETA1 * predicted {
            max(SIGMA1 * delta, min(alpha * snorm, SIGMA2 * delta))
        } else if actual < ETA2 * predicted {
            max(SIGMA1 * delta, min(alpha * snorm, SIGMA3 * delta))
        } else {
            max(delta, min(alpha * snorm, SIGMA3 * delta))
        };
        if actual > ETA0 * predicted {
            iter += 1;
            w.copy_from_slice(&w_new);
            f = f_new;
            objective.gradient(w, &mut g);
            if norm(&g) <= eps * gnorm_start {
                break;
            }
        }
        if f < -1.0e32 {
            break;
        }
        if actual.abs() <= 0.0 && predicted <= 0.0 {
            break;
        }
        if actual.abs() <= 1.0e-12 * f.abs() && predicted.abs() <= 1.0e-12 * f.abs() {
            break;
        }
    }
    iter - 1
}

/// Conjugate gradients on `H s = -g` inside the radius `delta`: leaves the step in `s` and the
/// residual `-g - H s` in `r`; returns the number of CG steps.
fn conjugate_gradient(
    objective: &mut impl TrustRegionObjective,
    delta: f64,
    g: &[f64],
    s: &mut [f64],
    r: &mut [f64],
) -> usize {
    let n = g.len();
    let mut d = vec![0.0; n];
    let mut hd = vec![0.0; n];
    for i in 0..n {
        s[i] = 0.0;
        r[i] = -g[i];
        d[i] = r[i];
    }
    let cg_tol = 0.1 * norm(g);
    let mut steps = 0;
    let mut rtr = dot(r, r);
    loop {
        if norm(r) <= cg_tol {
            break;
        }
        steps += 1;
        objective.hessian_times(&d, &mut hd);
        let alpha = rtr / dot(&d, &hd);
        axpy(alpha, &d, s);
        if norm(s) > delta {
            // back off, then go to the boundary along d: the positive root of |s + t d| = delta
            axpy(-alpha, &d, s);
            let std = dot(s, &d);
            let sts = dot(s, s);
            let dtd = dot(&d, &d);
            let dsq = delta * delta;
            let rad = (std * std + dtd * (dsq - sts)).sqrt();
            let to_boundary = if std >= 0.0 {
                (dsq - sts) / (std + rad)
            } else {
                (rad - std) / dtd
            };
            axpy(to_boundary, &d, s);
            axpy(-to_boundary, &hd, r);
            break;
        }
        axpy(-alpha, &hd, r);
        let rtr_new = dot(r, r);
        let beta = rtr_new / rtr;
        for di in d.iter_mut() {
            *di *= beta;
        }
        axpy(1.0, r, &mut d);
        rtr = rtr_new;
    }
    steps
}

/// The L2-regularised squared-hinge primal `w^T w / 2 + sum_i C_i max(0, 1 - y_i w^T x_i)^2`,
/// with liblinear's buffers: the margins of the last `value`, and the rows inside the margin
/// (with their scaled residuals) of the last `gradient`.
pub struct SquaredHingePrimal<'a> {
    rows: &'a Rows<'a>,
    sub: &'a SubProblem<'a>,
    cost: Vec<f64>,
    margin: Vec<f64>,
    inside: Vec<usize>,
    scratch: Vec<f64>,
}

impl<'a> SquaredHingePrimal<'a> {
    pub fn new(rows: &'a Rows<'a>, sub: &'a SubProblem<'a>) -> Self {
        let l = sub.order.len();
        Self {
            rows,
            sub,
            cost: (0..l).map(|i| sub.cost(i)).collect(),
            margin: vec![0.0; l],
            inside: Vec::with_capacity(l),
            scratch: vec![0.0; l],
        }
    }

    /// `out = sum over the inside rows k of coef[k] x_k`, in row order.
    fn inside_transpose_times(&self, coef: &[f64], out: &mut [f64]) {
        let (order, inside) = (self.sub.order, &self.inside);
        add_scaled_rows(self.rows, |k| order[inside[k]], coef, out);
    }
}

impl TrustRegionObjective for SquaredHingePrimal<'_> {
    fn dimension(&self) -> usize {
        self.rows.n_cols
    }

    fn value(&mut self, w: &[f64]) -> f64 {
        let order = self.sub.order;
        row_dots(self.rows, |i| order[i], w, &mut self.margin);
        let mut f = 0.0;
        for &wi in w {
            f += wi * wi;
        }
        f /= 2.0;
        for i in 0..self.margin.len() {
            self.margin[i] *= self.sub.sign(i);
            let slack = 1.0 - self.margin[i];
            if slack > 0.0 {
                f += self.cost[i] * slack * slack;
            }
        }
        f
    }

    fn gradient(&mut self, w: &[f64], g: &mut [f64]) {
        self.inside.clear();
        let mut residual = std::mem::take(&mut self.scratch);
        for i in 0..self.margin.len() {
            if self.margin[i] < 1.0 {
                residual[self.inside.len()] =
                    self.cost[i] * self.sub.sign(i) * (self.margin[i] - 1.0);
                self.inside.push(i);
            }
        }
        self.inside_transpose_times(&residual[..self.inside.len()], g);
        self.scratch = residual;
        for (gi, &wi) in g.iter_mut().zip(w) {
            *gi = wi + 2.0 * *gi;
        }
    }

    fn hessian_times(&mut self, s: &[f64], hs: &mut [f64]) {
        let mut scaled = std::mem::take(&mut self.scratch);
        let (order, inside) = (self.sub.order, &self.inside);
        let scaled_inside = &mut scaled[..inside.len()];
        row_dots(self.rows, |k| order[inside[k]], s, scaled_inside);
        for (slot, &i) in scaled_inside.iter_mut().zip(inside) {
            *slot *= self.cost[i];
        }
        self.inside_transpose_times(&scaled[..self.inside.len()], hs);
        self.scratch = scaled;
        for (h, &si) in hs.iter_mut().zip(s) {
            *h = si + 2.0 * *h;
        }
    }
}

/// The L2-regularised logistic primal `w^T w / 2 + sum_i C_i log(1 + exp(-y_i w^T x_i))`
/// (liblinear's solver 0), with liblinear's buffers: the margins of the last `value`, and
/// the curvature weights `sigma (1 - sigma)` of the last `gradient`.
pub struct LogisticPrimal<'a> {
    rows: &'a Rows<'a>,
    sub: &'a SubProblem<'a>,
    cost: Vec<f64>,
    margin: Vec<f64>,
    curvature: Vec<f64>,
    scratch: Vec<f64>,
}

impl<'a> LogisticPrimal<'a> {
    pub fn new(rows: &'a Rows<'a>, sub: &'a SubProblem<'a>) -> Self {
        let l = sub.order.len();
        Self {
            rows,
            sub,
            cost: (0..l).map(|i| sub.cost(i)).collect(),
            margin: vec![0.0; l],
            curvature: vec![0.0; l],
            scratch: vec![0.0; l],
        }
    }

    /// `out = sum_i coef[i] x_i` over every row, in row order.
    fn transpose_times(&self, coef: &[f64], out: &mut [f64]) {
        let order = self.sub.order;
        add_scaled_rows(self.rows, |i| order[i], coef, out);
    }
}

impl TrustRegionObjective for LogisticPrimal<'_> {
    fn dimension(&self) -> usize {
        self.rows.n_cols
    }

    fn value(&mut self, w: &[f64]) -> f64 {
        let order = self.sub.order;
        row_dots(self.rows, |i| order[i], w, &mut self.margin);
        let mut f = 0.0;
        for &wi in w {
            f += wi * wi;
        }
        f /= 2.0;
        for i in 0..self.margin.len() {
            let yz = self.sub.sign(i) * self.margin[i];
            // log(1 + exp(-yz)) written so exp never overflows
            if yz >= 0.0 {
                f += self.cost[i] * (1.0 + (-yz).exp()).ln();
            } else {
                f += self.cost[i] * (-yz + (1.0 + yz.exp()).ln());
            }
        }
        f
    }

    fn gradient(&mut self, w: &[f64], g: &mut [f64]) {
        let mut residual = std::mem::take(&mut self.scratch);
        for (i, slot) in residual.iter_mut().enumerate() {
            let y = self.sub.sign(i);
            let sigma = 1.0 / (1.0 + (-y * self.margin[i]).exp());
            self.curvature[i] = sigma * (1.0 - sigma);
            *slot = self.cost[i] * (sigma - 1.0) * y;
        }
        self.transpose_times(&residual, g);
        self.scratch = residual;
        for (gi, &wi) in g.iter_mut().zip(w) {
            *gi += wi;
        }
    }

    fn hessian_times(&mut self, s: &[f64], hs: &mut [f64]) {
        let mut scaled = std::mem::take(&mut self.scratch);
        let order = self.sub.order;
        row_dots(self.rows, |i| order[i], s, &mut scaled);
        for (i, slot) in scaled.iter_mut().enumerate() {
            *slot *= self.cost[i] * self.curvature[i];
        }
        self.transpose_times(&scaled, hs);
        self.scratch = scaled;
        for (h, &si) in hs.iter_mut().zip(s) {
            *h += si;
        }
    }
}
