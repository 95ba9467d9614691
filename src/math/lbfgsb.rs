//! SciPy's L-BFGS-B (`scipy.optimize.minimize(method="L-BFGS-B")`, SciPy 1.17) for a problem
//! without bounds, step for step: the iterates, line searches, memory restarts and stopping
//! tests are SciPy's, so a run stops where SciPy's does, after the same iterations, up to
//! the rounding of the sums (SciPy's are BLAS calls).
//!
//! Without bounds the algorithm reduces to:
//!
//! * **direction**: with no correction pairs stored (the first iteration, and after a
//!   restart) the generalized Cauchy point is `x - dtm g` with `dtm = |g|^2 / (theta |g|^2)`
//!   (1, as `theta` is 1 then) and no subspace step; with pairs, the Cauchy point is skipped
//!   (`z = x`) and the subspace minimisation gives `z = x + B^-1 (-g)`, `B^-1` applied through
//!   the compact representation: the `2 col x 2col` matrix `K` of Byrd, Nocedal & Schnabel
//!   factored by two Choleskys ([`CompactFactor`]); the search direction is `d = z - x`;
//! * **line search**: Moré & Thuente's `dcsrch` ([`MoreThuente`]) with `ftol = 1e-3`,
//!   `gtol = 0.9`, `xtol = 0.1`, the step bounded by `[0, 1e10]`, the first trial `1 / |d|`
//!   on the very first iteration and `1` after, `maxls` evaluations at most; a trial step of
//!   exactly 1 evaluates at `z` itself;
//! * **failed line search** (an ascent direction, `maxls` reached): back to the previous
//!   point; with pairs stored the memory is dropped and the iteration restarts, without any
//!   it is SciPy's "ABNORMAL" end;
//! * **iteration end**: the iteration counts (SciPy's `nit`), then `maxiter` and `maxfun`
//!   stop the run; otherwise convergence when `max|g| <= pgtol`, or when
//!   `f_old - f <= ftol max(|f_old|, |f|, 1)`;
//! * **update**: `s = x - x_old`, `y = g - g_old`, skipped when `s.y <= eps (-g_old.s)`;
//!   `theta = y.y / s.y`; the oldest of `m` pairs leaves; a `theta S'S + L D^-1 L'` that is not
//!   positive definite (SciPy's `formt`) restarts the memory.
//!
//! Decisions that depend on rounding are taken three-valued: where a comparison lies within
//! [`Rounding`]'s band of its threshold another implementation's rounding (SciPy's BLAS sums,
//! the objective's own) could decide the other way, and the run stops with
//! [`LbfgsbStatus::Fragile`] so the caller can defer to SciPy.

use crate::error::Result;
use crate::math::optimize::at_most;
use ndarray::{Array1, Array2, ArrayView1};
use std::collections::VecDeque;

/// SciPy's L-BFGS-B settings as scikit-learn's `lbfgs` passes them.
#[derive(Debug, Clone)]
pub struct LbfgsbOptions {
    /// `maxiter`: the run stops after this many iterations.
    pub max_iter: usize,
    /// `gtol` (`pgtol`): convergence when the largest gradient entry is at most this.
    pub pgtol: f64,
    /// `ftol` (`factr * eps`): convergence when an iteration lowers `f` by at most this,
    /// relative to `max(|f_old|, |f|, 1)`.
    pub ftol: f64,
    /// `maxcor`: correction pairs kept.
    pub memory: usize,
    /// `maxls`: evaluations per line search.
    pub max_line_search: usize,
    /// `maxfun`: the run stops at an iteration end with more evaluations than this.
    pub max_fun: usize,
}

impl LbfgsbOptions {
    /// scikit-learn's `lbfgs` call: `maxls=50`, `ftol=64 eps`, SciPy's `maxcor=10` and
    /// `maxfun=15000`.
    pub fn scikit_learn(max_iter: usize, tol: f64) -> Self {
        Self {
            max_iter,
            pgtol: tol,
            ftol: 64.0 * f64::EPSILON,
            memory: 10,
            max_line_search: 50,
            max_fun: 15000,
        }
    }
}

/// How far another implementation's values may lie from this one's: decisions within
/// these bands of their thresholds are not taken (module docs).
#[derive(Debug, Clone, Copy)]
pub struct Rounding {
    /// Objective values, relative to their magnitude.
    pub loss: f64,
    /// Directional derivatives `g.d`, relative to the line search's initial one.
    pub slope: f64,
    /// The largest gradient entry against `pgtol`, absolute.
    pub gradient: f64,
}

/// How a run ended (SciPy's `status`: 0 for `Converged*`, 1 for the limits, 2 for
/// `LineSearchFailed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LbfgsbStatus {
    /// `max|g| <= pgtol`.
    ConvergedGradient,
    /// The relative reduction of `f` was at most `ftol`.
    ConvergedReduction,
    /// `maxiter` iterations.
    IterationLimit,
    /// More than `maxfun` evaluations at an iteration's end.
    EvaluationLimit,
    /// A line search failed with no pairs stored (SciPy's "ABNORMAL").
    LineSearchFailed,
    /// A decision lay within rounding of its threshold: SciPy's run may differ from here on.
    Fragile,
}

impl LbfgsbStatus {
    /// SciPy's `status` code; `None` for [`LbfgsbStatus::Fragile`].
    pub fn scipy_status(self) -> Option<u8> {
        match self {
            Self::ConvergedGradient | Self::ConvergedReduction => Some(0),
            Self::IterationLimit | Self::EvaluationLimit => Some(1),
            Self::LineSearchFailed => Some(2),
            Self::Fragile => None,
        }
    }
}

/// The end of a run.
#[derive(Debug, Clone)]
pub struct LbfgsbRun {
    pub x: Array1<f64>,
    pub f: f64,
    /// SciPy's `nit`: iterations whose line search succeeded.
    pub n_iter: usize,
    /// Objective evaluations (SciPy's `nfev`).
    pub n_eval: usize,
    pub status: LbfgsbStatus,
}

/// A sum of products in index order (the loops SciPy writes out).
fn sequential_dot(a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
    a.iter().zip(b).fold(0.0, |acc, (u, v)| acc + u * v)
}

fn max_abs(v: &Array1<f64>) -> f64 {
    v.iter().fold(
        0.0f64,
        |m, &x| if x.is_nan() { f64::NAN } else { m.max(x.abs()) },
    )
}

/// Upper Cholesky factor `U` (`A = U'U`) of the symmetric `a` read from its upper triangle;
/// `None` at a pivot that is not positive (LAPACK's `dpotrf` failure).
fn cholesky_upper(a: &Array2<f64>) -> Option<Array2<f64>> {
    let n = a.nrows();
    let mut u = Array2::<f64>::zeros((n, n));
    for j in 0..n {
        let pivot = a[[j, j]] - (0..j).map(|k| u[[k, j]] * u[[k, j]]).sum::<f64>();
        if pivot.is_nan() || pivot <= 0.0 {
            return None;
        }
        let root = pivot.sqrt();
        u[[j, j]] = root;
        for i in j + 1..n {
            let off = a[[j, i]] - (0..j).map(|k| u[[k, j]] * u[[k, i]]).sum::<f64>();
            u[[j, i]] = off / root;
        }
    }
    Some(u)
}

/// Solves `U' x = b` (`transpose`) or `U x = b` for the upper triangular `u`, in place;
/// `false` at a zero diagonal entry (LAPACK's `dtrtrs` failure).
fn triangular_solve(u: &Array2<f64>, b: &mut [f64], transpose: bool) -> bool {
    let n = b.len();
    if (0..n).any(|i| u[[i, i]] == 0.0) {
        return false;
    }
    if transpose {
        for i in 0..n {
            let s = (0..i).fold(b[i], |s, k| s - u[[k, i]] * b[k]);
            b[i] = s / u[[i, i]];
        }
    } else {
        for i in (0..n).rev() {
            let s = (i + 1..n).fold(b[i], |s, k| s - u[[i, k]] * b[k]);
            b[i] = s / u[[i, i]];
        }
    }
    true
}

/// The correction pairs, oldest first, with SciPy's `S'Y` (lower triangle and diagonal) and
/// `S'S` (upper triangle) as its `matupd` keeps them.
struct Memory {
    s: VecDeque<Array1<f64>>,
    y: VecDeque<Array1<f64>>,
    /// `sy[i][j] = s_i . y_j` for `j <= i`, the diagonal the update's `s.y`.
    sy: VecDeque<Vec<f64>>,
    /// `ss[j][i] = s_j . s_i` for `j <= i`, stored by column `i`.
    ss: VecDeque<Vec<f64>>,
    theta: f64,
    capacity: usize,
}

impl Memory {
    fn new(capacity: usize) -> Self {
        Self {
            s: VecDeque::new(),
            y: VecDeque::new(),
            sy: VecDeque::new(),
            ss: VecDeque::new(),
            theta: 1.0,
            capacity,
        }
    }

    fn len(&self) -> usize {
        self.s.len()
    }

    /// SciPy's restart: no pairs, `theta = 1`.
    fn clear(&mut self) {
        *self = Self::new(self.capacity);
    }

    /// SciPy's `matupd`: store `(s, y)` (dropping the oldest when full), `theta = y.y / s.y`,
    /// and the new row of `S'Y` and column of `S'S`; `s_dot_s` is `|s|^2` as SciPy forms it.
    fn push(&mut self, s: Array1<f64>, y: Array1<f64>, y_dot_y: f64, s_dot_y: f64, s_dot_s: f64) {
        if self.len() == self.capacity {
            self.s.pop_front();
            self.y.pop_front();
            self.sy.pop_front();
            self.ss.pop_front();
            for row in self.sy.iter_mut() {
                row.remove(0);
            }
            for column in self.ss.iter_mut() {
                column.remove(0);
            }
        }
        self.theta = y_dot_y / s_dot_y;
        let mut sy_row: Vec<f64> = self.y.iter().map(|yj| s.dot(yj)).collect();
        sy_row.push(s_dot_y);
        let mut ss_column: Vec<f64> = self.s.iter().map(|sj| sj.dot(&s)).collect();
        ss_column.push(s_dot_s);
        self.s.push_back(s);
        self.y.push_back(y);
        self.sy.push_back(sy_row);
        self.ss.push_back(ss_column);
    }

    /// SciPy's `formt`: whether `theta S'S + L D^-1 L'` has a Cholesky factor.
    fn middle_matrix_factors(&self) -> bool {
        let col = self.len();
        let mut t = Array2::<f64>::zeros((col, col));
        for j in 0..col {
            t[[0, j]] = self.theta * self.ss[j][0];
        }
        for i in 1..col {
            for j in i..col {
                let mut sum = 0.0;
                for k in 0..i.min(j) {
                    sum += (self.sy[i][k] * self.sy[j][k]) / self.sy[k][k];
                }
                t[[i, j]] = sum + self.theta * self.ss[j][i];
            }
        }
        cholesky_upper(&t).is_some()
    }
}

/// SciPy's `formk` for all variables free: the upper triangular factor of
/// `[[D + Y'Y / theta, R'], [R, 0]]`-derived `K` (`R` the upper triangle of `S'Y`) as
/// `[[U1, X], [0, U2]]`, with `U1'U1 = D + Y'Y / theta`, `X = U1^-T R'` and
/// `U2'U2 = X'X`.
struct CompactFactor {
    w: Array2<f64>,
}

impl CompactFactor {
    fn new(memory: &Memory) -> Option<Self> {
        let col = memory.len();
        let theta = memory.theta;
        let mut upper = Array2::<f64>::zeros((col, col));
        for i in 0..col {
            for j in 0..=i {
                upper[[j, i]] = sequential_dot(memory.y[i].view(), memory.y[j].view()) / theta;
            }
            upper[[i, i]] += memory.sy[i][i];
        }
        let u1 = cholesky_upper(&upper)?;
        // Block (1, 2): row j, column i holds s_i . y_j for j >= i (R_z), -0 above.
        let mut x = Array2::<f64>::zeros((col, col));
        for i in 0..col {
            for j in 0..col {
                x[[j, i]] = if j < i {
                    -0.0
                } else {
                    sequential_dot(memory.s[i].view(), memory.y[j].view())
                };
            }
        }
        for i in 0..col {
            let mut column: Vec<f64> = x.column(i).to_vec();
            triangular_solve(&u1, &mut column, true);
            for j in 0..col {
                x[[j, i]] = column[j];
            }
        }
        let mut lower_right = Array2::<f64>::zeros((col, col));
        for i in 0..col {
            for j in i..col {
                lower_right[[i, j]] = 0.0 + x.column(i).dot(&x.column(j));
            }
        }
        let u2 = cholesky_upper(&lower_right)?;
        let mut w = Array2::<f64>::zeros((2 * col, 2 * col));
        for i in 0..col {
            for j in i..col {
                w[[i, j]] = u1[[i, j]];
                w[[col + i, col + j]] = u2[[i, j]];
            }
            for j in 0..col {
                w[[i, col + j]] = x[[i, j]];
            }
        }
        Some(Self { w })
    }

    /// SciPy's `subsm` without bounds: `z = x + d` with `d = B^-1 (-g)` by the compact
    /// representation; `None` where a triangular solve meets a zero pivot.
    fn subspace_point(
        &self,
        memory: &Memory,
        x: &Array1<f64>,
        g: &Array1<f64>,
    ) -> Option<Array1<f64>> {
        let col = memory.len();
        let theta = memory.theta;
        let mut d = g.mapv(|v| -v);
        let mut wv = vec![0.0; 2 * col];
        for i in 0..col {
            wv[i] = sequential_dot(memory.y[i].view(), d.view());
            wv[col + i] = theta * sequential_dot(memory.s[i].view(), d.view());
        }
        if !triangular_solve(&self.w, &mut wv, true) {
            return None;
        }
        for v in wv.iter_mut().take(col) {
            *v = -*v;
        }
        if !triangular_solve(&self.w, &mut wv, false) {
            return None;
        }
        for j in 0..col {
            let (yj, sj) = (&memory.y[j], &memory.s[j]);
            for k in 0..d.len() {
                d[k] = d[k] + (yj[k] * wv[j] / theta) + (sj[k] * wv[col + j]);
            }
        }
        let scale = 1.0 / theta;
        Some(x + &(d * scale))
    }
}

/// What the line search wants next.
enum SearchStep {
    /// Evaluate at this step.
    Try(f64),
    /// Take the current step (SciPy's convergence or warning exits).
    Accept,
    /// A decision within rounding.
    Undecided,
}

/// Moré & Thuente's line search as MINPACK-2's `dcsrch` runs it (SciPy's port), with
/// rounding-banded decisions.
struct MoreThuente {
    gtol: f64,
    xtol: f64,
    stpmin: f64,
    stpmax: f64,
    bracketed: bool,
    stage: u8,
    finit: f64,
    ginit: f64,
    gtest: f64,
    stx: f64,
    fx: f64,
    gx: f64,
    sty: f64,
    fy: f64,
    gy: f64,
    stmin: f64,
    stmax: f64,
    width: f64,
    width1: f64,
    loss_band: f64,
    slope_band: f64,
}

/// Three-valued `and`: `None` is "either way".
fn both(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

impl MoreThuente {
    /// `dcsrch`'s start at `f`, slope `g < 0`, first trial `stp`.
    fn start(f: f64, g: f64, stp: f64, stpmax: f64, rounding: &Rounding) -> Self {
        let (ftol, width) = (1e-3, stpmax);
        Self {
            gtol: 0.9,
            xtol: 0.1,
            stpmin: 0.0,
            stpmax,
            bracketed: false,
            stage: 1,
            finit: f,
            ginit: g,
            gtest: ftol * g,
            stx: 0.0,
            fx: f,
            gx: g,
            sty: 0.0,
            fy: f,
            gy: g,
            stmin: 0.0,
            stmax: stp + 4.0 * stp,
            width,
            width1: width / 0.5,
            loss_band: rounding.loss * f.abs(),
            slope_band: rounding.slope * g.abs(),
        }
    }

    fn f_at_most(&self, a: f64, b: f64) -> Option<bool> {
        at_most(a, b, self.loss_band.max(rounding_floor(a, b)))
    }

    fn g_at_most(&self, a: f64, b: f64) -> Option<bool> {
        at_most(a, b, self.slope_band)
    }

    /// `dcsrch` after an evaluation at `stp`: value `f`, slope `g`.
    fn next(&mut self, stp: f64, f: f64, g: f64) -> SearchStep {
        let ftest = self.finit + stp * self.gtest;
        let Some(sufficient) = self.f_at_most(f, ftest) else {
            return SearchStep::Undecided;
        };
        if self.stage == 1 && sufficient {
            match self.g_at_most(0.0, g) {
                Some(true) => self.stage = 2,
                Some(false) => {}
                None => return SearchStep::Undecided,
            }
        }
        let mut warning = false;
        if self.bracketed && (stp <= self.stmin || stp >= self.stmax) {
            warning = true;
        }
        if self.bracketed && self.stmax - self.stmin <= self.xtol * self.stmax {
            warning = true;
        }
        if stp == self.stpmax && sufficient {
            match self.g_at_most(g, self.gtest) {
                Some(true) => warning = true,
                Some(false) => {}
                None => return SearchStep::Undecided,
            }
        }
        if stp == self.stpmin {
            match self.g_at_most(self.gtest, g) {
                Some(true) => warning = true,
                Some(false) => warning |= !sufficient,
                None => return SearchStep::Undecided,
            }
        }
        let curvature = self.g_at_most(g.abs(), self.gtol * (-self.ginit));
        let converged = both(Some(sufficient), curvature);
        let Some(converged) = converged else {
            return SearchStep::Undecided;
        };
        if warning || converged {
            return SearchStep::Accept;
        }
        let Some(below_fx) = self.f_at_most(f, self.fx) else {
            return SearchStep::Undecided;
        };
        let mut stp = stp;
        let step = if self.stage == 1 && below_fx && !sufficient {
            // The modified function psi(t) = f(t) - f(0) - t gtest.
            let mut fxm = self.fx - self.stx * self.gtest;
            let mut fym = self.fy - self.sty * self.gtest;
            let mut gxm = self.gx - self.gtest;
            let mut gym = self.gy - self.gtest;
            let fm = f - stp * self.gtest;
            let gm = g - self.gtest;
            let stepped = self.step(&mut fxm, &mut gxm, &mut fym, &mut gym, &mut stp, fm, gm);
            self.fx = fxm + self.stx * self.gtest;
            self.fy = fym + self.sty * self.gtest;
            self.gx = gxm + self.gtest;
            self.gy = gym + self.gtest;
            stepped
        } else {
            let (mut fx, mut gx, mut fy, mut gy) = (self.fx, self.gx, self.fy, self.gy);
            let stepped = self.step(&mut fx, &mut gx, &mut fy, &mut gy, &mut stp, f, g);
            (self.fx, self.gx, self.fy, self.gy) = (fx, gx, fy, gy);
            stepped
        };
        if !step {
            return SearchStep::Undecided;
        }
        if self.bracketed {
            if (self.sty - self.stx).abs() >= 0.66 * self.width1 {
                stp = self.stx + 0.5 * (self.sty - self.stx);
            }
            self.width1 = self.width;
            self.width = (self.sty - self.stx).abs();
            self.stmin = self.stx.min(self.sty);
            self.stmax = self.stx.max(self.sty);
        } else {
            self.stmin = stp + 1.1 * (stp - self.stx);
            self.stmax = stp + 4.0 * (stp - self.stx);
        }
        stp = stp.max(self.stpmin).min(self.stpmax);
        if self.bracketed
            && (stp <= self.stmin
                || stp >= self.stmax
                || self.stmax - self.stmin <= self.xtol * self.stmax)
        {
            stp = self.stx;
        }
        SearchStep::Try(stp)
    }

    /// MINPACK-2's `dcstep` on the (possibly modified) values: updates the interval
    /// `[stx, sty]` and sets `stp` to the next trial; `false` where a branch is within rounding.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        fx: &mut f64,
        dx: &mut f64,
        fy: &mut f64,
        dy: &mut f64,
        stp: &mut f64,
        fp: f64,
        dp: f64,
    ) -> bool {
        let (stx, sty) = (self.stx, self.sty);
        let (stpmin, stpmax) = (self.stmin, self.stmax);
        let Some(higher) = self.f_at_most(fp, *fx).map(|b| !b) else {
            return false;
        };
        let sgnd = dp * (*dx / dx.abs());
        if !higher {
            // The branch taken hangs on the sign of the new slope and, where it rises, on
            // whether its size fell.
            if at_most(sgnd.abs(), 0.0, self.slope_band).is_none() {
                return false;
            }
            if sgnd >= 0.0 && at_most(dp.abs(), dx.abs(), self.slope_band).is_none() {
                return false;
            }
        }
        let stpf;
        if higher {
            let theta = 3.0 * (*fx - fp) / (*stp - stx) + *dx + dp;
            let s = theta.abs().max(dx.abs().max(dp.abs()));
            let mut gamma = s * ((theta / s).powi(2) - (*dx / s) * (dp / s)).sqrt();
            if *stp < stx {
                gamma = -gamma;
            }
            let p = (gamma - *dx) + theta;
            let q = ((gamma - *dx) + gamma) + dp;
            let r = p / q;
            let stpc = stx + r * (*stp - stx);
            let stpq = stx + ((*dx / ((*fx - fp) / (*stp - stx) + *dx)) / 2.0) * (*stp - stx);
            stpf = if (stpc - stx).abs() < (stpq - stx).abs() {
                stpc
            } else {
                stpc + (stpq - stpc) / 2.0
            };
            self.bracketed = true;
        } else if sgnd < 0.0 {
            let theta = 3.0 * (*fx - fp) / (*stp - stx) + *dx + dp;
            let s = theta.abs().max(dx.abs().max(dp.abs()));
            let mut gamma = s * ((theta / s).powi(2) - (*dx / s) * (dp / s)).sqrt();
            if *stp > stx {
                gamma = -gamma;
            }
            let p = (gamma - dp) + theta;
            let q = ((gamma - dp) + gamma) + *dx;
            let r = p / q;
            let stpc = *stp + r * (stx - *stp);
            let stpq = *stp + (dp / (dp - *dx)) * (stx - *stp);
            stpf = if (stpc - *stp).abs() > (stpq - *stp).abs() {
                stpc
            } else {
                stpq
            };
            self.bracketed = true;
        } else if dp.abs() < dx.abs() {
            let theta = 3.0 * (*fx - fp) / (*stp - stx) + *dx + dp;
            let s = theta.abs().max(dx.abs().max(dp.abs()));
            let mut gamma = s * (0.0f64.max((theta / s).powi(2) - (*dx / s) * (dp / s))).sqrt();
            if *stp > stx {
                gamma = -gamma;
            }
            let p = (gamma - dp) + theta;
            let q = (gamma + (*dx - dp)) + gamma;
            let r = p / q;
            let stpc = if r < 0.0 && gamma != 0.0 {
                *stp + r * (stx - *stp)
            } else if *stp > stx {
                stpmax
            } else {
                stpmin
            };
            let stpq = *stp + (dp / (dp - *dx)) * (stx - *stp);
            if self.bracketed {
                let mut f = if (stpc - *stp).abs() < (stpq - *stp).abs() {
                    stpc
                } else {
                    stpq
                };
                f = if *stp > stx {
                    (*stp + 0.66 * (sty - *stp)).min(f)
                } else {
                    (*stp + 0.66 * (sty - *stp)).max(f)
                };
                stpf = f;
            } else {
                let f = if (stpc - *stp).abs() > (stpq - *stp).abs() {
                    stpc
                } else {
                    stpq
                };
                stpf = f.min(stpmax).max(stpmin);
            }
        } else if self.bracketed {
            let theta = 3.0 * (fp - *fy) / (sty - *stp) + *dy + dp;
            let s = theta.abs().max(dy.abs().max(dp.abs()));
            let mut gamma = s * ((theta / s).powi(2) - (*dy / s) * (dp / s)).sqrt();
            if *stp > sty {
                gamma = -gamma;
            }
            let p = (gamma - dp) + theta;
            let q = ((gamma - dp) + gamma) + *dy;
            let r = p / q;
            stpf = *stp + r * (sty - *stp);
        } else if *stp > stx {
            stpf = stpmax;
        } else {
            stpf = stpmin;
        }
        if higher {
            self.sty = *stp;
            *fy = fp;
            *dy = dp;
        } else {
            if sgnd < 0.0 {
                self.sty = self.stx;
                *fy = *fx;
                *dy = *dx;
            }
            self.stx = *stp;
            *fx = fp;
            *dx = dp;
        }
        *stp = stpf;
        true
    }
}

/// The loss band never falls below a few eps of the values compared.
fn rounding_floor(a: f64, b: f64) -> f64 {
    4.0 * f64::EPSILON * a.abs().max(b.abs())
}

/// Minimise `objective` (returning `f(x)`, writing `∇f(x)`) from `x0` as SciPy's L-BFGS-B
/// does without bounds (module docs).
pub fn minimize_unbounded<F>(
    mut objective: F,
    x0: Array1<f64>,
    opts: &LbfgsbOptions,
    rounding: &Rounding,
) -> Result<LbfgsbRun>
where
    F: FnMut(ArrayView1<f64>, &mut Array1<f64>) -> Result<f64>,
{
    let n = x0.len();
    let mut x = x0;
    let mut g = Array1::<f64>::zeros(n);
    let mut f = objective(x.view(), &mut g)?;
    let mut n_eval = 1;
    let mut n_iter = 0;
    let finish = |x: Array1<f64>, f: f64, n_iter: usize, n_eval: usize, status| {
        Ok(LbfgsbRun {
            x,
            f,
            n_iter,
            n_eval,
            status,
        })
    };
    match at_most(max_abs(&g), opts.pgtol, rounding.gradient) {
        Some(true) => return finish(x, f, 0, n_eval, LbfgsbStatus::ConvergedGradient),
        Some(false) => {}
        None => return finish(x, f, 0, n_eval, LbfgsbStatus::Fragile),
    }
    let mut memory = Memory::new(opts.memory);
    let mut factor: Option<CompactFactor> = None;
    let mut updated = false;
    let mut first_iteration = true;
    loop {
        // The point the quasi-Newton model proposes.
        let z = if memory.len() == 0 {
            let f1 = -g.iter().fold(0.0, |acc, v| acc + v * v);
            let dtm = -f1 / (-memory.theta * f1);
            let dtm = if dtm <= 0.0 { 0.0 } else { dtm };
            let tsum = 0.0 + dtm;
            Array1::from_iter(x.iter().zip(&g).map(|(xi, gi)| xi + tsum * -gi))
        } else {
            if updated || factor.is_none() {
                factor = CompactFactor::new(&memory);
            }
            match factor
                .as_ref()
                .and_then(|k| k.subspace_point(&memory, &x, &g))
            {
                Some(z) => z,
                None => {
                    // A singular factor restarts the memory (SciPy's info != 0).
                    memory.clear();
                    factor = None;
                    updated = false;
                    continue;
                }
            }
        };
        let mut d = &z - &x;
        let dnorm = d.dot(&d).sqrt();
        let dtd = dnorm * dnorm;
        let stpmax = 1e10;
        let mut stp = if first_iteration {
            (1.0 / dnorm).min(stpmax)
        } else {
            1.0
        };
        let (x_old, g_old, f_old) = (x.clone(), g.clone(), f);
        let gd_old = g.dot(&d);
        let mut gd = gd_old;
        let mut accepted = false;
        if gd_old < 0.0 {
            let mut search = MoreThuente::start(f, gd_old, stp, stpmax, rounding);
            let mut trials = 0;
            loop {
                if trials >= opts.max_line_search {
                    break;
                }
                trials += 1;
                x = if stp == 1.0 {
                    z.clone()
                } else {
                    Array1::from_iter(d.iter().zip(&x_old).map(|(di, ti)| stp * di + ti))
                };
                f = objective(x.view(), &mut g)?;
                n_eval += 1;
                gd = g.dot(&d);
                match search.next(stp, f, gd) {
                    SearchStep::Accept => {
                        accepted = true;
                        break;
                    }
                    SearchStep::Try(next) => stp = next,
                    SearchStep::Undecided => {
                        return finish(x, f, n_iter, n_eval, LbfgsbStatus::Fragile)
                    }
                }
            }
        } else if at_most(gd_old, 0.0, rounding.slope * g.dot(&g).sqrt() * dnorm).is_none() {
            return finish(x, f, n_iter, n_eval, LbfgsbStatus::Fragile);
        }
        if !accepted {
            // Back to the previous point; SciPy's evaluation count leaves out the trial it
            // did not make.
            (x, g, f) = (x_old, g_old, f_old);
            if memory.len() == 0 {
                return finish(x, f, n_iter, n_eval, LbfgsbStatus::LineSearchFailed);
            }
            memory.clear();
            factor = None;
            updated = false;
            continue;
        }
        first_iteration = false;
        n_iter += 1;
        if n_iter >= opts.max_iter {
            return finish(x, f, n_iter, n_eval, LbfgsbStatus::IterationLimit);
        }
        if n_eval > opts.max_fun {
            return finish(x, f, n_iter, n_eval, LbfgsbStatus::EvaluationLimit);
        }
        match at_most(max_abs(&g), opts.pgtol, rounding.gradient) {
            Some(true) => return finish(x, f, n_iter, n_eval, LbfgsbStatus::ConvergedGradient),
            Some(false) => {}
            None => return finish(x, f, n_iter, n_eval, LbfgsbStatus::Fragile),
        }
        let scale = f_old.abs().max(f.abs()).max(1.0);
        let reduction_band = 2.0 * rounding.loss * f_old.abs().max(f.abs());
        match at_most(f_old - f, opts.ftol * scale, reduction_band) {
            Some(true) => return finish(x, f, n_iter, n_eval, LbfgsbStatus::ConvergedReduction),
            Some(false) => {}
            None => return finish(x, f, n_iter, n_eval, LbfgsbStatus::Fragile),
        }
        let y = &g - &g_old;
        let yy = y.dot(&y);
        let (dr, curvature_floor) = if stp == 1.0 {
            (gd - gd_old, -gd_old)
        } else {
            d *= stp;
            ((gd - gd_old) * stp, -gd_old * stp)
        };
        let skip = at_most(
            dr,
            f64::EPSILON * curvature_floor,
            rounding.slope * curvature_floor.abs(),
        );
        match skip {
            Some(true) => {
                updated = false;
                continue;
            }
            Some(false) => {}
            None => return finish(x, f, n_iter, n_eval, LbfgsbStatus::Fragile),
        }
        let ss = if stp == 1.0 { dtd } else { stp * stp * dtd };
        memory.push(d, y, yy, dr, ss);
        updated = true;
        if !memory.middle_matrix_factors() {
            memory.clear();
            factor = None;
            updated = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn exact() -> Rounding {
        Rounding {
            loss: 0.0,
            slope: 0.0,
            gradient: 0.0,
        }
    }

    /// `f = (x - c)' A (x - c) / 2` with a symmetric positive definite `A`.
    fn quadratic(
        a: Array2<f64>,
        c: Array1<f64>,
    ) -> impl FnMut(ArrayView1<f64>, &mut Array1<f64>) -> Result<f64> {
        move |x, g| {
            let r = &x - &c;
            let ar = a.dot(&r);
            g.assign(&ar);
            Ok(0.5 * r.dot(&ar))
        }
    }

    /// On a convex quadratic the run reaches the closed-form minimiser `c`: stopped by the
    /// gradient rule at `tol`, `|x - c|_2 <= |g|_2 / lambda_min(A) <= sqrt(n) tol / 0.58`
    /// (Gershgorin: the diagonal is at least 1, each row's off-diagonal sum below 0.42).
    #[test]
    fn quadratic_minimum_matches_closed_form() {
        let n = 12;
        let a = Array2::from_shape_fn((n, n), |(i, j)| {
            if i == j {
                1.0 + i as f64
            } else {
                0.1 / (1.0 + (i as f64 - j as f64).abs())
            }
        });
        let c = Array1::from_shape_fn(n, |i| (i as f64 * 0.7).sin());
        let tol = 1e-5;
        let opts = LbfgsbOptions::scikit_learn(500, tol);
        let run =
            minimize_unbounded(quadratic(a, c.clone()), Array1::zeros(n), &opts, &exact()).unwrap();
        assert_eq!(run.status, LbfgsbStatus::ConvergedGradient);
        let distance = (&run.x - &c).mapv(|v| v * v).sum().sqrt();
        assert!(distance <= (n as f64).sqrt() * tol / 0.58, "{distance}");
    }

    /// The first line search on `f = |x|^2 / 2` from `x0 = (0.15, 0.2)`: the direction is
    /// `-x0`, the first trial `1 / |x0| = 4` lands at `-3 x0` (higher: the minimiser is
    /// bracketed in `[0, 4]`); on a quadratic both interpolations are exact, so the second
    /// trial is the minimiser `t = 1` (to rounding), which meets both Wolfe conditions.
    #[test]
    fn first_line_search_on_a_quadratic() {
        let x0 = array![0.15, 0.2];
        let mut evaluations = Vec::new();
        let objective = |x: ArrayView1<f64>, g: &mut Array1<f64>| {
            evaluations.push(x.to_owned());
            g.assign(&x);
            Ok(0.5 * x.dot(&x))
        };
        let opts = LbfgsbOptions::scikit_learn(1, 1e-12);
        let run = minimize_unbounded(objective, x0.clone(), &opts, &exact()).unwrap();
        assert_eq!(
            (run.status, run.n_iter, run.n_eval),
            (LbfgsbStatus::IterationLimit, 1, 3)
        );
        for i in 0..2 {
            assert!((evaluations[1][i] + 3.0 * x0[i]).abs() < 1e-15);
            assert!(run.x[i].abs() < 1e-15, "{}", run.x);
        }
    }

    /// A quadratic model's exact minimum in one Newton-like step: on `f = |x - c|^2 / 2`
    /// after one update `theta = 1` and the subspace step lands on `c`.
    #[test]
    fn identity_quadratic_converges_in_two_iterations() {
        let c = array![1.0, -2.0, 0.5];
        let opts = LbfgsbOptions::scikit_learn(100, 1e-9);
        let run = minimize_unbounded(
            quadratic(Array2::eye(3), c.clone()),
            Array1::zeros(3),
            &opts,
            &exact(),
        )
        .unwrap();
        assert_eq!(run.status, LbfgsbStatus::ConvergedGradient);
        assert!(run.n_iter <= 2, "{}", run.n_iter);
        for (u, v) in run.x.iter().zip(&c) {
            assert!((u - v).abs() < 1e-12);
        }
    }

    /// `maxiter` ends the run at the iteration count, whatever the gradient.
    #[test]
    fn iteration_limit() {
        let a = Array2::from_diag(&array![1.0, 10.0, 100.0]);
        let opts = LbfgsbOptions::scikit_learn(2, 1e-12);
        let run = minimize_unbounded(
            quadratic(a, array![1.0, 1.0, 1.0]),
            Array1::zeros(3),
            &opts,
            &exact(),
        )
        .unwrap();
        assert_eq!((run.status, run.n_iter), (LbfgsbStatus::IterationLimit, 2));
    }

    #[test]
    fn cholesky_and_triangular_solves() {
        let a = array![[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]];
        let u = cholesky_upper(&a).unwrap();
        let back = u.t().dot(&u);
        for (p, q) in back.iter().zip(&a) {
            assert!((p - q).abs() < 1e-14);
        }
        let b = [1.0, 2.0, 3.0];
        let mut v = b.to_vec();
        assert!(triangular_solve(&u, &mut v, true));
        assert!(triangular_solve(&u, &mut v, false));
        let check = a.dot(&Array1::from(v));
        for (p, q) in check.iter().zip(&b) {
            assert!((p - q).abs() < 1e-13);
        }
        assert!(cholesky_upper(&array![[1.0, 2.0], [2.0, 1.0]]).is_none());
    }
}
