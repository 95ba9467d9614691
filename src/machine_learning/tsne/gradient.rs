//! The objective: KL divergence of `P` from the Student-t affinities of the embedding, and its
//! gradient, exact over all pairs or Barnes-Hut (attraction over the sparse `P`, repulsion
//! from the space tree).

use super::affinities::{Affinities, SparseP};
use super::space_tree::SpaceTree;
use super::{per_point, MACHINE_EPSILON};
use crate::math::reduction;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

/// Floor of the Barnes-Hut KL terms (scikit-learn's `FLOAT32_TINY`).
const FLOAT32_TINY: f64 = f32::MIN_POSITIVE as f64;
/// Cost of one Barnes-Hut cell visit or one attractive-force term, in [`SCAN_F64`] units: a
/// distance, a division and a few multiply-adds; measured serially at ~2-10 ns per estimated
/// visit.
pub const TREE_VISIT_COST: usize = 4;

/// [`SCAN_F64`] work of one Barnes-Hut gradient: `nnz` attractive terms plus, per point, about
/// `8 log2(n)` cells per child slot (`2^c`) visited for the repulsive forces.
pub fn barnes_hut_work(n: usize, nnz: usize, c: usize) -> usize {
    let visits = 8 * (usize::BITS - n.leading_zeros()) as usize * (1usize << c.min(3));
    nnz.saturating_add(n.saturating_mul(visits))
        .saturating_mul(TREE_VISIT_COST)
}

/// [`SCAN_F64`] work of one pass of the exact gradient: `n²` pairs of `c` coordinates plus the
/// Student-t weight (a division, about two scan elements).
pub fn exact_work(n: usize, c: usize) -> usize {
    n.saturating_mul(n).saturating_mul(c + 2)
}

/// Student-t weights `w(d²) = (dof / (dof + d²))^((dof + 1) / 2)`, `dof = max(n_components - 1, 1)`.
pub(super) struct StudentT {
    dof: f64,
    exponent: f64,
}

impl StudentT {
    pub(super) fn new(n_components: usize) -> Self {
        let dof = (n_components.saturating_sub(1)).max(1) as f64;
        Self {
            dof,
            exponent: (dof + 1.0) / 2.0,
        }
    }

    #[inline]
    pub(super) fn weight(&self, d2: f64) -> f64 {
        let q = self.dof / (self.dof + d2);
        if self.dof == 1.0 {
            q
        } else {
            q.powf(self.exponent)
        }
    }

    /// Gradient factor `2 (dof + 1) / dof`.
    pub(super) fn scale(&self) -> f64 {
        2.0 * (self.dof + 1.0) / self.dof
    }
}

pub(super) struct Objective {
    pub(super) angle: f64,
}

impl Objective {
    /// KL divergence (when `with_error`) and its gradient at `y`.
    pub(super) fn evaluate(
        &self,
        p: &Affinities,
        y: ArrayView2<f64>,
        with_error: bool,
    ) -> (f64, Array2<f64>) {
        match p {
            Affinities::Dense(p) => exact_gradient(p.view(), y, with_error),
            Affinities::Sparse(p) => barnes_hut_gradient(p, y, self.angle, with_error),
        }
    }
}

#[inline]
pub(super) fn squared_distance(y: ArrayView2<f64>, i: usize, j: usize) -> f64 {
    let (a, b) = (y.row(i), y.row(j));
    a.iter()
        .zip(b.iter())
        .fold(0.0, |s, (&u, &v)| s + (u - v) * (u - v))
}

/// Exact KL divergence and gradient over all pairs (scikit-learn's `_kl_divergence`).
pub fn exact_gradient(
    p: ArrayView2<f64>,
    y: ArrayView2<f64>,
    with_error: bool,
) -> (f64, Array2<f64>) {
    let (n, c) = y.dim();
    let kernel = StudentT::new(c);
    let work = exact_work(n, c);
    // Pass 1: the Student-t weights and the normaliser Z = sum over i != j.
    let weights: Vec<(Vec<f64>, f64)> = per_point(n, work, |i| {
        let row: Vec<f64> = (0..n)
            .map(|j| {
                if i == j {
                    0.0
                } else {
                    kernel.weight(squared_distance(y, i, j))
                }
            })
            .collect();
        let s = row.iter().sum::<f64>();
        (row, s)
    });
    let row_sums = Array1::from_iter(weights.iter().map(|w| w.1));
    let z = reduction::sum(row_sums.view());
    // Pass 2: gradient rows and KL terms.
    let factor = kernel.scale();
    let rows: Vec<(Vec<f64>, f64)> = per_point(n, work, |i| {
        let w = &weights[i].0;
        let mut g = vec![0.0; c];
        let mut kl = 0.0;
        for j in 0..n {
            if i == j {
                continue;
            }
            let q = (w[j] / z).max(MACHINE_EPSILON);
            let pij = p[[i, j]];
            let coeff = (pij - q) * w[j];
            for (ax, g) in g.iter_mut().enumerate() {
                *g += coeff * (y[[i, ax]] - y[[j, ax]]);
            }
            if with_error {
                kl += pij * (pij.max(MACHINE_EPSILON) / q).ln();
            }
        }
        g.iter_mut().for_each(|v| *v *= factor);
        (g, kl)
    });
    collect_gradient(rows, n, c, with_error)
}

fn collect_gradient(
    rows: Vec<(Vec<f64>, f64)>,
    n: usize,
    c: usize,
    with_error: bool,
) -> (f64, Array2<f64>) {
    let mut grad = Array2::<f64>::zeros((n, c));
    let mut terms = Array1::<f64>::zeros(n);
    for (i, (g, kl)) in rows.into_iter().enumerate() {
        grad.row_mut(i).assign(&Array1::from(g));
        terms[i] = kl;
    }
    let error = if with_error {
        reduction::sum(terms.view())
    } else {
        f64::NAN
    };
    (error, grad)
}

/// Barnes-Hut KL divergence and gradient (scikit-learn's `_kl_divergence_bh`): attractive
/// forces over the sparse `P`, repulsive forces from the space tree.
pub fn barnes_hut_gradient(
    p: &SparseP,
    y: ArrayView2<f64>,
    angle: f64,
    with_error: bool,
) -> (f64, Array2<f64>) {
    let (n, c) = y.dim();
    let kernel = StudentT::new(c);
    let tree = SpaceTree::build(y);
    let pts = &tree.pts;
    let theta2 = angle * angle;
    let work = barnes_hut_work(n, p.values.len(), c);
    let forces: Vec<([f64; 3], [f64; 3], f64)> = per_point(n, work, |i| {
        let yi = &pts[i];
        let mut neg = [0.0f64; 3];
        let sum_q = tree.repulsion(i, &kernel, theta2, &mut neg);
        let mut pos = [0.0f64; 3];
        let (cols, vals) = p.row(i);
        for (&j, &pij) in cols.iter().zip(vals) {
            let mut delta = [0.0f64; 3];
            let mut d2 = 0.0;
            for ax in 0..c {
                delta[ax] = yi[ax] - pts[j][ax];
                d2 += delta[ax] * delta[ax];
            }
            let coeff = pij * kernel.weight(d2);
            for ax in 0..c {
                pos[ax] += coeff * delta[ax];
            }
        }
        (pos, neg, sum_q)
    });
    let sums = Array1::from_iter(forces.iter().map(|f| f.2));
    let z = reduction::sum(sums.view());
    let factor = kernel.scale();
    let mut grad = Array2::<f64>::zeros((n, c));
    for (i, (pos, neg, _)) in forces.iter().enumerate() {
        for ax in 0..c {
            grad[[i, ax]] = factor * (pos[ax] - neg[ax] / z);
        }
    }
    let error = if with_error {
        let terms = per_point(n, p.values.len() * TREE_VISIT_COST, |i| {
            let (cols, vals) = p.row(i);
            cols.iter().zip(vals).fold(0.0, |acc, (&j, &pij)| {
                let q = kernel.weight(squared_distance(y, i, j)) / z;
                acc + pij * (pij.max(FLOAT32_TINY) / q.max(FLOAT32_TINY)).ln()
            })
        });
        reduction::sum(ArrayView1::from(&terms[..]))
    } else {
        f64::NAN
    };
    (error, grad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::machine_learning::tsne::test_data::blobs;
    use crate::machine_learning::tsne::{joint_probabilities_exact, joint_probabilities_knn};
    use crate::math::distance::SCAN_F64;

    /// The KL divergence of a dense P at y, written out directly (test oracle).
    fn kl(p: &Array2<f64>, y: &Array2<f64>) -> f64 {
        let n = y.nrows();
        let mut z = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    z += 1.0 / (1.0 + squared_distance(y.view(), i, j));
                }
            }
        }
        let mut total = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j && p[[i, j]] > 0.0 {
                    let q = 1.0 / (1.0 + squared_distance(y.view(), i, j)) / z;
                    total += p[[i, j]] * (p[[i, j]] / q).ln();
                }
            }
        }
        total
    }

    #[test]
    fn exact_gradient_matches_finite_differences_of_the_kl_divergence() {
        let (x, _) = blobs(2, 6, 3);
        let p = joint_probabilities_exact(x.view(), 3.0).unwrap();
        let y = Array2::from_shape_fn((12, 2), |(i, j)| ((i * 2 + j) as f64 * 1.1).sin());
        let (error, grad) = exact_gradient(p.view(), y.view(), true);
        assert!((error - kl(&p, &y)).abs() < 1e-12);
        let h = 1e-6;
        for i in 0..12 {
            for ax in 0..2 {
                let mut a = y.clone();
                a[[i, ax]] += h;
                let mut b = y.clone();
                b[[i, ax]] -= h;
                let numeric = (kl(&p, &a) - kl(&p, &b)) / (2.0 * h);
                // Central differences: truncation O(h²) plus rounding ~1e-16 / h.
                assert!(
                    (grad[[i, ax]] - numeric).abs() < 1e-7,
                    "{i},{ax}: {} vs {numeric}",
                    grad[[i, ax]]
                );
            }
        }
    }

    #[test]
    fn barnes_hut_with_zero_angle_is_the_exact_gradient() {
        let (x, _) = blobs(3, 10, 3);
        let sparse = joint_probabilities_knn(x.view(), 4.0, 13).unwrap();
        let mut dense = Array2::<f64>::zeros((30, 30));
        for i in 0..30 {
            let (cols, vals) = sparse.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                dense[[i, j]] = v;
            }
        }
        for c in [1usize, 2, 3] {
            let y =
                Array2::from_shape_fn((30, c), |(i, j)| ((i * 3 + j) as f64 * 0.77).cos() * 2.0);
            let (e_bh, g_bh) = barnes_hut_gradient(&sparse, y.view(), 0.0, true);
            let (_, g_exact) = exact_gradient_without_floor(&dense, &y);
            for (a, b) in g_bh.iter().zip(g_exact.iter()) {
                assert!((a - b).abs() < 1e-12 * (1.0 + b.abs()), "c={c}: {a} vs {b}");
            }
            if c == 2 {
                assert!((e_bh - kl(&dense, &y)).abs() < 1e-10);
            }
            // A real opening angle stays close to the exact forces.
            let (_, g_half) = barnes_hut_gradient(&sparse, y.view(), 0.5, false);
            let norm = g_exact.iter().map(|v| v * v).sum::<f64>().sqrt();
            let diff = g_half
                .iter()
                .zip(g_exact.iter())
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt();
            assert!(diff < 0.1 * norm, "c={c}: relative error {}", diff / norm);
        }
    }

    /// Oracle for the Barnes-Hut test: the exact t-SNE gradient written out from the
    /// definition (Student-t with dof = max(c - 1, 1)), without scikit-learn's eps floor on q.
    fn exact_gradient_without_floor(p: &Array2<f64>, y: &Array2<f64>) -> (f64, Array2<f64>) {
        let (n, c) = y.dim();
        let dof = (c.saturating_sub(1)).max(1) as f64;
        let w = |i: usize, j: usize| {
            (dof / (dof + squared_distance(y.view(), i, j))).powf((dof + 1.0) / 2.0)
        };
        let mut z = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    z += w(i, j);
                }
            }
        }
        let mut g = Array2::<f64>::zeros((n, c));
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    for ax in 0..c {
                        g[[i, ax]] += 2.0 * (dof + 1.0) / dof
                            * (p[[i, j]] - w(i, j) / z)
                            * w(i, j)
                            * (y[[i, ax]] - y[[j, ax]]);
                    }
                }
            }
        }
        (z, g)
    }

    #[test]
    fn per_point_kernels_agree_bitwise_serial_and_parallel() {
        let (x, _) = blobs(3, 12, 4);
        let (s, p) = serial_and_parallel(&SCAN_F64, || {
            joint_probabilities_knn(x.view(), 5.0, 16).unwrap()
        });
        assert_eq!(s, p);
        let (s, p) = serial_and_parallel(&SCAN_F64, || {
            joint_probabilities_exact(x.view(), 5.0).unwrap()
        });
        assert_eq!(
            s.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let sparse = joint_probabilities_knn(x.view(), 5.0, 16).unwrap();
        let y = Array2::from_shape_fn((36, 2), |(i, j)| ((i * 2 + j) as f64 * 0.9).sin());
        let (s, p) = serial_and_parallel(&SCAN_F64, || {
            barnes_hut_gradient(&sparse, y.view(), 0.5, true)
        });
        assert_eq!(s.0.to_bits(), p.0.to_bits());
        assert_eq!(
            s.1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.1.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}
