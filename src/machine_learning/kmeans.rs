//! KMeans: Lloyd's algorithm with k-means++ or random seeding, as in scikit-learn.
//!
//! Each Lloyd pass is one blocked fold over the rows: a block's squared distances to the
//! centers come from one product ([`distance::nearest_block`]), the arg-min scan labels its
//! rows, and the block's per-cluster sums and counts are its partial; partials combine in
//! block order. The pass forks onto rayon when [`SCAN_F64`] allows `rows * clusters *
//! features`, and its bits do not depend on the path. Like scikit-learn, the data are
//! centered on their column means for the fit (the centers are shifted back after), the
//! tolerance is relative to the mean feature variance, a run stops on unchanged labels or a
//! total squared center shift within the tolerance, empty clusters take the points farthest
//! from their centers, and the best of `n_init` runs (lowest inertia) is kept.
//!
//! A run also records whether a decision lay within rounding of its threshold
//! ([`KMeans::rounding_decided`]): a row's runner-up center within rounding of its nearest
//! (the scan reports each row's margin), the stop at the tolerance, an empty cluster
//! relocated. Another implementation of the same algorithm (scikit-learn's, which the
//! Python door must agree with) may decide those otherwise.

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::validation::{
    check_features, check_n_features, require_data, require_data_width, require_non_negative,
    require_nonzero, require_positive,
};
use crate::math::distance::{
    self, nearest_block, row_sq_norms, Metric, NEAREST_BLOCK_ROWS, SCAN_F64,
};
use crate::math::{matmul, reduction};
use crate::persistence::Persist;
use ndarray::{s, Array1, Array2, ArrayRef2, ArrayView1, ArrayView2, Axis, ShapeBuilder};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// How the initial centers are chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum KMeansInit {
    /// Greedy k-means++ (`2 + ln k` candidates per center, the one lowering the potential
    /// most is kept), as scikit-learn's default.
    KMeansPlusPlus,
    /// `n_clusters` distinct samples drawn at random.
    Random,
    /// Explicit initial centers (`n_clusters x n_features`); runs once.
    Centers(Array2<f64>),
}

/// Number of runs with different seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NInit {
    /// scikit-learn >= 1.4: one run for k-means++ (and explicit centers), ten for random.
    Auto,
    /// This many runs (at least one); explicit centers always run once.
    Runs(usize),
}

/// K-means clustering with scikit-learn-like hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KMeans {
    pub n_clusters: usize,
    pub init: KMeansInit,
    pub n_init: NInit,
    pub max_iter: usize,
    pub tol: f64,
    pub random_state: Option<u64>,
    /// Fit on column-centered data (scikit-learn's numerics); the original-API constructor
    /// turns it off so each center is the exact mean of its points.
    pub center_data: bool,
    centers: Option<Array2<f64>>,
    labels: Option<Array1<isize>>,
    inertia: f64,
    n_iter: usize,
    /// The kept run made a decision within rounding (see [`KMeans::rounding_decided`]). A
    /// diagnostic of the fit itself, not saved: models saved before it existed still load
    /// (the saved form has no field defaults), and a loaded model reports `false`.
    #[serde(skip)]
    narrow: bool,
}

impl Default for KMeans {
    /// The original's defaults: `new(8, 300, 1e-4)`.
    fn default() -> Self {
        Self::new(8, 300, 1e-4).expect("valid defaults")
    }
}

/// One run's outcome.
struct Run {
    centers: Array2<f64>,
    labels: Vec<usize>,
    inertia: f64,
    n_iter: usize,
    /// Some decision of the run (an assignment, the stop) lay within rounding.
    narrow: bool,
}

/// The per-cluster sums and counts of one Lloyd pass's assignment, and whether any row's
/// nearest center stood within rounding of its runner-up.
struct Tally {
    sums: Array2<f64>,
    counts: Vec<usize>,
    narrow: bool,
}

impl KMeans {
    /// `n_clusters` clusters, k-means++, ten runs, 300 iterations, `tol = 1e-4`, centered
    /// data; unvalidated (the checks run at `fit`, scikit-learn's convention).
    pub fn builder(n_clusters: usize) -> Self {
        Self {
            n_clusters,
            init: KMeansInit::KMeansPlusPlus,
            n_init: NInit::Runs(10),
            max_iter: 300,
            tol: 1e-4,
            random_state: None,
            center_data: true,
            centers: None,
            labels: None,
            inertia: 0.0,
            n_iter: 0,
            narrow: false,
        }
    }

    crate::accessors::builder_setters! {
        with_init(init: KMeansInit),
        with_n_init_mode(n_init: NInit),
        with_max_iter(max_iter: usize),
        with_tol(tol: f64),
        with_seed(random_state: Option<u64>),
        with_random_state(random_state: Some(u64)),
    }

    crate::accessors::fitted_getters! {
        self once centers;
        /// Fitted centers (`cluster_centers_`), `n_clusters x n_features`.
        cluster_centers -> &centers: Array2<f64>,
        /// Cluster of each training sample (`labels_`).
        labels -> &labels: Array1<isize>,
        /// Sum of squared distances of the training samples to their centers (`inertia_`).
        inertia -> inertia: f64,
        /// Lloyd iterations of the kept run (`n_iter_`).
        n_iter -> n_iter: usize,
        /// Whether the kept run made a decision within rounding of its threshold: a
        /// sample's nearest center within rounding of its runner-up (another summation
        /// order of the scores, or of the centers' sums, could pick the other), the stop
        /// within rounding of the tolerance, or an empty cluster relocated (the farthest
        /// samples by distance). Another implementation of the same algorithm, such as
        /// scikit-learn's, can then end elsewhere.
        rounding_decided -> narrow: bool,
    }

    /// Runs the fit will make.
    pub fn effective_n_init(&self) -> usize {
        match (&self.init, self.n_init) {
            (KMeansInit::Centers(_), _) => 1,
            (_, NInit::Runs(r)) => r,
            (KMeansInit::KMeansPlusPlus, NInit::Auto) => 1,
            (KMeansInit::Random, NInit::Auto) => 10,
        }
    }

    /// The one check of KMeans's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        require_nonzero("n_clusters", self.n_clusters)?;
        require_nonzero("max_iter", self.max_iter)?;
        if let NInit::Runs(0) = self.n_init {
            return Err(Error::invalid_parameter(
                "n_init",
                "must be at least 1 or 'auto', got 0",
            ));
        }
        require_non_negative("tol", self.tol)
    }

    /// What `x` must satisfy for these parameters.
    fn check_data(&self, x: &ArrayView2<f64>) -> Result<()> {
        check_features(x, "X")?;
        Metric::Euclidean.check_range(x, "X")?;
        if x.nrows() < self.n_clusters {
            return Err(Error::invalid_input(format!(
                "n_samples={} should be >= n_clusters={}",
                x.nrows(),
                self.n_clusters
            )));
        }
        if let KMeansInit::Centers(c) = &self.init {
            if c.dim() != (self.n_clusters, x.ncols()) {
                return Err(Error::invalid_input(format!(
                    "the init centers have shape {:?}, expected ({}, {}) (n_clusters, n_features)",
                    c.dim(),
                    self.n_clusters,
                    x.ncols()
                )));
            }
            check_features(&c.view(), "init centers")?;
        }
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) with scikit-learn's checks and messages.
    pub fn fit_checked(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        self.check_params()?;
        self.check_data(&x)?;
        let (n, d) = x.dim();
        let stats = reduction::column_moments(x);
        let mean = if self.center_data {
            Array1::from_iter(stats.iter().map(|m| m.mean))
        } else {
            Array1::zeros(d)
        };
        let tol = if self.tol == 0.0 {
            0.0
        } else {
            stats.iter().map(|m| m.variance()).sum::<f64>() / d as f64 * self.tol
        };
        // Column-major, so the nearest-center scan reads each feature as one contiguous lane
        // source without transposing every block on every pass.
        let mut xc = Array2::<f64>::zeros((n, d).f());
        ndarray::Zip::from(&mut xc)
            .and(&x)
            .and_broadcast(&mean)
            .for_each(|c, &v, &m| *c = v - m);
        let x_norms = row_sq_norms(xc.view());
        // How another computation rounds: a cluster's sum in another order (n terms, each
        // at most the largest coordinate) moves a center's coordinate by up to
        // `rounding.center`; scores of uncentered data (as scikit-learn computes for sparse
        // input) carry the norms of the mean too, |x|^2 <= 2 |x - m|^2 + 2 |m|^2.
        let rounding = Rounding {
            center: n as f64 * f64::EPSILON * crate::validation::max_abs(&x.view()),
            mean_sq: mean.dot(&mean),
        };
        let mut rng = crate::random::rng_from(self.random_state);
        let mut best: Option<Run> = None;
        for _ in 0..self.effective_n_init() {
            let init = match &self.init {
                KMeansInit::KMeansPlusPlus => {
                    kmeans_plusplus(xc.view(), x_norms.view(), self.n_clusters, &mut rng)
                }
                KMeansInit::Random => {
                    let picks = rand::seq::index::sample(&mut rng, n, self.n_clusters).into_vec();
                    xc.select(Axis(0), &picks)
                }
                KMeansInit::Centers(c) => c - &mean,
            };
            let run = lloyd(
                xc.view(),
                x_norms.view(),
                init,
                self.max_iter,
                tol,
                rounding,
            );
            if best.as_ref().is_none_or(|b| run.inertia < b.inertia) {
                best = Some(run);
            }
        }
        let best = best.expect("at least one run");
        self.centers = Some(best.centers + &mean);
        self.labels = Some(best.labels.into_iter().map(|l| l as isize).collect());
        self.inertia = best.inertia;
        self.n_iter = best.n_iter;
        self.narrow = best.narrow;
        Ok(self)
    }

    fn fitted_centers(&self, x: &ArrayView2<f64>) -> Result<&Array2<f64>> {
        let centers = fitted_state(&self.centers, "KMeans")?;
        check_n_features(x, centers.ncols(), "KMeans")?;
        Metric::Euclidean.check_range(x, "X")?;
        Ok(centers)
    }

    /// Index of the closest center for each row of `x` (scikit-learn's checks).
    pub fn predict_checked(&self, x: &ArrayRef2<f64>) -> Result<Array1<usize>> {
        let x = x.view();
        let centers = self.fitted_centers(&x)?;
        Ok(Array1::from(distance::nearest_rows(x, centers.view())?.0))
    }

    /// Euclidean distances of every row of `x` to every center (`n_samples x n_clusters`).
    pub fn transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let x = x.view();
        let centers = self.fitted_centers(&x)?;
        distance::pairwise(x, centers.view(), distance::Metric::Euclidean)
    }

    /// Fit, then return the distances of the training rows to the centers.
    pub fn fit_transform(&mut self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.fit_checked(x)?;
        self.transform(x)
    }

    /// Opposite of the inertia of `x` against the fitted centers (higher is better).
    pub fn score(&self, x: &ArrayRef2<f64>) -> Result<f64> {
        let x = x.view();
        let centers = self.fitted_centers(&x)?;
        let (labels, _) = distance::nearest_rows(x, centers.view())?;
        Ok(-exact_inertia(x, centers.view(), &labels))
    }
}

crate::machine_learning::path_persistence!(KMeans);
crate::machine_learning::clustering::fit_predict_labels!(KMeans);

impl Persist for KMeans {
    const MODEL_NAME: &'static str = "KMeans";
}

/// The original RustyML API: validated constructor, getters, `isize` labels, its error kinds.
impl KMeans {
    /// `n_clusters` clusters, at most `max_iterations` Lloyd passes per run, stopping once the
    /// centers move less than `tolerance`; ten k-means++ runs. Bad values -> `InvalidParameter`.
    pub fn new(n_clusters: usize, max_iterations: usize, tolerance: f64) -> Result<Self> {
        // the original's tolerance bounds the centers' shift, where 0 would never stop early
        require_positive("tolerance", tolerance)?;
        let mut km = Self::builder(n_clusters).with_max_iter(max_iterations);
        km.tol = tolerance;
        km.center_data = false;
        km.check_params()?;
        Ok(km)
    }

    /// Number of k-means++ restarts (the lowest inertia is kept).
    pub fn with_n_init(mut self, n_init: usize) -> Result<Self> {
        self.n_init = NInit::Runs(n_init);
        self.check_params()?;
        Ok(self)
    }

    crate::accessors::field_getters! {
        get_n_clusters -> n_clusters: usize,
        get_max_iterations -> max_iter: usize,
        get_tolerance -> tol: f64,
        get_random_state -> random_state: Option<u64>,
    }

    pub fn get_n_init(&self) -> usize {
        self.effective_n_init()
    }

    pub fn get_actual_iterations(&self) -> Option<usize> {
        self.n_iter()
    }

    pub fn get_labels(&self) -> Option<&Array1<isize>> {
        self.labels.as_ref()
    }

    pub fn get_inertia(&self) -> Option<f64> {
        self.inertia()
    }

    pub fn get_centroids(&self) -> Option<&Array2<f64>> {
        self.centers.as_ref()
    }

    /// Fit; empty -> `EmptyInput`, NaN/inf -> `NonFinite`, fewer samples than clusters ->
    /// `InvalidInput`.
    pub fn fit(&mut self, data: &ArrayRef2<f64>) -> Result<&mut Self> {
        require_data(&data.view(), "KMeans data")?;
        self.fit_checked(data)
    }

    /// Nearest fitted center of each row.
    pub fn predict(&self, data: &ArrayRef2<f64>) -> Result<Array1<isize>> {
        let centers = self.centers.as_ref().ok_or(Error::NotFitted("KMeans"))?;
        require_data_width(&data.view(), centers.ncols(), "KMeans input")?;
        Ok(self.predict_checked(data)?.mapv(|l| l as isize))
    }
}

crate::machine_learning::data_traits!(KMeans: Fit, Predict -> Array1<isize>);

/// Squared euclidean distances of every row of `rows` to every row of `xc`, through the
/// product, with the squared norms of `xc` precomputed.
fn sq_distances_to(
    xc: ArrayView2<f64>,
    x_norms: ArrayView1<f64>,
    rows: ArrayView2<f64>,
) -> Array2<f64> {
    let r_norms = row_sq_norms(rows);
    let mut d =
        matmul::dot_par(rows, xc.t(), matmul::nested_parallelism()).expect("same feature count");
    distance::finish_squared_euclidean(d.view_mut(), rows, r_norms.view(), xc, x_norms);
    d
}

/// Greedy k-means++ seeding (Arthur & Vassilvitskii, with scikit-learn's local trials).
pub(crate) fn kmeans_plusplus(
    xc: ArrayView2<f64>,
    x_norms: ArrayView1<f64>,
    k: usize,
    rng: &mut ChaCha8Rng,
) -> Array2<f64> {
    let n = xc.nrows();
    let trials = 2 + (k as f64).ln() as usize;
    let mut centers = Array2::zeros((k, xc.ncols()));
    let first = rng.random_range(0..n);
    centers.row_mut(0).assign(&xc.row(first));
    let mut closest = sq_distances_to(xc, x_norms, xc.slice(s![first..first + 1, ..]))
        .row(0)
        .to_owned();
    let mut potential = reduction::sum(closest.view());
    for c in 1..k {
        let targets: Vec<f64> = (0..trials)
            .map(|_| rng.random::<f64>() * potential)
            .collect();
        let mut cumulative = Vec::with_capacity(n);
        let mut acc = 0.0;
        for &v in closest.iter() {
            acc += v;
            cumulative.push(acc);
        }
        // NumPy's searchsorted (side="left"), clipped to the last index.
        let candidates: Vec<usize> = targets
            .iter()
            .map(|&t| cumulative.partition_point(|&c| c < t).min(n - 1))
            .collect();
        let mut dist = sq_distances_to(xc, x_norms, xc.select(Axis(0), &candidates).view());
        let mut best = (f64::INFINITY, 0usize);
        for (t, mut row) in dist.outer_iter_mut().enumerate() {
            ndarray::Zip::from(&mut row)
                .and(&closest)
                .for_each(|d, &c| *d = d.min(c));
            let pot = reduction::sum(row.view());
            if pot < best.0 {
                best = (pot, t);
            }
        }
        potential = best.0;
        closest = dist.row(best.1).to_owned();
        centers.row_mut(c).assign(&xc.row(candidates[best.1]));
    }
    centers
}

/// How far another implementation's computation of a Lloyd run may sit from this one's.
#[derive(Clone, Copy)]
struct Rounding {
    /// The most another summation order moves a center's coordinate.
    center: f64,
    /// The squared norm of the column means the data were centered on.
    mean_sq: f64,
}

impl Rounding {
    /// A row's part of the bound on its margin ([`lloyd_pass`]): the scores |c|^2 - 2 x.c
    /// of either side are within `settle_bound` of the norms (of the uncentered data at
    /// worst: |x|^2 <= 2 |x - m|^2 + 2 |m|^2), and centers moved by delta per coordinate
    /// move a score by up to 2 |x - c| sqrt(d) delta. This part depends on the row's squared
    /// norm `xn` alone, so a run computes it once per row.
    fn row_part(&self, d: usize, xn: f64) -> f64 {
        4.0 * distance::settle_bound(d) * xn + 4.0 * (d as f64).sqrt() * self.center * xn.sqrt()
    }

    /// The centers' part of that bound, from their largest squared norm `max_cn`.
    fn centers_part(&self, d: usize, max_cn: f64) -> f64 {
        2.0 * distance::settle_bound(d) * (2.0 * max_cn + 4.0 * self.mean_sq)
            + 4.0 * (d as f64).sqrt() * self.center * max_cn.sqrt()
    }
}

/// One Lloyd pass over the centered rows: labels every row against `centers` into `labels`,
/// a blocked fold whose partial is a block's per-cluster sums and counts. A row whose
/// runner-up center scores within rounding of its nearest marks the tally `narrow`: another
/// computation of the scores (another summation order, uncentered, or with the centers
/// `rounding.center` off in each coordinate) could pick the other center.
fn lloyd_pass(
    xc: ArrayView2<f64>,
    x_norms: ArrayView1<f64>,
    row_parts: ArrayView1<f64>,
    centers: ArrayView2<f64>,
    rounding: Rounding,
    labels: &mut [usize],
) -> Tally {
    let (n, d) = xc.dim();
    let k = centers.nrows();
    let c_norms = row_sq_norms(centers);
    let max_cn = c_norms.iter().copied().fold(0.0, f64::max);
    // each row's margin bound: its own part (see Rounding) plus the centers' part
    let centers_part = rounding.centers_part(d, max_cn);
    let work = n.saturating_mul(k).saturating_mul(d);
    let identity = Tally {
        sums: Array2::zeros((k, d)),
        counts: vec![0; k],
        narrow: false,
    };
    reduction::blocked_fold_into(
        labels,
        NEAREST_BLOCK_ROWS,
        &SCAN_F64,
        work,
        identity,
        |range, labels| {
            let block = xc.slice(s![range.clone(), ..]);
            let mut dist = vec![0.0f64; range.len()];
            let mut margin = vec![0.0f64; range.len()];
            nearest_block(
                block,
                x_norms.slice(s![range.clone()]),
                centers,
                c_norms.view(),
                labels,
                &mut dist,
                &mut margin,
            );
            let mut tally = block_tally(block, labels, k);
            tally.narrow = row_parts
                .slice(s![range])
                .iter()
                .zip(&margin)
                .any(|(&part, &gap)| gap <= part + centers_part);
            tally
        },
        |mut acc, part| {
            acc.sums += &part.sums;
            for (a, p) in acc.counts.iter_mut().zip(&part.counts) {
                *a += p;
            }
            acc.narrow |= part.narrow;
            acc
        },
    )
}

/// Per-cluster sums and counts of a block's rows (`labels[i]` is row i's cluster); each
/// cluster's sum adds its rows in row order, starting from zero.
fn block_tally(block: ArrayView2<f64>, labels: &[usize], k: usize) -> Tally {
    let d = block.ncols();
    let mut counts = vec![0usize; k];
    for &l in labels {
        counts[l] += 1;
    }
    // The rows grouped by cluster, in row order within each (a counting sort), so each
    // cluster's sums run in registers rather than as read-modify-writes of shared memory.
    let mut next = Vec::with_capacity(k + 1);
    next.push(0usize);
    for &c in &counts {
        next.push(next.last().copied().unwrap_or(0) + c);
    }
    let starts = next.clone();
    let mut order = vec![0usize; labels.len()];
    for (i, &l) in labels.iter().enumerate() {
        order[next[l]] = i;
        next[l] += 1;
    }
    let mut sums = Array2::<f64>::zeros((k, d));
    let columns: Option<Vec<&[f64]>> = (0..d)
        .map(|f| block.index_axis_move(Axis(1), f).to_slice())
        .collect();
    for (j, mut sum) in sums.outer_iter_mut().enumerate() {
        let rows = &order[starts[j]..starts[j + 1]];
        let out = sum.as_slice_mut().expect("fresh array is contiguous");
        match columns.as_deref() {
            Some(cols) if d <= 8 => match d {
                1 => add_rows::<1>(cols, rows, out),
                2 => add_rows::<2>(cols, rows, out),
                3 => add_rows::<3>(cols, rows, out),
                4 => add_rows::<4>(cols, rows, out),
                5 => add_rows::<5>(cols, rows, out),
                6 => add_rows::<6>(cols, rows, out),
                7 => add_rows::<7>(cols, rows, out),
                _ => add_rows::<8>(cols, rows, out),
            },
            _ => {
                for &i in rows {
                    out.iter_mut().zip(block.row(i)).for_each(|(t, &v)| *t += v);
                }
            }
        }
    }
    Tally {
        sums,
        counts,
        narrow: false,
    }
}

/// `out = sum of rows` (in the given order, from zero) over `D` feature columns, the `D`
/// running sums held in registers.
#[inline]
fn add_rows<const D: usize>(cols: &[&[f64]], rows: &[usize], out: &mut [f64]) {
    // A local copy of the column handles, which the compiler then keeps in registers.
    let cols: [&[f64]; D] = std::array::from_fn(|f| cols[f]);
    let mut acc = [0.0f64; D];
    for &i in rows {
        for (a, col) in acc.iter_mut().zip(&cols) {
            *a += col[i];
        }
    }
    out.copy_from_slice(&acc);
}

/// Gives each empty cluster one of the points farthest from their assigned (old) centers,
/// moving that point's contribution out of its cluster's sums (scikit-learn's rule). The
/// tally turns `narrow` where another implementation may choose otherwise: scikit-learn
/// hands several empty clusters the farthest points in the order of NumPy's partition, not
/// sorted; and a single one the farthest point, which another rounding of the distances
/// (centers `rounding.center` off) may tell apart from the next differently.
fn relocate_empty_clusters(
    xc: ArrayView2<f64>,
    old_centers: ArrayView2<f64>,
    labels: &[usize],
    rounding: Rounding,
    tally: &mut Tally,
) {
    let empty: Vec<usize> = (0..tally.counts.len())
        .filter(|&j| tally.counts[j] == 0)
        .collect();
    if empty.is_empty() {
        return;
    }
    tally.narrow |= empty.len() > 1;
    let dist: Vec<f64> = xc
        .outer_iter()
        .zip(labels)
        .map(|(row, &l)| distance::Metric::SquaredEuclidean.between(row, old_centers.row(l)))
        .collect();
    if dist.iter().all(|&v| v == 0.0) {
        // More clusters than distinct samples: nothing to relocate.
        return;
    }
    let mut far: Vec<usize> = (0..dist.len()).collect();
    far.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
    if let [first, next, ..] = far[..] {
        let d = xc.ncols() as f64;
        let (top, runner_up) = (dist[first], dist[next]);
        let bound =
            8.0 * (d + 2.0) * f64::EPSILON * top + 8.0 * d.sqrt() * rounding.center * top.sqrt();
        tally.narrow |= top - runner_up <= bound;
    }
    for (&new_cluster, &point) in empty.iter().zip(&far) {
        let old_cluster = labels[point];
        let row = xc.row(point);
        let mut old_sum = tally.sums.row_mut(old_cluster);
        old_sum -= &row;
        tally.sums.row_mut(new_cluster).assign(&row);
        tally.counts[new_cluster] = 1;
        tally.counts[old_cluster] -= 1;
    }
}

/// Exact (feature-order) sum of squared distances of the rows to their centers, a blocked
/// fold behind [`reduction::SUM_F64`].
fn exact_inertia(x: ArrayView2<f64>, centers: ArrayView2<f64>, labels: &[usize]) -> f64 {
    let (n, d) = x.dim();
    let rows_per_block = (reduction::BLOCK / d.max(1)).max(1);
    reduction::blocked_fold(
        n,
        rows_per_block,
        &reduction::SUM_F64,
        n.saturating_mul(d),
        0.0,
        |range| {
            let mut s = 0.0;
            for i in range {
                s += distance::Metric::SquaredEuclidean.between(x.row(i), centers.row(labels[i]));
            }
            s
        },
        |a, b| a + b,
    )
}

/// One Lloyd run from `centers` (centered coordinates). `rounding` bounds how far another
/// computation may sit (see [`lloyd_pass`]); the run is `narrow` where an assignment or the
/// stop lay within that of its threshold.
fn lloyd(
    xc: ArrayView2<f64>,
    x_norms: ArrayView1<f64>,
    mut centers: Array2<f64>,
    max_iter: usize,
    tol: f64,
    rounding: Rounding,
) -> Run {
    let center_rounding = rounding.center;
    let k = centers.nrows();
    let (n, d) = xc.dim();
    let row_parts = x_norms.mapv(|xn| rounding.row_part(d, xn));
    let pass = |centers: ArrayView2<f64>, labels: &mut [usize]| {
        lloyd_pass(xc, x_norms, row_parts.view(), centers, rounding, labels)
    };
    // Two label buffers, swapped each pass: this pass's and the one before.
    let mut labels = vec![0usize; n];
    let mut previous = vec![0usize; n];
    let mut strict = false;
    let mut narrow = false;
    let mut iterations = 0;
    // A total squared shift of k d coordinates each off by up to delta (and summed in
    // another order) is off by up to 2 sqrt(shift k d) delta + k d delta^2, plus its sum's
    // rounding; the tolerance is a variance another order rounds too (n eps relative).
    let cells = (k * d) as f64;
    let shift_rounding = |shift: f64| {
        4.0 * (shift * cells).sqrt() * center_rounding
            + 4.0 * cells * center_rounding * center_rounding
            + 4.0 * (cells + 2.0) * f64::EPSILON * shift
            + 4.0 * n as f64 * f64::EPSILON * tol
    };
    for i in 0..max_iter {
        iterations = i + 1;
        std::mem::swap(&mut labels, &mut previous);
        let mut tally = pass(centers.view(), &mut labels);
        relocate_empty_clusters(xc, centers.view(), &labels, rounding, &mut tally);
        narrow |= tally.narrow;
        let mut new_centers = centers.clone();
        for j in 0..k {
            if tally.counts[j] > 0 {
                // Divide (as scikit-learn does), so a center is the correctly rounded mean.
                let count = tally.counts[j] as f64;
                new_centers
                    .row_mut(j)
                    .assign(&tally.sums.row(j).mapv(|v| v / count));
            }
        }
        let shift: f64 = (&new_centers - &centers).iter().map(|v| v * v).sum();
        centers = new_centers;
        if i > 0 && previous == labels {
            strict = true;
            break;
        }
        narrow |= (shift - tol).abs() <= shift_rounding(shift);
        if shift <= tol {
            break;
        }
    }
    if !strict {
        // Relabel against the final centers, so labels and centers agree.
        narrow |= pass(centers.view(), &mut labels).narrow;
    }
    let inertia = exact_inertia(xc, centers.view(), &labels);
    Run {
        centers,
        labels,
        inertia,
        n_iter: iterations,
        narrow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{with_gate, GATE_TEST_LOCK};
    use ndarray::array;

    /// Three tight, well separated groups of 40 points around known centers.
    fn three_blobs() -> (Array2<f64>, Array2<f64>) {
        let centers = array![[0.0, 0.0, 0.0], [10.0, 10.0, 0.0], [-10.0, 10.0, 5.0]];
        let x = Array2::from_shape_fn((120, 3), |(i, j)| {
            let jitter = (((i * 7 + j * 3) % 11) as f64 - 5.0) / 10.0;
            centers[[i % 3, j]] + jitter
        });
        (x, centers)
    }

    #[test]
    fn finds_well_separated_blobs_and_their_means() {
        let (x, _) = three_blobs();
        for init in [KMeansInit::KMeansPlusPlus, KMeansInit::Random] {
            let mut km = KMeans::builder(3)
                .with_init(init.clone())
                .with_seed(Some(7));
            let labels = km.fit_predict(&x).unwrap();
            // Same partition as the generating groups (up to renaming).
            for i in 0..x.nrows() {
                for j in 0..x.nrows() {
                    assert_eq!(labels[i] == labels[j], i % 3 == j % 3, "{init:?} {i} {j}");
                }
            }
            // Each center is the mean of its group; the inertia is the within-group scatter.
            let mut want_inertia = 0.0;
            for g in 0..3 {
                let rows: Vec<usize> = (g..x.nrows()).step_by(3).collect();
                let group = x.select(Axis(0), &rows);
                let mean = group.mean_axis(Axis(0)).unwrap();
                let c = km
                    .cluster_centers()
                    .unwrap()
                    .row(labels[g] as usize)
                    .to_owned();
                assert!(
                    (&c - &mean).iter().all(|v| v.abs() < 1e-12),
                    "{init:?} center {g}"
                );
                want_inertia += group
                    .outer_iter()
                    .map(|r| (&r - &mean).mapv(|v| v * v).sum())
                    .sum::<f64>();
            }
            assert!((km.inertia().unwrap() - want_inertia).abs() < 1e-9 * want_inertia);
            assert_eq!(km.predict(&x).unwrap(), labels);
            assert!((km.score(&x).unwrap() + want_inertia).abs() < 1e-9 * want_inertia);
        }
    }

    #[test]
    fn hand_worked_lloyd_from_explicit_centers() {
        // 1-D: points 0, 1, 2, 10, 11; start centers 0 and 1.
        // Pass 1: {0} | {1, 2, 10, 11} -> centers 0, 6. Pass 2: {0, 1, 2} | {10, 11} -> 1, 10.5.
        // Pass 3: same labels -> strict convergence after 3 iterations.
        let x = array![[0.0], [1.0], [2.0], [10.0], [11.0]];
        let mut km = KMeans::builder(2)
            .with_init(KMeansInit::Centers(array![[0.0], [1.0]]))
            .with_tol(0.0);
        km.fit(&x).unwrap();
        let c = km.cluster_centers().unwrap();
        assert!((c[[0, 0]] - 1.0).abs() < 1e-12 && (c[[1, 0]] - 10.5).abs() < 1e-12);
        assert_eq!(km.labels().unwrap().to_vec(), vec![0, 0, 0, 1, 1]);
        assert_eq!(km.n_iter(), Some(3));
        assert!((km.inertia().unwrap() - 2.5).abs() < 1e-12); // 1 + 0 + 1 + 0.25 + 0.25
        let t = km.transform(&array![[4.0]]).unwrap();
        assert!((t[[0, 0]] - 3.0).abs() < 1e-12 && (t[[0, 1]] - 6.5).abs() < 1e-12);
    }

    #[test]
    fn an_empty_cluster_takes_the_farthest_point() {
        // Center 1 at 100 attracts nobody in pass 1; the point farthest from its (old) center
        // 0.5 is 3.0, so cluster 1 restarts there and cluster 0 keeps {0, 0.5, 1}.
        let x = array![[0.0], [0.5], [1.0], [3.0]];
        let mut km = KMeans::builder(2)
            .with_init(KMeansInit::Centers(array![[0.5], [100.0]]))
            .with_tol(0.0);
        km.fit(&x).unwrap();
        assert_eq!(km.labels().unwrap().to_vec(), vec![0, 0, 0, 1]);
        let c = km.cluster_centers().unwrap();
        assert!((c[[0, 0]] - 0.5).abs() < 1e-12 && (c[[1, 0]] - 3.0).abs() < 1e-12);
    }

    #[test]
    fn same_seed_same_result_and_auto_runs() {
        let (x, _) = three_blobs();
        let fit = |seed| {
            let mut km = KMeans::builder(4).with_seed(Some(seed));
            km.fit(&x).unwrap();
            km
        };
        let (a, b) = (fit(3), fit(3));
        assert_eq!(a.cluster_centers(), b.cluster_centers());
        assert_eq!(a.labels(), b.labels());
        assert_eq!(
            KMeans::builder(2)
                .with_n_init_mode(NInit::Auto)
                .effective_n_init(),
            1
        );
        assert_eq!(
            KMeans::builder(2)
                .with_n_init_mode(NInit::Auto)
                .with_init(KMeansInit::Random)
                .effective_n_init(),
            10
        );
    }

    #[test]
    fn gates_never_change_a_bit() {
        let x = Array2::from_shape_fn((1500, 5), |(i, j)| {
            ((i * 31 + j * 17) % 97) as f64 / 9.0 + ((i % 4) * 6) as f64
        });
        let run = || {
            let mut km = KMeans::builder(5)
                .with_seed(Some(11))
                .with_n_init_mode(NInit::Runs(2));
            km.fit(&x).unwrap();
            (
                km.cluster_centers().unwrap().mapv(f64::to_bits),
                km.labels().unwrap().clone(),
                km.inertia().unwrap().to_bits(),
            )
        };
        let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let serial = with_gate(&SCAN_F64, usize::MAX, || {
            with_gate(&reduction::SUM_F64, usize::MAX, run)
        });
        let parallel = with_gate(&SCAN_F64, 0, || with_gate(&reduction::SUM_F64, 0, run));
        assert_eq!(serial, parallel);
    }

    #[test]
    fn lloyd_pass_serial_and_parallel_agree_bitwise() {
        let x = Array2::from_shape_fn((3 * NEAREST_BLOCK_ROWS + 5, 4), |(i, j)| {
            ((i * 13 + j * 7) % 31) as f64 * 0.37
        });
        let centers = x.slice(s![..6, ..]).to_owned();
        // Both layouts: the fit's column-major working copy and a row-major array.
        let mut column_major = Array2::zeros(x.raw_dim().f());
        column_major.assign(&x);
        let mut runs = Vec::new();
        for layout in [&x, &column_major] {
            let norms = row_sq_norms(layout.view());
            let (s, p) = crate::gate::serial_and_parallel(&SCAN_F64, || {
                let mut labels = vec![usize::MAX; layout.nrows()];
                let rounding = Rounding {
                    center: 1e-12,
                    mean_sq: 0.0,
                };
                let parts = norms.mapv(|xn| rounding.row_part(layout.ncols(), xn));
                let tally = lloyd_pass(
                    layout.view(),
                    norms.view(),
                    parts.view(),
                    centers.view(),
                    rounding,
                    &mut labels,
                );
                (
                    labels,
                    tally.counts,
                    tally.sums.mapv(f64::to_bits),
                    tally.narrow,
                )
            });
            assert_eq!(s, p);
            runs.push(s);
        }
        assert_eq!(runs[0], runs[1]);
        // The sums are those of the labelled rows.
        let (labels, counts, sums, _) = &runs[0];
        for j in 0..centers.nrows() {
            let rows: Vec<usize> = (0..x.nrows()).filter(|&i| labels[i] == j).collect();
            assert_eq!(counts[j], rows.len());
            let want = x.select(Axis(0), &rows).sum_axis(Axis(0));
            for (f, &w) in want.iter().enumerate() {
                assert!((f64::from_bits(sums[[j, f]]) - w).abs() <= 1e-9 * (1.0 + w.abs()));
            }
        }
    }

    #[test]
    fn a_sample_midway_between_two_centers_marks_the_run_as_decided_by_rounding() {
        // A decimal grid whose midpoints between the final centers are samples: the exact
        // distances tie, and which center each rounding picks is its own. The flag says so;
        // the same data moved off the midpoints leaves it clear.
        let tied = array![
            [0.1, 0.0],
            [0.3, 0.0],
            [0.2, 0.0],
            [1.1, 0.0],
            [1.3, 0.0],
            [0.7, 0.0]
        ];
        let start = array![[0.2, 0.0], [1.2, 0.0]];
        let mut km = KMeans::builder(2)
            .with_init(KMeansInit::Centers(start.clone()))
            .with_n_init_mode(NInit::Runs(1));
        km.fit_checked(&tied).unwrap();
        assert_eq!(km.rounding_decided(), Some(true));
        let clear = array![
            [0.1, 0.0],
            [0.3, 0.0],
            [0.2, 0.0],
            [1.1, 0.0],
            [1.3, 0.0],
            [0.6, 0.0]
        ];
        let mut km = KMeans::builder(2)
            .with_init(KMeansInit::Centers(start))
            .with_n_init_mode(NInit::Runs(1));
        km.fit_checked(&clear).unwrap();
        assert_eq!(km.rounding_decided(), Some(false));
        assert_eq!(km.labels().unwrap().to_vec(), vec![0, 0, 0, 1, 1, 0]);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        assert!(matches!(
            KMeans::builder(2).predict(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(KMeans::builder(4).fit(&x).is_err()); // more clusters than samples
        assert!(KMeans::builder(0).fit(&x).is_err());
        assert!(KMeans::builder(2).with_max_iter(0).fit(&x).is_err());
        assert!(KMeans::builder(2)
            .with_n_init_mode(NInit::Runs(0))
            .fit(&x)
            .is_err());
        assert!(KMeans::builder(2).with_tol(f64::NAN).fit(&x).is_err());
        assert!(KMeans::builder(2)
            .fit(&array![[1.0, f64::INFINITY], [0.0, 0.0]])
            .is_err());
        assert!(KMeans::builder(1)
            .fit(&Array2::<f64>::zeros((0, 2)))
            .is_err());
        assert!(KMeans::builder(2)
            .with_init(KMeansInit::Centers(array![[0.0, 0.0]]))
            .fit(&x)
            .is_err());
        let mut km = KMeans::builder(2).with_seed(Some(0));
        km.fit(&x).unwrap();
        assert!(km.predict(&array![[1.0, 2.0, 3.0]]).is_err());
    }

    #[test]
    fn duplicate_points_with_more_clusters_than_distinct_values() {
        let x = array![[1.0], [1.0], [1.0], [2.0]];
        let mut km = KMeans::builder(3).with_seed(Some(5));
        km.fit(&x).unwrap();
        assert_eq!(km.inertia(), Some(0.0));
    }

    #[test]
    fn save_and_load_round_trip() {
        let (x, _) = three_blobs();
        let mut km = KMeans::builder(3).with_seed(Some(1));
        km.fit(&x).unwrap();
        let back = KMeans::from_bytes(&km.to_bytes().unwrap()).unwrap();
        assert_eq!(back.predict(&x).unwrap(), km.predict(&x).unwrap());
        assert_eq!(back.cluster_centers(), km.cluster_centers());
    }

    #[test]
    fn original_api_exact_means_and_error_kinds() {
        // {0, 2} and {10, 12}: the best run's centers are the exact means 1 and 11 (no
        // centering shift, division by the count), inertia 1 + 1 + 1 + 1.
        let x = array![[0.0], [2.0], [10.0], [12.0]];
        let mut km = KMeans::new(2, 100, 1e-4).unwrap().with_random_state(3);
        let labels = km.fit_predict(&x).unwrap();
        assert_eq!(labels[0], labels[1]);
        assert_eq!(labels[2], labels[3]);
        assert_ne!(labels[0], labels[2]);
        let c = km.get_centroids().unwrap();
        assert_eq!(c[[labels[0] as usize, 0]], 1.0);
        assert_eq!(c[[labels[2] as usize, 0]], 11.0);
        assert_eq!(km.get_inertia(), Some(4.0));
        assert_eq!(km.get_n_init(), 10);
        for (k, it, tol) in [(0, 10, 1e-4), (2, 0, 1e-4), (2, 10, 0.0), (2, 10, f64::NAN)] {
            assert!(matches!(
                KMeans::new(k, it, tol),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert!(matches!(
            km.predict(&array![[1.0, 2.0]]),
            Err(Error::DimensionMismatch {
                expected: 1,
                found: 2
            })
        ));
        assert!(matches!(
            km.predict(&array![[f64::NAN]]),
            Err(Error::NonFinite(_))
        ));
        assert!(matches!(
            KMeans::default().fit(&Array2::<f64>::zeros((0, 1))),
            Err(Error::EmptyInput(_))
        ));
    }
}
