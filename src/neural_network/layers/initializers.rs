//! The layers' default weight initialisers, as Keras defines them: Glorot-uniform kernels
//! (every Dense, convolution and recurrent input kernel) and orthogonal recurrent kernels.
//! Each layer keeps its own random stream; these only say how a stream becomes weights.

use ndarray::{Array, Array2, Dimension};
use rand::Rng;

/// Glorot-uniform weights, `U(-l, l)` with `l = sqrt(6 / (fan_in + fan_out))`, fans counted
/// as Keras does: the last two axes times the receptive field (the product of the others),
/// so a `[fan_in, fan_out]` matrix and a `[k.., channels, filters]` kernel share one rule.
/// Draws in row-major order.
pub(crate) fn glorot_uniform<D: Dimension>(shape: D, rng: &mut impl Rng) -> Array<f32, D> {
    let s = shape.slice();
    let rank = s.len();
    let receptive: usize = s[..rank - 2].iter().product();
    let fan_in = receptive * s[rank - 2];
    let fan_out = receptive * s[rank - 1];
    let limit = (6.0 / (fan_in + fan_out) as f64).sqrt() as f32;
    Array::from_shape_simple_fn(shape, || rng.random_range(-limit..limit))
}

/// Keras's `Orthogonal` for a `[rows, cols]` matrix: a standard normal `[max, min]` draw,
/// its QR factor `Q` with `R`'s diagonal made positive (what modified Gram-Schmidt yields),
/// transposed when `rows < cols`, so the shorter side is orthonormal.
pub(crate) fn orthogonal(rows: usize, cols: usize, rng: &mut impl Rng) -> Array2<f32> {
    let (tall, narrow) = (rows.max(cols), rows.min(cols));
    // The draw is `[tall, narrow]` in row-major order; it is held transposed, one contiguous
    // row per column, so every pass below streams memory.
    let mut q = vec![0.0f64; tall * narrow];
    for i in 0..tall {
        for j in 0..narrow {
            q[j * tall + i] = standard_normal(rng);
        }
    }
    // Modified Gram-Schmidt, right-looking: once column k is normalised, every later column
    // loses its projection on it. Column j still sees k = 0, 1, .. in order with the same
    // operands as the column-by-column form, so the bits are that form's; the later columns'
    // dot products are independent, and run side by side in groups of `GROUP`.
    const GROUP: usize = 4;
    for k in 0..narrow {
        let (done, rest) = q.split_at_mut((k + 1) * tall);
        let qk = &mut done[k * tall..];
        // (ndarray sums a one-column draw, which is contiguous, in its unrolled order)
        let norm = if narrow == 1 {
            ndarray::aview1(qk).dot(&ndarray::aview1(qk)).sqrt()
        } else {
            serial_dot(qk, qk).sqrt()
        };
        // A degenerate draw (probability zero) would leave a zero column; keep it finite.
        let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
        qk.iter_mut().for_each(|v| *v *= scale);
        let qk = &*qk;
        let mut later = rest.chunks_exact_mut(tall);
        loop {
            let group: Vec<&mut [f64]> = later.by_ref().take(GROUP).collect();
            if group.is_empty() {
                break;
            }
            remove_projections(qk, group);
        }
    }
    let q = Array2::from_shape_vec((narrow, tall), q)
        .expect("narrow x tall")
        .mapv(|v| v as f32);
    if rows < cols {
        q
    } else {
        q.reversed_axes().as_standard_layout().into_owned()
    }
}

/// `a . b` summed in index order (one chain, as ndarray sums strided vectors).
fn serial_dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |s, (x, y)| s + x * y)
}

/// `col -= (col . q) q` for each column of the group, the dot products interleaved.
fn remove_projections(q: &[f64], mut group: Vec<&mut [f64]>) {
    let mut proj = [0.0f64; 4];
    let width = group.len();
    if width == 4 {
        let (a, b, c, d) = (&*group[0], &*group[1], &*group[2], &*group[3]);
        for i in 0..q.len() {
            proj[0] += a[i] * q[i];
            proj[1] += b[i] * q[i];
            proj[2] += c[i] * q[i];
            proj[3] += d[i] * q[i];
        }
    } else {
        for (p, col) in proj.iter_mut().zip(&group) {
            *p = serial_dot(col, q);
        }
    }
    for (col, &p) in group.iter_mut().zip(&proj[..width]) {
        let alpha = -p;
        col.iter_mut().zip(q).for_each(|(x, &y)| *x += alpha * y);
    }
}

/// One standard normal draw (Box-Muller).
fn standard_normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1], so ln is finite
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Ix2, Ix4};
    use rand::SeedableRng;

    #[test]
    fn glorot_limit_counts_fans_as_keras() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0);
        // Dense [20, 30]: l = sqrt(6 / 50).
        let w = glorot_uniform(Ix2(20, 30), &mut rng);
        let l = (6.0f32 / 50.0).sqrt();
        assert!(w.iter().all(|v| v.abs() < l));
        assert!(w.iter().any(|v| v.abs() > 0.9 * l), "draws fill the range");
        // Conv2D [3, 3, 4, 8]: fans 9*4 and 9*8, l = sqrt(6 / 108).
        let k = glorot_uniform(Ix4(3, 3, 4, 8), &mut rng);
        let l = (6.0f32 / 108.0).sqrt();
        assert!(k.iter().all(|v| v.abs() < l));
        assert!(k.iter().any(|v| v.abs() > 0.9 * l), "draws fill the range");
    }

    #[test]
    fn orthogonal_rows_or_columns_are_orthonormal() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for (rows, cols) in [(5, 12), (12, 5), (7, 7)] {
            let q = orthogonal(rows, cols, &mut rng).mapv(f64::from);
            let gram = if rows <= cols {
                q.dot(&q.t())
            } else {
                q.t().dot(&q)
            };
            let n = rows.min(cols);
            for i in 0..n {
                for j in 0..n {
                    let want = if i == j { 1.0 } else { 0.0 };
                    // f32 rounding of each entry: |err| <= n * 2^-24 per product sum.
                    assert!(
                        (gram[[i, j]] - want).abs() < n as f64 * 1e-6,
                        "{rows}x{cols}"
                    );
                }
            }
        }
    }

    /// The textbook column-by-column modified Gram-Schmidt on the `[tall, narrow]` draw.
    fn column_by_column(rows: usize, cols: usize, rng: &mut impl Rng) -> Array2<f32> {
        let (tall, narrow) = (rows.max(cols), rows.min(cols));
        let mut a = Array2::<f64>::from_shape_simple_fn((tall, narrow), || standard_normal(rng));
        for j in 0..narrow {
            for k in 0..j {
                let proj = a.column(j).dot(&a.column(k));
                let qk = a.column(k).to_owned();
                a.column_mut(j).scaled_add(-proj, &qk);
            }
            let norm = a.column(j).dot(&a.column(j)).sqrt();
            let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
            a.column_mut(j).mapv_inplace(|v| v * scale);
        }
        let q = a.mapv(|v| v as f32);
        if rows < cols {
            q.reversed_axes().as_standard_layout().into_owned()
        } else {
            q
        }
    }

    #[test]
    fn orthogonal_has_the_bits_of_column_by_column_gram_schmidt() {
        for (rows, cols) in [
            (1, 4),
            (4, 1),
            (1, 21),
            (21, 1),
            (5, 12),
            (12, 5),
            (7, 7),
            (9, 36),
            (33, 130),
        ] {
            let mut r1 = rand::rngs::StdRng::seed_from_u64(7);
            let mut r2 = rand::rngs::StdRng::seed_from_u64(7);
            let fast = orthogonal(rows, cols, &mut r1);
            let plain = column_by_column(rows, cols, &mut r2);
            assert_eq!(fast.dim(), (rows, cols));
            let same = fast
                .iter()
                .zip(&plain)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{rows}x{cols}");
            // the streams are left at the same place
            assert_eq!(r1.random::<u64>(), r2.random::<u64>());
        }
    }
}
