//! MeanShift with a flat kernel, as scikit-learn's.
//!
//! Every seed (the samples, bin centers with `bin_seeding`, or given seeds) moves to the mean
//! of the samples within `bandwidth` of it until it moves less than `1e-3 * bandwidth` or
//! `max_iter` is reached. Converged means are ranked by how many samples they hold (then by
//! coordinates, descending), near duplicates within `bandwidth` of a better one are dropped,
//! and each sample takes its closest center.
//!
//! All seeds still moving shift together: their distances to the samples come from one tiled
//! product ([`matmul::tiled_product`], so MeanShift follows the `chunk_elems` and
//! `cache_resident_max_bytes` knobs), and each chunk's seeds are scanned in parallel behind
//! [`SCAN_F64`]. Membership is exact: a pair whose product-form distance lies within its
//! rounding bound of the bandwidth is re-measured feature by feature
//! ([`radius::Screen`]), so the sets, and every mean, do not depend on the product's bits or
//! on the path taken. The bandwidth estimate takes its neighbours from the crate's k-nearest
//! engine ([`crate::math::k_nearest`]).

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::validation::{
    check_features, check_n_features, require_data, require_data_width, require_nonzero,
    require_positive,
};
use crate::math::distance::{self, row_sq_norms, Metric, SCAN_F64};
use crate::math::k_nearest::{KNearest, Queries};
use crate::math::radius::{self, Screen};
use crate::math::{matmul, reduction};
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayRef2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;

/// Mean-shift clustering with a flat kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeanShift {
    /// Kernel radius; `None` estimates it with [`estimate_bandwidth`] (quantile 0.3).
    pub bandwidth: Option<f64>,
    /// Explicit seeds (`n_seeds x n_features`); `None` uses the samples or bins.
    pub seeds: Option<Array2<f64>>,
    /// Seed from a grid of `bandwidth`-wide bins instead of every sample.
    pub bin_seeding: bool,
    /// Bins with fewer samples are not seeds.
    pub min_bin_freq: usize,
    /// Label every sample (else samples farther than `bandwidth` from every center get `-1`).
    pub cluster_all: bool,
    pub max_iter: usize,
    /// A seed stops once it moves at most `tol * bandwidth` (scikit-learn fixes `1e-3`).
    #[serde(default = "default_tol")]
    pub tol: f64,
    centers: Option<Array2<f64>>,
    /// Samples within `bandwidth` of each kept center when it converged (its intensity).
    #[serde(default)]
    center_counts: Option<Array1<usize>>,
    labels: Option<Array1<isize>>,
    n_iter: usize,
    fitted_bandwidth: f64,
}

fn default_tol() -> f64 {
    1e-3
}

impl Default for MeanShift {
    /// The original's default: `new(1.0)`.
    fn default() -> Self {
        Self::builder(Some(1.0))
    }
}

impl MeanShift {
    /// scikit-learn's defaults: every sample a seed, `cluster_all`, 300 iterations.
    /// Unvalidated (checked at `fit`).
    pub fn builder(bandwidth: Option<f64>) -> Self {
        Self {
            bandwidth,
            seeds: None,
            bin_seeding: false,
            min_bin_freq: 1,
            cluster_all: true,
            max_iter: 300,
            tol: default_tol(),
            centers: None,
            center_counts: None,
            labels: None,
            n_iter: 0,
            fitted_bandwidth: 0.0,
        }
    }

    crate::accessors::builder_setters! {
        with_seeds(seeds: Option<Array2<f64>>),
        with_bin_seeding(bin_seeding: bool),
        with_min_bin_freq(min_bin_freq: usize),
        with_cluster_all(cluster_all: bool),
    }

    crate::accessors::fitted_getters! {
        self once centers;
        /// Fitted centers (`cluster_centers_`), best first.
        cluster_centers -> &centers: Array2<f64>,
        /// Cluster of each training sample (`labels_`); `-1` only without `cluster_all`.
        labels -> &labels: Array1<isize>,
        /// Most iterations any seed took (`n_iter_`).
        n_iter -> n_iter: usize,
        /// The bandwidth the fit used (given or estimated).
        fitted_bandwidth -> fitted_bandwidth: f64,
    }

    /// The one check of MeanShift's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        if let Some(bw) = self.bandwidth {
            require_positive("bandwidth", bw)?;
        }
        require_nonzero("min_bin_freq", self.min_bin_freq)
    }

    /// What `x` must satisfy for these parameters.
    fn check_data(&self, x: &ArrayView2<f64>) -> Result<()> {
        check_features(x, "X")?;
        if let Some(seeds) = &self.seeds {
            if seeds.ncols() != x.ncols() {
                return Err(Error::invalid_input(format!(
                    "seeds have {} features, X has {}",
                    seeds.ncols(),
                    x.ncols()
                )));
            }
            check_features(&seeds.view(), "seeds")?;
        }
        Ok(())
    }

    /// Cluster `x` (`n_samples x n_features`) with scikit-learn's checks and messages.
    pub fn fit_checked(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        self.check_params()?;
        self.check_data(&x)?;
        let bandwidth = match self.bandwidth {
            Some(bw) => bw,
            None => estimate_bandwidth_all(&x, 0.3)?,
        };
        let seeds = match &self.seeds {
            Some(s) => s.clone(),
            None if self.bin_seeding => bin_seeds(x, bandwidth, self.min_bin_freq),
            None => x.to_owned(),
        };
        let data = Samples::new(x);
        let shifted = shift_seeds(&data, seeds, bandwidth, self.max_iter, self.tol);
        let n_iter = shifted.iter().map(|s| s.iterations).max().unwrap_or(0);
        // Converged means keyed by their bits (-0.0 folded into 0.0, like Python's tuple keys);
        // a later seed with the same mean overwrites the count, as a dict assignment does.
        let mut order: Vec<Vec<f64>> = Vec::new();
        let mut intensity: HashMap<Vec<u64>, usize> = HashMap::new();
        for s in shifted.iter().filter(|s| s.count > 0) {
            let key: Vec<u64> = s.mean.iter().map(|&v| (v + 0.0).to_bits()).collect();
            if intensity.insert(key, s.count).is_none() {
                order.push(s.mean.clone());
            }
        }
        if order.is_empty() {
            return Err(Error::invalid_input(format!(
                "No point was within bandwidth={bandwidth} of any seed. Try a different seeding strategy or increase the bandwidth."
            )));
        }
        let mut ranked: Vec<(usize, Vec<f64>)> = order
            .into_iter()
            .map(|m| {
                (
                    intensity[&m.iter().map(|&v| (v + 0.0).to_bits()).collect::<Vec<u64>>()],
                    m,
                )
            })
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| lexicographic(&b.1, &a.1)));
        let (centers, counts) = suppress_near_duplicates(&ranked, bandwidth);
        let (nearest, _) = distance::nearest_rows(x, centers.view())?;
        let reduced = bandwidth * bandwidth;
        let labels: Array1<isize> = nearest
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                if self.cluster_all
                    || radius::reduced_distance(x.row(i), centers.row(c), Metric::Euclidean)
                        <= reduced
                {
                    c as isize
                } else {
                    -1
                }
            })
            .collect();
        self.centers = Some(centers);
        self.center_counts = Some(counts);
        self.labels = Some(labels);
        self.n_iter = n_iter;
        self.fitted_bandwidth = bandwidth;
        Ok(self)
    }

    /// Index of the closest center for each row of `x` (scikit-learn: `cluster_all` is not
    /// applied here).
    pub fn predict_checked(&self, x: &ArrayRef2<f64>) -> Result<Array1<i64>> {
        let centers = fitted_state(&self.centers, "MeanShift")?;
        let x = x.view();
        check_n_features(&x, centers.ncols(), "MeanShift")?;
        let (nearest, _) = distance::nearest_rows(x, centers.view())?;
        Ok(nearest.into_iter().map(|c| c as i64).collect())
    }
}

crate::machine_learning::path_persistence!(MeanShift);
crate::machine_learning::clustering::fit_predict_labels!(MeanShift);

impl Persist for MeanShift {
    const MODEL_NAME: &'static str = "MeanShift";
}

/// The original RustyML API: validated constructor and setters, getters, its error kinds.
impl MeanShift {
    /// Flat kernel of radius `bandwidth` (finite, > 0; else `InvalidParameter`); 300
    /// iterations, tolerance 1e-3, every sample a seed, `cluster_all`.
    pub fn new(bandwidth: f64) -> Result<Self> {
        let model = Self::builder(Some(bandwidth));
        model.check_params()?;
        Ok(model)
    }

    // The original's setters are narrower than scikit-learn's (which takes max_iter 0 and
    // has no tolerance to set): these domains are the original's own.
    pub fn with_max_iter(mut self, max_iter: usize) -> Result<Self> {
        require_nonzero("max_iter", max_iter)?;
        self.max_iter = max_iter;
        Ok(self)
    }

    /// A seed stops once it moves at most `tol * bandwidth`.
    pub fn with_tolerance(mut self, tol: f64) -> Result<Self> {
        require_positive("tol", tol)?;
        self.tol = tol;
        Ok(self)
    }

    /// The given bandwidth (the original has no estimated one).
    pub fn get_bandwidth(&self) -> f64 {
        self.bandwidth.unwrap_or(self.fitted_bandwidth)
    }

    crate::accessors::fitted_getters! {
        self once centers;
        get_cluster_centers -> &centers: Array2<f64>,
        get_labels -> &labels: Array1<isize>,
        /// Samples within `bandwidth` of each center when its seed converged.
        get_n_samples_per_center -> &center_counts: Array1<usize>,
    }

    /// Mean-shift steps of the slowest seed, counting the step that found it converged
    /// (scikit-learn's `n_iter_` does not count that step), at most `max_iter`.
    pub fn get_actual_iterations(&self) -> Option<usize> {
        self.n_iter().map(|n| (n + 1).min(self.max_iter))
    }

    crate::accessors::field_getters! {
        get_max_iterations -> max_iter: usize,
        get_tolerance -> tol: f64,
        get_bin_seeding -> bin_seeding: bool,
        get_cluster_all -> cluster_all: bool,
    }

    /// Cluster `x`; empty -> `EmptyInput`, NaN/inf -> `NonFinite`.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        require_data(&x.view(), "MeanShift data")?;
        self.fit_checked(x)
    }

    /// Closest center of each row; without `cluster_all`, rows farther than `bandwidth` from
    /// every center get `-1` (as the training labels do).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<isize>> {
        let centers = self.centers.as_ref().ok_or(Error::NotFitted("MeanShift"))?;
        let x = x.view();
        require_data_width(&x, centers.ncols(), "MeanShift input")?;
        let (nearest, _) = distance::nearest_rows(x, centers.view())?;
        let reduced = self.fitted_bandwidth * self.fitted_bandwidth;
        Ok(nearest
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let inside = self.cluster_all
                    || radius::reduced_distance(x.row(i), centers.row(c), Metric::Euclidean)
                        <= reduced;
                if inside {
                    c as isize
                } else {
                    -1
                }
            })
            .collect())
    }
}

crate::machine_learning::data_traits!(
    MeanShift:
    Fit where Send + Sync,
    Predict -> Array1<isize> where Sync,
);

/// The original's `estimate_bandwidth`: `quantile` (default 0.3) strictly inside (0, 1),
/// optionally on `n_samples` rows drawn without replacement (scikit-learn's permutation
/// prefix), seeded by `random_state` or the global seed. Bad values -> `InvalidParameter`.
pub fn estimate_bandwidth(
    x: &ArrayRef2<f64>,
    quantile: Option<f64>,
    n_samples: Option<usize>,
    random_state: Option<u64>,
) -> Result<f64> {
    let quantile = quantile.unwrap_or(0.3);
    if !(quantile > 0.0 && quantile < 1.0) {
        return Err(Error::invalid_parameter(
            "quantile",
            format!("must lie strictly between 0 and 1, got {quantile}"),
        ));
    }
    if let Some(m) = n_samples {
        require_nonzero("n_samples", m)?;
    }
    let x = x.view();
    require_data(&x, "estimate_bandwidth input")?;
    match n_samples {
        Some(m) if m < x.nrows() => {
            let mut rng = crate::random::rng_from(random_state);
            let rows = rand::seq::index::sample(&mut rng, x.nrows(), m).into_vec();
            estimate_bandwidth_all(&x.select(Axis(0), &rows), quantile)
        }
        _ => estimate_bandwidth_all(&x, quantile),
    }
}

/// Python's tuple order on equal-length float vectors.
fn lexicographic(a: &[f64], b: &[f64]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.partial_cmp(y) {
            Some(std::cmp::Ordering::Equal) | None => continue,
            Some(o) => return o,
        }
    }
    std::cmp::Ordering::Equal
}

/// Keeps, best first, every center not within `bandwidth` of a better kept one.
fn suppress_near_duplicates(
    ranked: &[(usize, Vec<f64>)],
    bandwidth: f64,
) -> (Array2<f64>, Array1<usize>) {
    let reduced = bandwidth * bandwidth;
    let mut unique = vec![true; ranked.len()];
    for i in 0..ranked.len() {
        if !unique[i] {
            continue;
        }
        for j in 0..ranked.len() {
            if j != i
                && radius::reduced_slices(&ranked[i].1, &ranked[j].1, Metric::Euclidean) <= reduced
            {
                unique[j] = false;
            }
        }
    }
    let kept: Vec<&(usize, Vec<f64>)> = ranked
        .iter()
        .zip(&unique)
        .filter(|(_, &u)| u)
        .map(|(r, _)| r)
        .collect();
    let d = kept[0].1.len();
    let centers = Array2::from_shape_fn((kept.len(), d), |(i, k)| kept[i].1[k]);
    (centers, kept.iter().map(|r| r.0).collect())
}

/// scikit-learn's `get_bin_seeds`: the occupied cells of a `bin_size` grid (coordinates
/// rounded half to even) holding at least `min_bin_freq` samples, as float32 cell indices
/// times `bin_size`; the samples themselves when binning does not reduce them.
fn bin_seeds(x: ArrayView2<f64>, bin_size: f64, min_bin_freq: usize) -> Array2<f64> {
    if bin_size == 0.0 {
        return x.to_owned();
    }
    let mut order: Vec<Vec<f64>> = Vec::new();
    let mut freq: HashMap<Vec<u64>, usize> = HashMap::new();
    for row in x.outer_iter() {
        let cell: Vec<f64> = row
            .iter()
            .map(|&v| (v / bin_size).round_ties_even() + 0.0)
            .collect();
        let key: Vec<u64> = cell.iter().map(|v| v.to_bits()).collect();
        let count = freq.entry(key).or_insert(0);
        if *count == 0 {
            order.push(cell);
        }
        *count += 1;
    }
    let seeds: Vec<&Vec<f64>> = order
        .iter()
        .filter(|cell| {
            freq[&cell.iter().map(|v| v.to_bits()).collect::<Vec<u64>>()] >= min_bin_freq
        })
        .collect();
    if seeds.len() == x.nrows() {
        return x.to_owned();
    }
    Array2::from_shape_fn((seeds.len(), x.ncols()), |(i, k)| {
        (seeds[i][k] as f32) as f64 * bin_size
    })
}

/// The samples in the forms the scans need: original rows (contiguous, for exact
/// re-measurement and means), rows centered on the column means (for the product) and the
/// centered squared norms.
struct Samples<'a> {
    /// Original rows, row-major (borrowed when `x` already is).
    flat: std::borrow::Cow<'a, [f64]>,
    dims: usize,
    mean: Array1<f64>,
    centered: Array2<f64>,
    norms: Array1<f64>,
}

impl<'a> Samples<'a> {
    fn new(x: ArrayView2<'a, f64>) -> Self {
        let mean = Array1::from_iter(reduction::column_moments(x).iter().map(|m| m.mean));
        let centered = &x - &mean;
        let norms = row_sq_norms(centered.view());
        let flat = match x.to_slice() {
            Some(s) => std::borrow::Cow::Borrowed(s),
            None => std::borrow::Cow::Owned(x.iter().copied().collect()),
        };
        Self {
            flat,
            dims: x.ncols(),
            mean,
            centered,
            norms,
        }
    }

    #[inline]
    fn row(&self, j: usize) -> &[f64] {
        &self.flat[j * self.dims..(j + 1) * self.dims]
    }
}

/// Maps `per_row(query index, row of the product)` over the rows of `queries · samplesᵀ`
/// (centered coordinates), chunked by [`matmul::tiled_product`]; each chunk's rows run in
/// parallel when [`SCAN_F64`] allows `rows * samples * features`. Results come back in query
/// order.
fn map_distance_rows<R: Send>(
    queries_centered: ArrayView2<f64>,
    data: &Samples,
    per_row: impl Fn(usize, ArrayView1<f64>) -> R + Sync,
) -> Vec<R> {
    let pieces: Mutex<Vec<(usize, Vec<R>)>> = Mutex::new(Vec::new());
    let d = data.centered.ncols();
    matmul::tiled_product(queries_centered, data.centered.t(), |start, chunk| {
        let work = chunk.len().saturating_mul(d);
        let rows: Vec<R> = if chunk.nrows() > 1 && SCAN_F64.allows_parallel(work) {
            chunk
                .axis_iter(Axis(0))
                .into_par_iter()
                .enumerate()
                .map(|(r, row)| per_row(start + r, row))
                .collect()
        } else {
            chunk
                .outer_iter()
                .enumerate()
                .map(|(r, row)| per_row(start + r, row))
                .collect()
        };
        pieces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((start, rows));
    })
    .expect("queries and samples have the same features");
    let mut pieces = pieces.into_inner().unwrap_or_else(|e| e.into_inner());
    pieces.sort_by_key(|p| p.0);
    pieces.into_iter().flat_map(|p| p.1).collect()
}

/// A seed's final state.
struct Shifted {
    mean: Vec<f64>,
    /// Samples within the bandwidth at the last step (0: the seed was dropped).
    count: usize,
    iterations: usize,
}

/// Shifts every seed to convergence (scikit-learn's `_mean_shift_single_seed`, all seeds
/// still moving at once).
fn shift_seeds(
    data: &Samples,
    seeds: Array2<f64>,
    bandwidth: f64,
    max_iter: usize,
    tol: f64,
) -> Vec<Shifted> {
    let d = data.centered.ncols();
    let stop = tol * bandwidth;
    let reduced = bandwidth * bandwidth;
    let screen = Screen::new(reduced, d);
    let mut state: Vec<Shifted> = seeds
        .outer_iter()
        .map(|s| Shifted {
            mean: s.to_vec(),
            count: 0,
            iterations: 0,
        })
        .collect();
    let mut active: Vec<usize> = (0..state.len()).collect();
    while !active.is_empty() {
        let queries = Array2::from_shape_fn((active.len(), d), |(r, k)| {
            state[active[r]].mean[k] - data.mean[k]
        });
        let q_norms = row_sq_norms(queries.view());
        let norms = data.norms.as_slice().expect("fresh array");
        let steps = map_distance_rows(queries.view(), data, |r, dots| {
            let old = &state[active[r]].mean;
            let dots = dots.as_slice().expect("a fresh product is row-major");
            let mut within = Vec::new();
            let exact = |j: usize| radius::reduced_slices(old, data.row(j), Metric::Euclidean);
            screen.scan_row(dots, q_norms[r], norms, exact, &mut within);
            // Sum in sample order: the mean depends only on the set.
            let mut sum = vec![0.0f64; d];
            for &j in &within {
                for (s, &v) in sum.iter_mut().zip(data.row(j as usize)) {
                    *s += v;
                }
            }
            let count = within.len();
            (count > 0).then(|| {
                let mean: Vec<f64> = sum.iter().map(|s| s / count as f64).collect();
                (mean, count)
            })
        });
        let mut still = Vec::with_capacity(active.len());
        for (&seed, step) in active.iter().zip(steps) {
            let s = &mut state[seed];
            match step {
                None => s.count = 0,
                Some((mean, count)) => {
                    let moved = radius::reduced_slices(&mean, &s.mean, Metric::Euclidean).sqrt();
                    s.mean = mean;
                    s.count = count;
                    if moved <= stop || s.iterations == max_iter {
                        continue;
                    }
                    s.iterations += 1;
                    still.push(seed);
                }
            }
        }
        active = still;
    }
    state
}

/// scikit-learn's `estimate_bandwidth` on all samples: the mean over samples of the distance
/// to their `max(1, floor(n * quantile))`-th nearest sample (the sample itself counts first).
///
/// The neighbour comes from the crate's k-nearest engine ([`crate::math::k_nearest`]) on the
/// centered samples; its distance is then re-measured feature by feature on the original
/// rows.
pub fn estimate_bandwidth_all(x: &ArrayRef2<f64>, quantile: f64) -> Result<f64> {
    let x = x.view();
    if !(0.0..=1.0).contains(&quantile) {
        return Err(Error::invalid_input(format!(
            "quantile must be in [0, 1], got {quantile}"
        )));
    }
    check_features(&x, "X")?;
    let n = x.nrows();
    let k = ((n as f64 * quantile) as usize).clamp(1, n);
    let data = Samples::new(x);
    let kth = KNearest::with_sq_norms(
        data.centered.view(),
        data.norms.view(),
        Metric::SquaredEuclidean,
    )
    .kth(Queries::Reference { include_self: true }, k)?;
    let distances: Array1<f64> = kth
        .iter()
        .enumerate()
        .map(|(i, &j)| radius::reduced_slices(data.row(i), data.row(j), Metric::Euclidean).sqrt())
        .collect();
    Ok(reduction::sum(distances.view()) / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{with_gate, GATE_TEST_LOCK};
    use ndarray::array;

    fn two_groups() -> Array2<f64> {
        // Five points around (0, 0) and four around (10, 10), spread 0.5 at most.
        array![
            [0.0, 0.0],
            [0.5, 0.0],
            [0.0, 0.5],
            [-0.5, 0.0],
            [0.0, -0.5],
            [10.0, 10.0],
            [10.5, 10.0],
            [10.0, 10.5],
            [9.5, 10.0]
        ]
    }

    #[test]
    fn hand_worked_two_groups() {
        // bandwidth 2: every seed of a group sees exactly its group, so it jumps to the group
        // mean in one step, (0, 0) and (10, 10.125), and stays. The larger group ranks first.
        let x = two_groups();
        let mut ms = MeanShift::builder(Some(2.0));
        let labels = ms.fit_predict(&x).unwrap();
        let c = ms.cluster_centers().unwrap();
        assert_eq!(c.dim(), (2, 2));
        assert!(c.row(0).iter().all(|v| v.abs() < 1e-12));
        assert!((c[[1, 0]] - 10.0).abs() < 1e-12 && (c[[1, 1]] - 10.125).abs() < 1e-12);
        assert_eq!(labels.to_vec(), vec![0, 0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(
            ms.predict_checked(&array![[9.0, 9.0], [1.0, -1.0]])
                .unwrap()
                .to_vec(),
            vec![1, 0]
        );
        // A seed already at its group's mean stops after its first step (0 iterations
        // completed); the others complete one and stop on the second.
        assert_eq!(ms.n_iter(), Some(1));
    }

    #[test]
    fn cluster_all_false_leaves_far_points_unlabelled() {
        let mut x = two_groups();
        x.row_mut(8).assign(&array![5.0, 5.0]); // now far from both groups at bandwidth 2
        let mut ms = MeanShift::builder(Some(2.0)).with_cluster_all(false);
        let labels = ms.fit_predict(&x).unwrap();
        // (5, 5) is its own seed and center (1 point), ranked last, but it is within the
        // bandwidth of its own center: label 2, not -1. A seed-less far sample is -1:
        let mut ms2 = MeanShift::builder(Some(2.0))
            .with_cluster_all(false)
            .with_seeds(Some(array![[0.0, 0.0], [10.0, 10.0]]));
        let labels2 = ms2.fit_predict(&x).unwrap();
        assert_eq!(labels.to_vec(), vec![0, 0, 0, 0, 0, 1, 1, 1, 2]);
        assert_eq!(labels2[8], -1);
        assert_eq!(labels2.iter().filter(|&&l| l == -1).count(), 1);
    }

    #[test]
    fn bandwidth_estimate_matches_a_hand_count() {
        // 1-D points 0, 1, 3, 7; quantile 0.5 -> the 2nd nearest (self first):
        // 0 -> 1, 1 -> 1, 3 -> 2, 7 -> 4; mean 2.
        let x = array![[0.0], [1.0], [3.0], [7.0]];
        assert!((estimate_bandwidth_all(&x, 0.5).unwrap() - 2.0).abs() < 1e-12);
        // quantile 0 still takes one neighbour: the sample itself, distance 0.
        assert_eq!(estimate_bandwidth_all(&x, 0.0).unwrap(), 0.0);
        assert!(estimate_bandwidth_all(&x, 1.5).is_err());
    }

    #[test]
    fn bin_seeds_follow_rounding_half_to_even() {
        // bin 1: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 0.4 -> 0: bins {0: 2, 2: 2}.
        let x = array![[0.5], [1.5], [2.5], [0.4]];
        assert_eq!(bin_seeds(x.view(), 1.0, 1), array![[0.0], [2.0]]);
        assert_eq!(bin_seeds(x.view(), 1.0, 3).nrows(), 0);
        // every sample its own bin: the samples come back
        assert_eq!(bin_seeds(x.view(), 0.1, 1), x);
        let mut ms = MeanShift::builder(Some(2.0)).with_bin_seeding(true);
        ms.fit(&two_groups()).unwrap();
        assert_eq!(ms.cluster_centers().unwrap().nrows(), 2);
    }

    #[test]
    fn gates_never_change_a_bit() {
        let x = Array2::from_shape_fn((400, 3), |(i, j)| {
            ((i * 37 + j * 11) % 41) as f64 / 10.0 + (i % 3) as f64 * 6.0
        });
        let run = || {
            let mut ms = MeanShift::builder(None);
            ms.fit(&x).unwrap();
            (
                ms.cluster_centers().unwrap().mapv(f64::to_bits),
                ms.labels().unwrap().clone(),
                ms.fitted_bandwidth().unwrap().to_bits(),
            )
        };
        let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let reference = with_gate(&SCAN_F64, usize::MAX, || {
            with_gate(&matmul::CACHE_RESIDENT_MAX_BYTES, 0, run)
        });
        // several chunks (17 rows each), swarm or sequential, scans forced parallel
        for resident in [0, usize::MAX] {
            let got = with_gate(&SCAN_F64, 0, || {
                with_gate(&matmul::CHUNK_ELEMS, 17 * 400, || {
                    with_gate(&matmul::CACHE_RESIDENT_MAX_BYTES, resident, run)
                })
            });
            assert_eq!(got, reference, "resident={resident}");
        }
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = two_groups();
        assert!(matches!(
            MeanShift::builder(Some(1.0)).predict(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(MeanShift::builder(Some(0.0)).fit(&x).is_err());
        assert!(MeanShift::builder(Some(-1.0)).fit(&x).is_err());
        assert!(MeanShift::builder(Some(f64::INFINITY)).fit(&x).is_err());
        assert!(MeanShift::builder(Some(1.0))
            .with_min_bin_freq(0)
            .fit(&x)
            .is_err());
        assert!(MeanShift::builder(Some(1.0))
            .fit(&array![[f64::NAN, 0.0]])
            .is_err());
        assert!(MeanShift::builder(Some(1.0))
            .fit(&Array2::<f64>::zeros((0, 2)))
            .is_err());
        assert!(MeanShift::builder(Some(1.0))
            .with_seeds(Some(array![[0.0]]))
            .fit(&x)
            .is_err());
        // no sample near any seed
        assert!(MeanShift::builder(Some(1.0))
            .with_seeds(Some(array![[100.0, 100.0]]))
            .fit(&x)
            .is_err());
    }

    #[test]
    fn save_and_load_round_trip() {
        let mut ms = MeanShift::builder(Some(2.0));
        ms.fit(&two_groups()).unwrap();
        let back = MeanShift::from_bytes(&ms.to_bytes().unwrap()).unwrap();
        assert_eq!(back.cluster_centers(), ms.cluster_centers());
        assert_eq!(
            back.predict_checked(&two_groups()).unwrap(),
            ms.predict_checked(&two_groups()).unwrap()
        );
    }

    #[test]
    fn original_api_counts_and_predict_noise() {
        // Two pairs 10 apart, bandwidth 2: each pair's seeds converge to its midpoint, which
        // holds 2 samples; a query 5 from both centers is -1 without cluster_all.
        let x = array![[0.0, 0.0], [1.0, 0.0], [10.0, 0.0], [11.0, 0.0]];
        let mut ms = MeanShift::new(2.0).unwrap().with_cluster_all(false);
        ms.fit(&x).unwrap();
        assert_eq!(ms.get_n_samples_per_center().unwrap().to_vec(), vec![2, 2]);
        let c = ms.get_cluster_centers().unwrap();
        let mut firsts = vec![c[[0, 0]], c[[1, 0]]];
        firsts.sort_by(f64::total_cmp);
        assert_eq!(firsts, vec![0.5, 10.5]);
        assert_eq!(ms.predict(&array![[5.5, 0.0]]).unwrap()[0], -1);
        let all = MeanShift::new(2.0).unwrap();
        assert!(all.get_cluster_all());
        assert!(matches!(
            MeanShift::new(1.0).unwrap().with_tolerance(0.0),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn original_estimate_bandwidth_parameters() {
        let x = two_groups();
        // n_samples at least the row count uses every row, whatever the seed.
        assert_eq!(
            estimate_bandwidth(&x, Some(0.3), Some(100), Some(1)).unwrap(),
            estimate_bandwidth_all(&x, 0.3).unwrap()
        );
        for q in [0.0, 1.0] {
            assert!(matches!(
                estimate_bandwidth(&x, Some(q), None, None),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert!(matches!(
            estimate_bandwidth(&x, None, Some(0), None),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
