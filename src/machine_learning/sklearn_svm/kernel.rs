//! The kernel values libsvm's C-SVC solver reads: each entry of a `Q` row is
//! `y_a y_b K(a, b)` formed in double precision and then rounded to float32 (libsvm's
//! `Qfloat`), the diagonal `QD` stays double.

use ndarray::ArrayView2;

/// A kernel and its parameters as scikit-learn hands them to libsvm (`gamma` resolved,
/// `degree` an int).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kernel {
    /// `<x, z>`
    Linear,
    /// `(gamma <x, z> + coef0)^degree`, the power by repeated squaring.
    Poly { degree: i32, gamma: f64, coef0: f64 },
    /// `exp(-gamma (|x|^2 + |z|^2 - 2 <x, z>))`
    Rbf { gamma: f64 },
    /// `tanh(gamma <x, z> + coef0)`
    Sigmoid { gamma: f64, coef0: f64 },
    /// `x[a][b]`: the input is the Gram matrix itself, indexed by original sample numbers.
    Precomputed,
}

/// `base^times` by binary powering, libsvm's `powi` (its product order fixes the bits).
fn powi(base: f64, times: i32) -> f64 {
    let (mut square, mut product) = (base, 1.0);
    let mut t = times;
    while t > 0 {
        if t % 2 == 1 {
            product *= square;
        }
        square *= square;
        t /= 2;
    }
    product
}

/// A sequential dot product. libsvm's dense build calls BLAS `ddot`, whose blocked (and
/// FMA) sums agree with this one only to rounding; its sparse build sums the nonzero
/// products in index order, which this sum equals exactly (the zero products add nothing).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sum = 0.0;
    for (u, v) in a.iter().zip(b) {
        sum += u * v;
    }
    sum
}

/// The kernel over the rows of the input `x` (samples by features, or the square Gram matrix
/// when precomputed), with the squared norms the RBF kernel reuses.
pub(crate) struct Gram<'a> {
    /// The input in row-major order, `n_cols` values a row.
    data: &'a [f64],
    n_cols: usize,
    kernel: Kernel,
    squared_norms: Vec<f64>,
}

impl<'a> Gram<'a> {
    /// The kernel over `x`'s rows, or `None` when `x` is not in standard (row-major,
    /// contiguous) layout.
    pub(crate) fn new(x: ArrayView2<'a, f64>, kernel: Kernel) -> Option<Self> {
        let n_cols = x.ncols();
        let data = x.to_slice()?;
        let mut gram = Self {
            data,
            n_cols,
            kernel,
            squared_norms: Vec::new(),
        };
        if let Kernel::Rbf { .. } = kernel {
            gram.squared_norms = (0..x.nrows())
                .map(|a| dot(gram.row(a), gram.row(a)))
                .collect();
        }
        Some(gram)
    }

    fn row(&self, a: usize) -> &'a [f64] {
        &self.data[a * self.n_cols..(a + 1) * self.n_cols]
    }

    /// `K(a, b)` for the input rows `a` and `b`, with libsvm's operation order.
    pub(crate) fn value(&self, a: usize, b: usize) -> f64 {
        match self.kernel {
            Kernel::Precomputed => self.data[a * self.n_cols + b],
            _ => self.kernel_of_dot(a, b, dot(self.row(a), self.row(b))),
        }
    }

    /// `K(a, b)` as libsvm evaluates it for a prediction (its `k_function`): the RBF
    /// kernel then sums the squared differences in feature order instead of expanding the
    /// norms; the other kernels are [`value`](Self::value)'s.
    pub(crate) fn predict_value(&self, a: usize, b: usize) -> f64 {
        match self.kernel {
            Kernel::Rbf { gamma } => {
                let mut sum = 0.0;
                for (u, v) in self.row(a).iter().zip(self.row(b)) {
                    let d = u - v;
                    sum += d * d;
                }
                (-gamma * sum).exp()
            }
            _ => self.value(a, b),
        }
    }

    /// The kernel value from the dot product `d = <x_a, x_b>`.
    fn kernel_of_dot(&self, a: usize, b: usize, d: f64) -> f64 {
        match self.kernel {
            Kernel::Precomputed => self.data[a * self.n_cols + b],
            Kernel::Linear => d,
            Kernel::Poly {
                degree,
                gamma,
                coef0,
            } => powi(gamma * d + coef0, degree),
            Kernel::Rbf { gamma } => {
                (-gamma * (self.squared_norms[a] + self.squared_norms[b] - 2.0 * d)).exp()
            }
            Kernel::Sigmoid { gamma, coef0 } => (gamma * d + coef0).tanh(),
        }
    }

    /// `out[t] = K(a, others[t])`, the same values as [`value`](Self::value): four dot
    /// products advance together (each still summed in feature order), which keeps the
    /// processor's adders busy without changing a bit.
    pub(crate) fn values(&self, a: usize, others: &[usize], out: &mut [f64]) {
        if self.kernel == Kernel::Precomputed {
            for (o, &b) in out.iter_mut().zip(others) {
                *o = self.value(a, b);
            }
            return;
        }
        let xa = self.row(a);
        let mut blocks = others.chunks_exact(4);
        let mut outs = out.chunks_exact_mut(4);
        for (bs, os) in (&mut blocks).zip(&mut outs) {
            let rows = [
                self.row(bs[0]),
                self.row(bs[1]),
                self.row(bs[2]),
                self.row(bs[3]),
            ];
            let mut sums = [0.0f64; 4];
            for (k, &u) in xa.iter().enumerate() {
                for (sum, row) in sums.iter_mut().zip(&rows) {
                    *sum += u * row[k];
                }
            }
            for t in 0..4 {
                os[t] = self.kernel_of_dot(a, bs[t], sums[t]);
            }
        }
        for (o, &b) in outs.into_remainder().iter_mut().zip(blocks.remainder()) {
            *o = self.value(a, b);
        }
    }
}

/// The `Q` rows of one binary sub-problem, computed on first use and kept (least recently
/// used rows dropped beyond a byte budget). Samples are numbered in the sub-problem's own
/// order; `rows[s]` maps one to its input row. A row is indexed by sample number, so the
/// solver's reordering of its working arrays never moves cached entries.
pub(crate) struct QRows<'g, 'a> {
    gram: &'g Gram<'a>,
    input_rows: Vec<usize>,
    y: Vec<i8>,
    diagonal: Vec<f64>,
    cached: Vec<Option<Box<[f32]>>>,
    last_use: Vec<u64>,
    clock: u64,
    n_cached: usize,
    max_cached: usize,
}

impl<'g, 'a> QRows<'g, 'a> {
    /// `input_rows[s]` is sample `s`'s input row, `y[s]` its sign; at most `budget_bytes` of
    /// rows are kept (never fewer than two: the solver reads two rows at once).
    pub(crate) fn new(
        gram: &'g Gram<'a>,
        input_rows: Vec<usize>,
        y: Vec<i8>,
        budget_bytes: usize,
    ) -> Self {
        let l = input_rows.len();
        let diagonal = input_rows.iter().map(|&r| gram.value(r, r)).collect();
        let row_bytes = (l * std::mem::size_of::<f32>()).max(1);
        Self {
            gram,
            input_rows,
            y,
            diagonal,
            cached: vec![None; l],
            last_use: vec![0; l],
            clock: 0,
            n_cached: 0,
            max_cached: (budget_bytes / row_bytes).max(2),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.input_rows.len()
    }

    /// `QD[s] = K(s, s)` in double precision (the sign product is one).
    pub(crate) fn diagonal(&self, s: usize) -> f64 {
        self.diagonal[s]
    }

    /// Makes sample `s`'s row available, computing it if needed.
    pub(crate) fn load(&mut self, s: usize) {
        self.clock += 1;
        self.last_use[s] = self.clock;
        if self.cached[s].is_some() {
            return;
        }
        if self.n_cached >= self.max_cached {
            self.evict_oldest(s);
        }
        let (ra, ya) = (self.input_rows[s], f64::from(self.y[s]));
        let mut values = vec![0.0; self.input_rows.len()];
        self.gram.values(ra, &self.input_rows, &mut values);
        let row: Box<[f32]> = values
            .iter()
            .zip(&self.y)
            .map(|(&k, &yb)| (ya * f64::from(yb) * k) as f32)
            .collect();
        self.cached[s] = Some(row);
        self.n_cached += 1;
    }

    fn evict_oldest(&mut self, keep: usize) {
        let oldest = (0..self.cached.len())
            .filter(|&t| t != keep && self.cached[t].is_some())
            .min_by_key(|&t| self.last_use[t]);
        if let Some(t) = oldest {
            self.cached[t] = None;
            self.n_cached -= 1;
        }
    }

    /// Sample `s`'s row, which [`load`](Self::load) made available.
    pub(crate) fn row(&self, s: usize) -> &[f32] {
        self.cached[s].as_deref().expect("row loaded before use")
    }
}
