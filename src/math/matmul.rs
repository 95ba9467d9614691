//! The matrix-product adapter over gemmkit-ndarray.
//!
//! gemmkit does the products and owns their scheduling (its work gate, worker ramp and pool
//! tiers live under [`crate::tuning::matmul::backend`]). This module adds only what the
//! adapter lacks: an allocating product with an explicit [`Parallelism`] ([`dot_par`]),
//! 1-D operands ([`matvec`]), the fused bias/activation product, and the row-chunk tiling
//! policy ([`tiled_product`]) for products too large to materialise at once.

use crate::declare_gate;
use crate::error::{Error, Result};
pub use gemmkit_ndarray::{Activation, Bias, Parallelism};
use gemmkit_ndarray::{FusedScalar, GemmScalar};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis, Zip};
use rayon::prelude::*;
use std::ops::Range;

declare_gate! {
    /// Element budget of one row-chunk of a tiled product (`rows * cols` of the chunk).
    pub CHUNK_ELEMS: matmul::chunk_elems = 33_554_432, "elements per row-chunk"
}

declare_gate! {
    /// Right-hand operands up to this many bytes stay resident in the shared L3, so a tiled
    /// product runs its row-chunks as a swarm of serial products in parallel; larger ones
    /// run chunk after chunk, each product parallel inside gemmkit.
    pub CACHE_RESIDENT_MAX_BYTES: matmul::cache_resident_max_bytes = 67_108_864, "bytes"
}

fn check_inner(a: (usize, usize), b: (usize, usize)) -> Result<()> {
    if a.1 != b.0 {
        return Err(Error::invalid_input(format!(
            "matmul: shapes {:?} and {:?} are not aligned: {} (dim 1) != {} (dim 0)",
            a, b, a.1, b.0
        )));
    }
    Ok(())
}

/// The checks of a product written into a caller's `out`: aligned operands, and an output
/// of the product's shape.
fn check_into(a: (usize, usize), b: (usize, usize), out: (usize, usize)) -> Result<()> {
    check_inner(a, b)?;
    if out != (a.0, b.1) {
        return Err(Error::invalid_input(format!(
            "matmul: output is {:?}, the product is {:?}",
            out,
            (a.0, b.1)
        )));
    }
    Ok(())
}

/// `a · b` into a fresh row-major array with gemmkit's automatic parallelism.
pub fn dot<T: GemmScalar>(a: ArrayView2<T>, b: ArrayView2<T>) -> Result<Array2<T>> {
    dot_par(a, b, Parallelism::default())
}

/// `a · b` with an explicit [`Parallelism`]. Any strides (transposed, sliced, reversed views)
/// are read in place.
pub fn dot_par<T: GemmScalar>(
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    par: Parallelism,
) -> Result<Array2<T>> {
    check_inner(a.dim(), b.dim())?;
    let mut c = Array2::from_elem((a.nrows(), b.ncols()), T::ZERO);
    if a.ncols() > 0 && !c.is_empty() {
        gemmkit_ndarray::gemm(T::ONE, &a, &b, T::ZERO, &mut c, capped(par));
    }
    Ok(c)
}

/// `out += a · b` with an explicit [`Parallelism`] (any strides): a deterministic
/// accumulation, so a caller sums fixed blocks of a deep product into one buffer without a
/// partial per block.
pub fn dot_acc_into<T: GemmScalar>(
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    par: Parallelism,
    mut out: ArrayViewMut2<T>,
) -> Result<()> {
    check_into(a.dim(), b.dim(), out.dim())?;
    if a.ncols() > 0 && !out.is_empty() {
        gemmkit_ndarray::gemm(T::ONE, &a, &b, T::ONE, &mut out, capped(par));
    }
    Ok(())
}

/// `a · x` for a 1-D `x`: `x` is viewed as a `[k, 1]` column, so gemmkit takes its
/// bandwidth-bound GEMV path.
pub fn matvec<T: GemmScalar>(
    a: ArrayView2<T>,
    x: ArrayView1<T>,
    par: Parallelism,
) -> Result<Array1<T>> {
    check_inner(a.dim(), (x.len(), 1))?;
    let column = x.insert_axis(Axis(1));
    let product = dot_par(a, column, par)?;
    Ok(product.remove_axis(Axis(1)))
}

/// `act(a · b + bias)` in one fused pass (bias per output column).
pub fn dot_bias_act<T>(
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    bias: Option<ArrayView1<T>>,
    act: Option<Activation<T>>,
    par: Parallelism,
) -> Result<Array2<T>>
where
    T: FusedScalar + PartialOrd + std::ops::Mul<Output = T>,
{
    let mut c = Array2::from_elem((a.nrows(), b.ncols()), T::ZERO);
    dot_bias_act_into(a, b, bias, act, par, c.view_mut())?;
    Ok(c)
}

/// [`dot_bias_act`] written into `out` (`a.nrows() x b.ncols()`, any strides): every element
/// is overwritten, none is read, so callers hand in a slice of their own output and skip the
/// copy a fresh product would need.
///
/// The activation keeps NaN: gemmkit's fused `Relu`/`LeakyRelu` compute `max(v, 0)`, which
/// maps a NaN pre-activation to 0 and hides it (and maps -0 to +0), so the product and bias
/// are fused here and the activation runs as its own elementwise pass with the same
/// comparisons as the activation layers (`v < 0 ? 0 : v`, `v >= 0 ? v : slope * v`). A
/// select and one multiply are exact IEEE operations, so the bits do not depend on the ISA,
/// the thread count or the chunking, and equal `Dense` followed by `ReLU()`/`LeakyReLU()`.
pub fn dot_bias_act_into<T>(
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    bias: Option<ArrayView1<T>>,
    act: Option<Activation<T>>,
    par: Parallelism,
    mut out: ArrayViewMut2<T>,
) -> Result<()>
where
    T: FusedScalar + PartialOrd + std::ops::Mul<Output = T>,
{
    check_into(a.dim(), b.dim(), out.dim())?;
    let bias_slice = match &bias {
        Some(v) if v.len() != b.ncols() => {
            return Err(Error::invalid_input(format!(
                "matmul: bias has {} entries, the product has {} columns",
                v.len(),
                b.ncols()
            )))
        }
        Some(v) => Some(
            v.as_slice()
                .map(|s| s.to_vec())
                .unwrap_or_else(|| v.to_vec()),
        ),
        None => None,
    };
    if out.is_empty() {
        return Ok(());
    }
    if a.ncols() == 0 {
        // An empty inner dimension: the product is zero, then bias and activation apply.
        out.fill(T::ZERO);
    }
    gemmkit_ndarray::gemm_fused(
        T::ONE,
        &a,
        &b,
        T::ZERO,
        &mut out,
        bias_slice.as_deref().map(Bias::PerCol),
        None,
        capped(par),
    );
    match act {
        None => {}
        Some(Activation::Relu) => out.map_inplace(|v| {
            if *v < T::ZERO {
                *v = T::ZERO;
            }
        }),
        Some(Activation::LeakyRelu(slope)) => out.map_inplace(|v| {
            // NaN is not >= 0 and becomes slope * NaN = NaN
            if !matches!(
                (*v).partial_cmp(&T::ZERO),
                Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
            ) {
                *v = slope * *v;
            }
        }),
    }
    Ok(())
}

/// Rows per block of [`gram`]: a function of the width only, so the grouping (and the bits)
/// never depend on threads or gates.
fn gram_block_rows(cols: usize) -> usize {
    (crate::math::reduction::BLOCK * 16 / cols.max(1)).max(64)
}

/// `xᵀ x` for a tall `x` (`n x d`), as a deterministic blocked sum of per-block products.
///
/// gemmkit parallelises a deep-k product by giving workers private copies of the operand
/// panels; for Gram matrices of tall data that costs more memory than the data itself.
/// Summing `x_bᵀ x_b` over fixed row blocks with the reduction engine keeps memory at one
/// `d x d` partial per block and parallelises behind the f64 sum gate.
pub fn gram(x: ArrayView2<f64>) -> Array2<f64> {
    let (gram, _) = blocked_gram(x, |xb| {
        let part = dot_par(xb.t(), xb, Parallelism::Serial).expect("aligned by construction");
        (part, 0.0)
    });
    gram
}

/// `(x - mean)ᵀ (x - mean)` for a tall `x` (`n x d`, `mean` one value per column), blocked as
/// [`gram`] with each block centred in a block-sized buffer: the scatter matrix of data
/// too large to copy centred, from the same exactly centred values a copy would hold. Also
/// the largest centred magnitude (NaN skipped), for the caller's range check.
pub fn centered_gram(x: ArrayView2<f64>, mean: ArrayView1<f64>) -> (Array2<f64>, f64) {
    assert_eq!(x.ncols(), mean.len(), "centered_gram: one mean per column");
    blocked_gram(x, |xb| {
        let mut centred = xb.to_owned();
        Zip::from(centred.rows_mut()).for_each(|mut row| row -= &mean);
        let largest = crate::validation::max_abs(&centred.view());
        let part = dot_par(centred.t(), centred.view(), Parallelism::Serial)
            .expect("aligned by construction");
        (part, largest)
    })
}

/// The sum of the `block_gram(x_b)` products over [`gram_block_rows`]-row blocks `x_b`, in
/// block order, with the largest of the values returned beside them.
fn blocked_gram<F>(x: ArrayView2<f64>, block_gram: F) -> (Array2<f64>, f64)
where
    F: Fn(ArrayView2<f64>) -> (Array2<f64>, f64) + Sync,
{
    let (n, d) = x.dim();
    crate::math::reduction::blocked_fold(
        n,
        gram_block_rows(d),
        &crate::math::reduction::SUM_F64,
        n.saturating_mul(d),
        (Array2::<f64>::zeros((d, d)), 0.0),
        |rows| block_gram(x.slice(ndarray::s![rows, ..])),
        |(acc, high), (part, block_high)| (acc + part, high.max(block_high)),
    )
}

/// Chunk starts are multiples of this, so every row sits at the same place in its
/// microkernel tile as in one whole product.
const CHUNK_ROW_ALIGN: usize = 64;

/// The fewest rows a chunk may have: more than gemmkit's small-shape routes (tiny blocking,
/// small m x n) take, whose depth blocking differs from the general driver's. Chunks at least
/// this tall take the route and the depth panels the whole product takes, so each output
/// element is summed in the same order whatever the chunk size.
pub fn min_chunk_rows() -> usize {
    let small_shapes = gemmkit_ndarray::tuning::tiny_block_dim()
        .max(gemmkit_ndarray::tuning::small_mn_dim())
        .min(1 << 20);
    (small_shapes + 1).next_multiple_of(CHUNK_ROW_ALIGN)
}

/// The row ranges a product with `cols` output columns is cut into: about
/// `min(CHUNK_ELEMS, max_chunk_elems)` elements each, but never fewer than
/// [`min_chunk_rows`] rows (a short tail joins the chunk before it) and aligned to
/// [`CHUNK_ROW_ALIGN`], so the chunking knobs never change a bit of the result.
pub fn row_chunks(rows: usize, cols: usize, max_chunk_elems: usize) -> Vec<Range<usize>> {
    let floor = min_chunk_rows();
    let budget_rows = CHUNK_ELEMS.get().min(max_chunk_elems) / cols.max(1);
    let step = budget_rows
        .clamp(floor, rows.max(floor))
        .next_multiple_of(CHUNK_ROW_ALIGN);
    let mut chunks = Vec::with_capacity(rows / step + 1);
    let mut start = 0;
    while start < rows {
        let end = if rows - start < step + floor {
            rows
        } else {
            start + step
        };
        chunks.push(start..end);
        start = end;
    }
    chunks
}

/// The row-chunk tiling policy: compute `a · b` chunk by chunk of rows of `a` and hand each
/// chunk to `consume(first_row, chunk)` without ever materialising the whole product.
///
/// If `b` fits in [`CACHE_RESIDENT_MAX_BYTES`] the chunks run as a rayon swarm, each a serial
/// product (no fork inside a fork); otherwise chunks run one after another, each parallel
/// inside gemmkit. Both paths compute the same chunks, and gemmkit's results do not depend on
/// its worker count, so the choice never changes a bit. `consume` may run concurrently and in
/// any order.
pub fn tiled_product<T, F>(a: ArrayView2<T>, b: ArrayView2<T>, consume: F) -> Result<()>
where
    T: GemmScalar,
    F: Fn(usize, ArrayView2<T>) + Sync,
{
    tiled_product_capped(a, b, usize::MAX, |start, chunk| {
        consume(start, chunk.view())
    })
}

/// [`tiled_product`] whose chunks hold at most `max_chunk_elems` elements (the smaller of it
/// and [`CHUNK_ELEMS`] applies), handed over mutable so the consumer can finish them in place.
/// For consumers that reduce each chunk at once (KNN's top-k selection): a chunk small enough
/// to stay in cache is read back from cache instead of memory, and many chunks balance better
/// over the swarm. Each worker reuses one chunk buffer (gemmkit never reads the output at
/// `beta = 0`), so chunks cost no allocation or zeroing; the bits are those of fresh products.
pub fn tiled_product_capped<T, F>(
    a: ArrayView2<T>,
    b: ArrayView2<T>,
    max_chunk_elems: usize,
    consume: F,
) -> Result<()>
where
    T: GemmScalar,
    F: Fn(usize, ArrayViewMut2<T>) + Sync,
{
    check_inner(a.dim(), b.dim())?;
    let rows = a.nrows();
    if rows == 0 {
        return Ok(());
    }
    let chunks = row_chunks(rows, b.ncols(), max_chunk_elems);
    let tallest = chunks.iter().map(|r| r.len()).max().unwrap_or(0);
    let new_buffer = || Array2::from_elem((tallest, b.ncols()), T::ZERO);
    let chunk = |buffer: &mut Array2<T>, rows: Range<usize>, par: Parallelism| {
        let (start, end) = (rows.start, rows.end);
        let block = a.slice(ndarray::s![start..end, ..]);
        let mut out = buffer.slice_mut(ndarray::s![..end - start, ..]);
        if a.ncols() == 0 {
            out.fill(T::ZERO);
        } else if !out.is_empty() {
            gemmkit_ndarray::gemm(T::ONE, &block, &b, T::ZERO, &mut out, capped(par));
        }
        consume(start, out);
    };
    let b_bytes = b.len().saturating_mul(std::mem::size_of::<T>());
    if chunks.len() > 1
        && CACHE_RESIDENT_MAX_BYTES.admits(b_bytes)
        && !in_rayon_worker()
        && !crate::parallel::serial_only()
    {
        chunks
            .into_par_iter()
            .for_each_init(new_buffer, |buffer, s| {
                chunk(buffer, s, Parallelism::Serial)
            });
    } else {
        let par = if in_rayon_worker() {
            Parallelism::Serial
        } else {
            Parallelism::default()
        };
        let mut buffer = new_buffer();
        chunks.into_iter().for_each(|r| chunk(&mut buffer, r, par));
    }
    Ok(())
}

/// Whether the caller already runs inside a rayon parallel region: products started there ask
/// gemmkit for [`Parallelism::Serial`] so work does not fork twice. The top of a call that
/// [`crate::parallel::install`] moved onto a pool's thread is not inside a region yet.
pub fn in_rayon_worker() -> bool {
    rayon::current_thread_index().is_some() && !crate::parallel::at_entry_root()
}

/// `par` within the worker count set in [`crate::parallel`]: gemmkit sizes its own pools from
/// the core count, so below it the request becomes an explicit cap (one worker: serial).
/// gemmkit's blocking does not depend on its worker count, so the cap never changes a bit.
#[inline]
pub fn capped(par: Parallelism) -> Parallelism {
    match (par, crate::parallel::product_width_cap()) {
        (Parallelism::Serial, _) | (_, None) => par,
        (_, Some(1)) => Parallelism::Serial,
        (Parallelism::Rayon(0), Some(n)) => Parallelism::Rayon(n),
        (Parallelism::Rayon(req), Some(n)) => Parallelism::Rayon(req.min(n)),
    }
}

/// The parallelism a product should request from where it is called.
pub fn nested_parallelism() -> Parallelism {
    if in_rayon_worker() {
        Parallelism::Serial
    } else {
        capped(Parallelism::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn matrix<T: From<f32>>(rows: usize, cols: usize, seed: u32) -> Array2<T> {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            let v = ((i * 131 + j * 71 + seed as usize * 17) % 1009) as f32 / 1009.0 - 0.5;
            T::from(v)
        })
    }

    fn naive(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
        let mut c = Array2::zeros((a.nrows(), b.ncols()));
        for i in 0..a.nrows() {
            for j in 0..b.ncols() {
                let mut s = 0.0;
                for p in 0..a.ncols() {
                    s += a[[i, p]] * b[[p, j]];
                }
                c[[i, j]] = s;
            }
        }
        c
    }

    fn bits<T: Copy + Into<f64>>(m: &Array2<T>) -> Vec<u64> {
        m.iter().map(|&v| v.into().to_bits()).collect()
    }

    /// Every product of `shapes` (operands drawn with `seeds`) at each of `workers` workers
    /// equals the serial product bit for bit.
    fn assert_same_bits_at_worker_counts<T: GemmScalar + From<f32> + Into<f64>>(
        shapes: &[(usize, usize, usize)],
        workers: &[usize],
        seeds: (u32, u32),
    ) {
        for &(m, k, n) in shapes {
            let a = matrix::<T>(m, k, seeds.0);
            let b = matrix::<T>(k, n, seeds.1);
            let serial = dot_par(a.view(), b.view(), Parallelism::Serial).unwrap();
            for &w in workers {
                let par = dot_par(a.view(), b.view(), Parallelism::Rayon(w)).unwrap();
                assert_eq!(bits(&serial), bits(&par), "shape {m}x{k}x{n}, {w} workers");
            }
        }
    }

    #[test]
    fn f64_products_are_bitwise_identical_at_every_worker_count() {
        // square, shallow-k, deep-k
        let shapes = [(384, 384, 384), (1024, 16, 768), (96, 8192, 80)];
        assert_same_bits_at_worker_counts::<f64>(&shapes, &[2, 4, 8, 16, 32], (1, 2));
    }

    #[test]
    fn f32_products_are_bitwise_identical_at_2_4_32_workers() {
        let shapes = [(512, 512, 512), (2048, 32, 300)];
        assert_same_bits_at_worker_counts::<f32>(&shapes, &[2, 4, 32], (3, 4));
    }

    #[test]
    fn matvec_serial_equals_auto() {
        let a = matrix::<f64>(4096, 1000, 5);
        let x = matrix::<f64>(1000, 1, 6).column(0).to_owned();
        let s = matvec(a.view(), x.view(), Parallelism::Serial).unwrap();
        let p = matvec(a.view(), x.view(), Parallelism::default()).unwrap();
        assert_eq!(
            s.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let reference = naive(&a, &x.clone().insert_axis(Axis(1)));
        for (got, want) in s.iter().zip(reference.iter()) {
            assert!((got - want).abs() < 1e-10);
        }
    }

    #[test]
    fn fused_bias_relu_equals_plain_product_then_map() {
        let a = matrix::<f32>(300, 200, 7);
        let b = matrix::<f32>(200, 150, 8);
        let bias = Array1::from_shape_fn(150, |j| (j as f32) * 0.01 - 0.7);
        let fused = dot_bias_act(
            a.view(),
            b.view(),
            Some(bias.view()),
            Some(Activation::Relu),
            Parallelism::default(),
        )
        .unwrap();
        let mut plain = dot_par(a.view(), b.view(), Parallelism::default()).unwrap();
        for mut row in plain.rows_mut() {
            ndarray::Zip::from(&mut row).and(&bias).for_each(|v, &bj| {
                let z = *v + bj;
                *v = if z < 0.0 { 0.0 } else { z };
            });
        }
        assert_eq!(
            fused.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            plain.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn fused_activations_keep_nan_like_the_unfused_map() {
        // A NaN in one row of `a` makes that row's products NaN; ReLU and LeakyReLU must
        // keep it (gemmkit's max(v, 0) epilogue would turn it into 0), serial and parallel.
        let mut a = matrix::<f32>(300, 64, 11);
        a[[5, 3]] = f32::NAN;
        let b = matrix::<f32>(64, 80, 12);
        let bias = Array1::from_shape_fn(80, |j| (j as f32) * 0.01 - 0.4);
        for act in [Activation::Relu, Activation::LeakyRelu(0.2)] {
            let mut bits = Vec::new();
            for par in [Parallelism::Serial, Parallelism::default()] {
                let fused =
                    dot_bias_act(a.view(), b.view(), Some(bias.view()), Some(act), par).unwrap();
                assert!(fused.row(5).iter().all(|v| v.is_nan()), "{act:?}");
                assert!(fused.row(4).iter().all(|v| v.is_finite()));
                let mut plain = dot_par(a.view(), b.view(), par).unwrap();
                for mut row in plain.rows_mut() {
                    ndarray::Zip::from(&mut row).and(&bias).for_each(|v, &bj| {
                        let z = *v + bj;
                        *v = match act {
                            Activation::Relu => {
                                if z < 0.0 {
                                    0.0
                                } else {
                                    z
                                }
                            }
                            Activation::LeakyRelu(s) => {
                                if z >= 0.0 {
                                    z
                                } else {
                                    s * z
                                }
                            }
                        };
                    });
                }
                let f: Vec<u32> = fused.iter().map(|v| v.to_bits()).collect();
                let p: Vec<u32> = plain.iter().map(|v| v.to_bits()).collect();
                assert_eq!(f, p, "{act:?}");
                bits.push(f);
            }
            assert_eq!(bits[0], bits[1]);
        }
    }

    #[test]
    fn products_match_a_naive_reference_with_transposed_and_sliced_operands() {
        let a = matrix::<f64>(70, 50, 9);
        let b = matrix::<f64>(50, 40, 10);
        let want = naive(&a, &b);
        let close = |got: &Array2<f64>, want: &Array2<f64>| {
            assert_eq!(got.dim(), want.dim());
            for (g, w) in got.iter().zip(want.iter()) {
                assert!((g - w).abs() < 1e-12, "{g} vs {w}");
            }
        };
        close(&dot(a.view(), b.view()).unwrap(), &want);
        // transposed operands: (bᵀ aᵀ)ᵀ = a b
        let at = a.t().to_owned();
        let bt = b.t().to_owned();
        close(&dot(at.t(), bt.t()).unwrap(), &want);
        close(&dot(bt.view(), at.view()).unwrap().t().to_owned(), &want);
        // sliced with steps and reversed
        let big = matrix::<f64>(140, 150, 11);
        let sa = big.slice(ndarray::s![..;2, ..;3]);
        let sb = big.slice(ndarray::s![10..110;-2, 7..47]);
        close(
            &dot(sa, sb).unwrap(),
            &naive(&sa.to_owned(), &sb.to_owned()),
        );
        assert!(dot(a.view(), a.view()).is_err());
        assert_eq!(
            dot(
                Array2::<f64>::zeros((3, 0)).view(),
                Array2::<f64>::zeros((0, 4)).view()
            )
            .unwrap(),
            Array2::<f64>::zeros((3, 4))
        );
    }

    #[test]
    fn gram_is_bitwise_gate_independent_and_matches_the_product() {
        let x = matrix::<f64>(50_003, 7, 14);
        let (s, p) =
            crate::gate::serial_and_parallel(&crate::math::reduction::SUM_F64, || gram(x.view()));
        assert_eq!(bits(&s), bits(&p));
        let reference = naive(&x.t().to_owned(), &x);
        for (g, w) in s.iter().zip(reference.iter()) {
            assert!((g - w).abs() < 1e-9 * w.abs().max(1.0), "{g} vs {w}");
        }
        assert_eq!(
            gram(Array2::<f64>::zeros((0, 3)).view()),
            Array2::<f64>::zeros((3, 3))
        );
    }

    #[test]
    fn centered_gram_is_the_gram_of_the_centred_copy_bit_for_bit() {
        // offset columns, so centring matters; a column of one value has a zero row and column
        let mut x = matrix::<f64>(20_011, 6, 3);
        x.column_mut(0).mapv_inplace(|v| v + 1e3);
        x.column_mut(5).fill(-2.5);
        x[[17, 2]] = -40.0; // the largest centred magnitude
        let mean = x.mean_axis(ndarray::Axis(0)).unwrap();
        let centred = &x - &mean;
        let (s, p) = crate::gate::serial_and_parallel(&crate::math::reduction::SUM_F64, || {
            centered_gram(x.view(), mean.view())
        });
        assert_eq!(bits(&s.0), bits(&p.0));
        assert_eq!(s.1.to_bits(), p.1.to_bits());
        assert_eq!(bits(&s.0), bits(&gram(centred.view())));
        let largest = centred.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert_eq!(s.1, largest);
        assert!(s
            .0
            .row(5)
            .iter()
            .chain(s.0.column(5).iter())
            .all(|&v| v == 0.0));
    }

    /// Under both tiling strategies (the cache-resident knob at `usize::MAX`, then `0`), the
    /// chunks that `tile` hands its consumer assemble into the whole product `a · b`, bit for
    /// bit.
    fn assert_chunks_assemble_product(
        a: &Array2<f64>,
        b: &Array2<f64>,
        tile: impl Fn(&(dyn Fn(usize, ArrayView2<f64>) + Sync)),
    ) {
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let whole = dot(a.view(), b.view()).unwrap();
        for resident in [usize::MAX, 0] {
            let got = std::sync::Mutex::new(Array2::<f64>::zeros((a.nrows(), b.ncols())));
            let assemble = |start: usize, chunk: ArrayView2<f64>| {
                got.lock()
                    .unwrap()
                    .slice_mut(ndarray::s![start..start + chunk.nrows(), ..])
                    .assign(&chunk);
            };
            crate::gate::with_gate(&CACHE_RESIDENT_MAX_BYTES, resident, || tile(&assemble));
            assert_eq!(
                bits(&got.into_inner().unwrap()),
                bits(&whole),
                "resident={resident}"
            );
        }
    }

    #[test]
    fn capped_chunks_are_fresh_products_even_when_consumers_scribble_on_them() {
        let a = matrix::<f64>(333, 16, 14);
        let b = matrix::<f64>(16, 100, 15);
        assert_chunks_assemble_product(&a, &b, |assemble| {
            tiled_product_capped(a.view(), b.view(), 40 * 100, |start, mut chunk| {
                assemble(start, chunk.view());
                chunk.fill(f64::NAN); // the reused buffer must not leak into later chunks
            })
            .unwrap()
        });
        // no inner dimension: every chunk is zeros
        let empty_k = Array2::<f64>::zeros((5, 0));
        tiled_product_capped(
            empty_k.view(),
            Array2::<f64>::zeros((0, 3)).view(),
            6,
            |_, c| {
                assert!(c.iter().all(|&v| v == 0.0));
            },
        )
        .unwrap();
    }

    #[test]
    fn tiled_product_matches_whole_product_under_both_strategies() {
        let a = matrix::<f64>(1000, 24, 12);
        let b = matrix::<f64>(24, 300, 13);
        assert_chunks_assemble_product(&a, &b, |assemble| {
            crate::gate::with_gate(&CHUNK_ELEMS, 64 * 300, || {
                tiled_product(a.view(), b.view(), assemble).unwrap()
            })
        });
    }

    /// The tiled product at chunk budgets 0, 1, small, around the floor and unlimited gives
    /// the whole product's bits, for shapes on both sides of gemmkit's small-shape routes,
    /// gemv shapes (n = 1) and deep and shallow contractions.
    fn chunking_is_invisible<T>(budgets: &[usize], shapes: &[(usize, usize, usize)])
    where
        T: GemmScalar + From<f32> + Into<f64> + Copy + Send + Sync,
    {
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for &(m, k, n) in shapes {
            let a = matrix::<T>(m, k, 3);
            let b = matrix::<T>(k, n, 4);
            let whole = bits(&dot(a.view(), b.view()).unwrap());
            for &budget in budgets {
                let got = std::sync::Mutex::new(Array2::<T>::from_elem((m, n), T::ZERO));
                crate::gate::with_gate(&CHUNK_ELEMS, budget, || {
                    tiled_product(a.view(), b.view(), |start, chunk| {
                        got.lock()
                            .unwrap()
                            .slice_mut(ndarray::s![start..start + chunk.nrows(), ..])
                            .assign(&chunk);
                    })
                    .unwrap()
                });
                let got = bits(&got.into_inner().unwrap());
                assert!(got == whole, "{m}x{k}x{n} at chunk budget {budget}");
            }
        }
    }

    #[test]
    fn chunk_budget_never_changes_a_bit() {
        let floor = min_chunk_rows();
        let budgets = [0, 1, 1000, 40 * floor + 1, usize::MAX];
        let shapes = [
            (1, 7, 5),
            (floor - 1, 30, 8),
            (floor + 3, 300, 40),
            (3 * floor + 17, 24, 300),
            (5 * floor + 1, 5, 3),
            (2 * floor + 9, 257, 1),
            (4 * floor, 64, 2),
        ];
        chunking_is_invisible::<f64>(&budgets, &shapes);
        chunking_is_invisible::<f32>(&budgets, &shapes);
    }

    #[test]
    fn row_chunks_cover_the_rows_aligned_and_never_below_the_floor() {
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let floor = min_chunk_rows();
        for rows in [0, 1, floor, floor + 1, 2 * floor - 1, 10 * floor + 5] {
            for budget in [0, 1, 77 * 13, usize::MAX] {
                let chunks = crate::gate::with_gate(&CHUNK_ELEMS, budget, || {
                    row_chunks(rows, 13, usize::MAX)
                });
                let mut next = 0;
                for r in &chunks {
                    assert_eq!(r.start, next);
                    assert_eq!(r.start % CHUNK_ROW_ALIGN, 0);
                    assert!(r.len() >= floor || chunks.len() == 1);
                    next = r.end;
                }
                assert_eq!(next, rows);
            }
        }
    }
}
