//! The liblinear training scikit-learn runs for `LinearSVC` and
//! `LogisticRegression(solver="liblinear")` (its fork of liblinear 2.x), repeated step for
//! step so a fit here from the same data, weights and seed is scikit-learn's: bit for bit
//! for the coordinate-descent solvers (dual L2 SVM, primal L1 SVM, Crammer-Singer, dual L2
//! logistic, newGLMNET for L1 logistic), to rounding for the primal TRON solvers (whose
//! vector operations scikit-learn hands to BLAS).
//!
//! What must match, and why:
//! - the data are liblinear's sparse rows: a dense row keeps its non-zero entries only, a
//!   CSR row its stored entries in stored order, and the bias feature (value `bias`, when
//!   positive) comes last, regularised like any other weight; each dot product is the
//!   sequential sum over a row's entries in that order;
//! - samples of weight `<= 0` are dropped first; the remaining ones are grouped by class
//!   (classes in ascending label order, samples in input order within a class), and that
//!   grouped order is the coordinate numbering the shuffles permute;
//! - two classes train one problem, the larger label positive with C times its class
//!   weight, the smaller negative with its own; more classes train one-vs-rest, class `k`
//!   positive with C times its weight against the rest with the bare C; each sample's C is
//!   further scaled by its sample weight;
//! - Crammer-Singer instead trains one problem over every class, each sample's C its
//!   class's weighted C times its sample weight;
//! - the coordinate orders come from `std::mt19937` seeded with the one number scikit-learn
//!   draws, and one generator serves all of a fit's sub-problems in turn ([`random`]);
//! - `exp` and `log` are glibc's, as Rust's `f64` methods call them on Linux.

mod crammer_singer;
mod dual_cd;
mod l1_cd;
mod l1_logistic;
mod logistic_dual;
pub mod random;
mod tron;

#[cfg(test)]
mod tests;

pub use dual_cd::HingeLoss;
pub use random::MersenneTwister;

use crate::declare_gate;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::borrow::Cow;

declare_gate! {
    /// Independent liblinear trainings side by side: the one-vs-rest problems of the primal
    /// (TRON) solvers, which draw nothing, and a fit beside its rounding probe
    /// ([`train_pair`]). Each training is the serial replica either way, so the gate never
    /// changes a bit. Work = stored entries (bias included) x problems trained.
    pub SIDE_BY_SIDE_MIN_ENTRIES: liblinear::side_by_side_min_entries = 4_700, "stored entries x problems"
}

/// liblinear's sparse rows: row `r`'s entries are `index[start[r]..start[r + 1]]` (0-based
/// columns, 32 bits as liblinear's own `int`: the solvers stream these arrays, so every
/// byte per entry counts) with `value` alongside; the bias column, if any, is column
/// `n_cols - 1`.
pub struct Rows<'a> {
    pub start: Vec<usize>,
    pub index: Vec<u32>,
    pub value: Cow<'a, [f64]>,
    pub n_cols: usize,
    /// Every row stores every column, in column order (a dense input without zeros): row
    /// `r`'s values are then `value[r * n_cols..(r + 1) * n_cols]`, which TRON's products
    /// read as dense rows.
    pub full: bool,
}

/// The rows a conversion takes, in turn: `order` (checked against `n_rows`) or all of them.
fn taken_rows(n_rows: usize, order: Option<&[usize]>) -> Result<Cow<'_, [usize]>> {
    match order {
        None => Ok(Cow::Owned((0..n_rows).collect())),
        Some(order) if order.iter().all(|&r| r < n_rows) => Ok(Cow::Borrowed(order)),
        Some(_) => Err(Error::invalid_input(
            "liblinear rows: a row order past the last row",
        )),
    }
}

/// liblinear's coordinate order: the rows of positive weight, grouped by label in
/// ascending order, in input order within a label (`train` numbers its coordinates so).
/// Rows converted in this order ([`Rows::from_dense_in`]), with `y` and `sample_weight`
/// taken in it too, train to the same bits without `train`'s own regrouping copy.
pub fn grouped_order(y: &[i32], sample_weight: &[f64]) -> Vec<usize> {
    let n = y.len().min(sample_weight.len());
    let mut order: Vec<usize> = (0..n).filter(|&r| sample_weight[r] > 0.0).collect();
    order.sort_by_key(|&r| y[r]); // stable
    order
}

/// liblinear numbers its columns with an `int`, the bias column included.
fn check_columns(n_features: usize) -> Result<()> {
    if n_features >= i32::MAX as usize {
        return Err(Error::invalid_input(format!(
            "liblinear rows: {n_features} features, more than liblinear's int can number"
        )));
    }
    Ok(())
}

impl Rows<'_> {
    /// The rows of a dense row-major `n_rows x n_features` matrix: non-zero entries only
    /// (liblinear's conversion skips zeros), then the bias entry when `bias > 0`.
    pub fn from_dense(
        x: &[f64],
        n_rows: usize,
        n_features: usize,
        bias: f64,
    ) -> Result<Rows<'static>> {
        Self::from_dense_in(x, n_rows, n_features, bias, None)
    }

    /// [`from_dense`](Self::from_dense) with the rows taken in `order` (row `order[i]` of
    /// `x` becomes row `i`; rows left out are left out) when given.
    pub fn from_dense_in(
        x: &[f64],
        n_rows: usize,
        n_features: usize,
        bias: f64,
        order: Option<&[usize]>,
    ) -> Result<Rows<'static>> {
        check_columns(n_features)?;
        if x.len() != n_rows * n_features {
            return Err(Error::dimension_mismatch(n_rows * n_features, x.len()));
        }
        let taken = taken_rows(n_rows, order)?;
        let has_bias = bias > 0.0;
        let mut start = Vec::with_capacity(taken.len() + 1);
        let mut index = Vec::new();
        let mut value = Vec::new();
        start.push(0);
        for &r in taken.iter() {
            for (c, &v) in x[r * n_features..(r + 1) * n_features].iter().enumerate() {
                if v != 0.0 {
                    index.push(c as u32);
                    value.push(v);
                }
            }
            if has_bias {
                index.push(n_features as u32);
                value.push(bias);
            }
            start.push(index.len());
        }
        let n_cols = n_features + usize::from(has_bias);
        // each row holds at most its n_cols distinct columns, ascending
        let full = value.len() == taken.len() * n_cols;
        Ok(Rows {
            start,
            index,
            value: value.into(),
            n_cols,
            full,
        })
    }

    /// The rows of a CSR matrix (`indptr`, `indices`, `data`): every stored entry in stored
    /// order, then the bias entry when `bias > 0`.
    pub fn from_csr(
        indptr: &[usize],
        indices: &[usize],
        data: &[f64],
        n_features: usize,
        bias: f64,
    ) -> Result<Rows<'static>> {
        Self::from_csr_in(indptr, indices, data, n_features, bias, None)
    }

    /// [`from_csr`](Self::from_csr) with the rows taken in `order` when given.
    pub fn from_csr_in(
        indptr: &[usize],
        indices: &[usize],
        data: &[f64],
        n_features: usize,
        bias: f64,
        order: Option<&[usize]>,
    ) -> Result<Rows<'static>> {
        let n_rows = indptr.len().saturating_sub(1);
        let bad = indptr.is_empty()
            || indptr[0] != 0
            || indptr.windows(2).any(|p| p[0] > p[1])
            || indptr[n_rows] > indices.len()
            || indices.len() != data.len()
            || indices.iter().any(|&c| c >= n_features);
        if bad {
            return Err(Error::invalid_input("liblinear rows: malformed CSR matrix"));
        }
        check_columns(n_features)?;
        let taken = taken_rows(n_rows, order)?;
        let has_bias = bias > 0.0;
        let entries: usize = taken.iter().map(|&r| indptr[r + 1] - indptr[r]).sum();
        let mut start = Vec::with_capacity(taken.len() + 1);
        let mut index = Vec::with_capacity(entries + taken.len());
        let mut value = Vec::with_capacity(entries + taken.len());
        start.push(0);
        for &r in taken.iter() {
            index.extend(indices[indptr[r]..indptr[r + 1]].iter().map(|&c| c as u32));
            value.extend_from_slice(&data[indptr[r]..indptr[r + 1]]);
            if has_bias {
                index.push(n_features as u32);
                value.push(bias);
            }
            start.push(index.len());
        }
        let n_cols = n_features + usize::from(has_bias);
        let full = index.len() == taken.len() * n_cols
            && index
                .chunks(n_cols.max(1))
                .all(|row| (row.iter().enumerate()).all(|(c, &f)| f as usize == c));
        Ok(Rows {
            start,
            index,
            value: value.into(),
            n_cols,
            full,
        })
    }

    pub fn n_rows(&self) -> usize {
        self.start.len() - 1
    }

    /// Stored entries over every row, bias entries included.
    pub fn n_entries(&self) -> usize {
        self.index.len()
    }

    /// These rows in the order `order` (row `order[i]` becomes row `i`).
    fn reordered(&self, order: &[usize]) -> Rows<'static> {
        let mut start = Vec::with_capacity(order.len() + 1);
        let total: usize = order
            .iter()
            .map(|&r| self.start[r + 1] - self.start[r])
            .sum();
        let mut index = Vec::with_capacity(total);
        let mut value = Vec::with_capacity(total);
        start.push(0);
        for &r in order {
            let (idx, val) = self.row(r);
            index.extend_from_slice(idx);
            value.extend_from_slice(val);
            start.push(index.len());
        }
        Rows {
            start,
            index,
            value: value.into(),
            n_cols: self.n_cols,
            full: self.full,
        }
    }

    /// Row `r`'s columns and values.
    pub fn row(&self, r: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.start[r], self.start[r + 1]);
        (&self.index[a..b], &self.value[a..b])
    }
}

/// One binary problem of a fit: the rows in liblinear's grouped order (`order[i]` is the
/// row of coordinate `i`), which side each is on, and the costs.
pub struct SubProblem<'a> {
    pub order: &'a [usize],
    pub positive: Vec<bool>,
    pub weight: &'a [f64],
    pub cost_positive: f64,
    pub cost_negative: f64,
}

impl SubProblem<'_> {
    /// Coordinate `i`'s C: its sample weight times its side's C.
    pub fn cost(&self, i: usize) -> f64 {
        let side = if self.positive[i] {
            self.cost_positive
        } else {
            self.cost_negative
        };
        self.weight[i] * side
    }

    /// Coordinate `i`'s label as liblinear's solvers read it: +1 or -1.
    pub fn sign(&self, i: usize) -> f64 {
        if self.positive[i] {
            1.0
        } else {
            -1.0
        }
    }

    /// `x_i . v` over coordinate `i`'s stored entries, in their order.
    pub fn row_dot(&self, rows: &Rows<'_>, i: usize, v: &[f64]) -> f64 {
        let (idx, val) = rows.row(self.order[i]);
        let mut acc = 0.0;
        for (f, &x) in idx.iter().map(|&f| f as usize).zip(val) {
            acc += v[f] * x;
        }
        acc
    }
}

/// A sub-problem's columns, as liblinear transposes its rows for the primal coordinate
/// descents: column `j` lists `(coordinate, value)` in coordinate order, the value `x_ij`
/// or, `signed`, `y_i x_ij` (the L1 squared hinge keeps its labels folded in).
pub(crate) struct Columns {
    start: Vec<usize>,
    row: Vec<usize>,
    value: Vec<f64>,
}

impl Columns {
    pub(crate) fn new(rows: &Rows<'_>, sub: &SubProblem<'_>, signed: bool) -> Self {
        let n = rows.n_cols;
        let mut count = vec![0usize; n + 1];
        for &r in sub.order {
            for &f in rows.row(r).0 {
                count[f as usize + 1] += 1;
            }
        }
        for j in 0..n {
            count[j + 1] += count[j];
        }
        let start = count.clone();
        let total = start[n];
        let mut row = vec![0; total];
        let mut value = vec![0.0; total];
        let mut fill = count;
        for (i, &r) in sub.order.iter().enumerate() {
            let sign = if signed { sub.sign(i) } else { 1.0 };
            let (idx, val) = rows.row(r);
            for (f, &v) in idx.iter().map(|&f| f as usize).zip(val) {
                row[fill[f]] = i;
                value[fill[f]] = v * sign;
                fill[f] += 1;
            }
        }
        Self { start, row, value }
    }

    /// Column `j`'s coordinates and values.
    pub(crate) fn column(&self, j: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.start[j], self.start[j + 1]);
        (&self.row[a..b], &self.value[a..b])
    }
}

/// liblinear's L1 optimality violation of a coordinate at `w` with loss derivative `g`
/// (`g + 1` and `g - 1` the one-sided derivatives of the loss plus `|w|`), or `None` where
/// `w` is 0 and both lie beyond `shrink_bound` on their sides: the coordinate then stays 0
/// and liblinear shrinks it out of the active set.
pub(crate) fn l1_violation(w: f64, g: f64, shrink_bound: f64) -> Option<f64> {
    let (gp, gn) = (g + 1.0, g - 1.0);
    if w == 0.0 {
        if gp < 0.0 {
            Some(-gp)
        } else if gn > 0.0 {
            Some(gn)
        } else if gp > shrink_bound && gn < -shrink_bound {
            None
        } else {
            Some(0.0)
        }
    } else if w > 0.0 {
        Some(gp.abs())
    } else {
        Some(gn.abs())
    }
}

/// liblinear's `max`: the first argument unless the second is larger (NaN-blind, as its
/// template compares).
pub(crate) fn larger(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// liblinear's `min`: the first argument unless the second is smaller.
pub(crate) fn smaller(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// The liblinear solvers replicated, by scikit-learn's solver numbers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Solver {
    /// 0: L2-regularised logistic regression, primal, by TRON.
    LogisticPrimal,
    /// 2: L2-regularised squared hinge, primal, by TRON.
    SquaredHingePrimal,
    /// 1 and 3: L2-regularised squared hinge or hinge, dual coordinate descent.
    DualCoordinateDescent(HingeLoss),
    /// 4: Crammer and Singer's multi-class SVM, dual coordinate descent over all classes.
    CrammerSinger,
    /// 5: L1-regularised squared hinge, primal coordinate descent.
    L1SquaredHinge,
    /// 6: L1-regularised logistic regression, newGLMNET (Newton with coordinate descent).
    L1Logistic,
    /// 7: L2-regularised logistic regression, dual coordinate descent.
    LogisticDual,
}

impl Solver {
    /// The solver of liblinear's number, if replicated.
    pub fn from_liblinear(number: i32) -> Option<Self> {
        match number {
            0 => Some(Self::LogisticPrimal),
            1 => Some(Self::DualCoordinateDescent(HingeLoss::SquaredHinge)),
            2 => Some(Self::SquaredHingePrimal),
            3 => Some(Self::DualCoordinateDescent(HingeLoss::Hinge)),
            4 => Some(Self::CrammerSinger),
            5 => Some(Self::L1SquaredHinge),
            6 => Some(Self::L1Logistic),
            7 => Some(Self::LogisticDual),
            _ => None,
        }
    }
}

/// A fit's settings, as scikit-learn passes them to liblinear.
pub struct TrainSettings<'a> {
    pub solver: Solver,
    /// `tol`
    pub eps: f64,
    pub c: f64,
    /// per class code (`0..n_classes`), the factor on C; empty for none
    pub class_weight: &'a [f64],
    pub max_iter: i32,
    pub seed: u32,
}

/// What liblinear's `train` leaves: the class codes present (ascending), the weights as
/// one row per trained problem (one for two classes, else one per class) over the columns
/// (bias last), and each problem's iteration count.
pub struct Trained {
    pub labels: Vec<i32>,
    pub coef: Vec<Vec<f64>>,
    pub n_iter: Vec<i32>,
}

/// liblinear's `train` for the replicated solvers: `y` holds class codes, `sample_weight`
/// one weight per row.
pub fn train(
    rows: &Rows<'_>,
    y: &[i32],
    sample_weight: &[f64],
    settings: &TrainSettings<'_>,
) -> Result<Trained> {
    let n = rows.n_rows();
    if y.len() != n || sample_weight.len() != n {
        return Err(Error::invalid_input(
            "liblinear: y and sample_weight need one entry per row",
        ));
    }
    let positive = |v: f64| v > 0.0; // false for NaN too
    if !positive(settings.eps) || !positive(settings.c) {
        return Err(Error::invalid_parameter("eps / C", "must be positive"));
    }
    // samples of weight <= 0 leave the problem before anything else
    let mut labels: Vec<i32> = (0..n)
        .filter(|&r| sample_weight[r] > 0.0)
        .map(|r| y[r])
        .collect();
    labels.sort_unstable();
    labels.dedup();
    if labels.len() < 2 {
        return Err(Error::invalid_input(
            "liblinear: fewer than two classes among the samples of positive weight",
        ));
    }
    let class_of = |label: i32| labels.binary_search(&label).unwrap_or(0);
    // grouped by class, input order within a class
    let mut order = grouped_order(y, sample_weight);
    let grouped_class: Vec<usize> = order.iter().map(|&r| class_of(y[r])).collect();
    let weight: Vec<f64> = order.iter().map(|&r| sample_weight[r]).collect();
    // The solvers visit the rows in grouped order, over and over: a copy in that order
    // streams from memory in sequence (a quarter faster on problems past the caches than
    // following `order` through the input), the same values in the same sums.
    let grouped_rows;
    let in_place = order.len() == n && order.iter().enumerate().all(|(i, &r)| i == r);
    let rows = if in_place {
        rows
    } else {
        grouped_rows = rows.reordered(&order);
        order = (0..order.len()).collect();
        &grouped_rows
    };
    let weighted_c: Vec<f64> = labels
        .iter()
        .map(|&label| {
            let factor = usize::try_from(label)
                .ok()
                .and_then(|k| settings.class_weight.get(k));
            factor.map_or(settings.c, |f| settings.c * f)
        })
        .collect();

    let sub_problem = |positive_class: usize, cost_positive: f64, cost_negative: f64| SubProblem {
        order: &order,
        positive: grouped_class.iter().map(|&k| k == positive_class).collect(),
        weight: &weight,
        cost_positive,
        cost_negative,
    };
    // the primal solvers' tolerance scales with the smaller side's share
    let primal_tol = |sub: &SubProblem<'_>| {
        let pos = sub.positive.iter().filter(|&&p| p).count();
        let l = sub.positive.len();
        settings.eps * (pos.min(l - pos).max(1) as f64) / l as f64
    };
    // TRON draws nothing: its problems may run in any order, side by side
    let solve_primal = |positive_class: usize, cost_positive: f64, cost_negative: f64| {
        let sub = sub_problem(positive_class, cost_positive, cost_negative);
        let mut w = vec![0.0; rows.n_cols];
        let iters = if settings.solver == Solver::LogisticPrimal {
            let mut objective = tron::LogisticPrimal::new(rows, &sub);
            tron::minimise(&mut objective, &mut w, primal_tol(&sub), settings.max_iter)
        } else {
            let mut objective = tron::SquaredHingePrimal::new(rows, &sub);
            tron::minimise(&mut objective, &mut w, primal_tol(&sub), settings.max_iter)
        };
        (w, iters)
    };
    // the coordinate descents draw their orders from the one generator, problem after problem
    let mut rng = MersenneTwister::new(settings.seed);
    let mut solve_drawn = |positive_class: usize, cost_positive: f64, cost_negative: f64| {
        let sub = sub_problem(positive_class, cost_positive, cost_negative);
        let mut w = vec![0.0; rows.n_cols];
        let iters = match settings.solver {
            Solver::DualCoordinateDescent(loss) => dual_cd::solve(
                rows,
                &sub,
                &mut w,
                settings.eps,
                loss,
                settings.max_iter,
                &mut rng,
            ),
            Solver::L1SquaredHinge => l1_cd::solve(
                rows,
                &sub,
                &mut w,
                primal_tol(&sub),
                settings.max_iter,
                &mut rng,
            ),
            Solver::L1Logistic => l1_logistic::solve(
                rows,
                &sub,
                &mut w,
                primal_tol(&sub),
                settings.max_iter,
                &mut rng,
            ),
            Solver::LogisticDual => logistic_dual::solve(
                rows,
                &sub,
                &mut w,
                settings.eps,
                settings.max_iter,
                &mut rng,
            ),
            // solved by `solve_primal`, or jointly over all classes below
            Solver::LogisticPrimal | Solver::SquaredHingePrimal | Solver::CrammerSinger => {
                unreachable!("not a drawn binary solver")
            }
        };
        (w, iters)
    };
    let primal = matches!(
        settings.solver,
        Solver::LogisticPrimal | Solver::SquaredHingePrimal
    );

    let mut coef = Vec::new();
    let mut n_iter = Vec::new();
    if settings.solver == Solver::CrammerSinger {
        // one problem over every class, each sample's C its class's weighted C times its weight
        let cost: Vec<f64> = grouped_class
            .iter()
            .zip(&weight)
            .map(|(&k, &w)| w * weighted_c[k])
            .collect();
        let (w, it) = crammer_singer::solve(
            rows,
            &order,
            &grouped_class,
            labels.len(),
            &cost,
            settings.eps,
            &mut rng,
        );
        coef = w;
        n_iter.push(it);
    } else if labels.len() == 2 {
        let (w, it) = if primal {
            solve_primal(1, weighted_c[1], weighted_c[0])
        } else {
            solve_drawn(1, weighted_c[1], weighted_c[0])
        };
        coef.push(w);
        n_iter.push(it);
    } else {
        // one-vs-rest: class k positive with its weighted C against the rest with the bare C
        let work = rows.n_entries().saturating_mul(labels.len());
        let solved: Vec<(Vec<f64>, i32)> =
            if primal && SIDE_BY_SIDE_MIN_ENTRIES.allows_parallel(work) {
                (0..labels.len())
                    .into_par_iter()
                    .map(|k| solve_primal(k, weighted_c[k], settings.c))
                    .collect()
            } else if primal {
                (0..labels.len())
                    .map(|k| solve_primal(k, weighted_c[k], settings.c))
                    .collect()
            } else {
                (0..labels.len())
                    .map(|k| solve_drawn(k, weighted_c[k], settings.c))
                    .collect()
            };
        for (w, it) in solved {
            coef.push(w);
            n_iter.push(it);
        }
    }
    Ok(Trained {
        labels,
        coef,
        n_iter,
    })
}

/// One problem trained on two inputs of one layout (`second`: the same rows with their
/// values moved, the doors' rounding probe of TRON), side by side when
/// [`SIDE_BY_SIDE_MIN_ENTRIES`] allows: each is [`train`] as it would run alone.
pub fn train_pair(
    first: &Rows<'_>,
    second: &Rows<'_>,
    y: &[i32],
    sample_weight: &[f64],
    settings: &TrainSettings<'_>,
) -> (Result<Trained>, Result<Trained>) {
    let work = first.n_entries().saturating_add(second.n_entries());
    let one = || train(first, y, sample_weight, settings);
    let other = || train(second, y, sample_weight, settings);
    if SIDE_BY_SIDE_MIN_ENTRIES.allows_parallel(work) {
        rayon::join(one, other)
    } else {
        (one(), other())
    }
}
