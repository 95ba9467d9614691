//! `Dot(axes, normalize)`: Keras's batch-wise dot product of two tensors, contracting one
//! axis of each (axes counted with the batch axis). Per sample, the first input becomes an
//! `(M, K)` matrix (its other axes kept in order, the contracted one last), the second a
//! `(K, N)` one, and the output is their product with shape `x_rest ++ y_rest` (`(1,)` when
//! both are vectors), as Keras's `batch_dot` gives. `normalize` L2-normalises both along the
//! contracted axis first, as Keras does: `x * min(rsqrt(sum(x^2)), 1e7)`.

use super::{check_batches, per_sample_shapes, MergeLayer};
use crate::error::{Error, Result};
use crate::neural_network::Tensor;
use ndarray::{Array3, ArrayView3, IxDyn};

/// Keras's `backend.epsilon()`: the smallest norm `normalize` divides by.
const NORM_EPSILON: f32 = 1e-7;

pub struct Dot {
    axes: [i64; 2],
    normalize: bool,
    cache: Option<DotCache>,
}

/// What the backward pass needs: the operands as matrices (normalised ones, with their
/// inverse norms) and how to put their gradients back into the input layouts.
struct DotCache {
    x: Array3<f32>,
    y: Array3<f32>,
    x_inv: Option<Vec<f32>>,
    y_inv: Option<Vec<f32>>,
    layouts: [Layout; 2],
}

/// How one input maps to its matrix: the permutation applied and the permuted shape.
#[derive(Clone)]
struct Layout {
    perm: Vec<usize>,
    permuted_shape: Vec<usize>,
}

impl Dot {
    /// `axes`: one axis for both inputs, or one each; negative counts from the end.
    pub fn new(axes: [i64; 2], normalize: bool) -> Self {
        Self {
            axes,
            normalize,
            cache: None,
        }
    }

    pub fn axes(&self) -> [i64; 2] {
        self.axes
    }

    pub fn normalize(&self) -> bool {
        self.normalize
    }

    /// The contracted axis of each batched input (per-sample ranks `ranks`).
    fn resolve(&self, ranks: [usize; 2]) -> Result<[usize; 2]> {
        let mut out = [0; 2];
        for i in 0..2 {
            let full = ranks[i] as i64 + 1;
            let a = if self.axes[i] < 0 {
                self.axes[i] + full
            } else {
                self.axes[i]
            };
            if a <= 0 || a >= full {
                return Err(Error::invalid_input(format!(
                    "Dot: axes={:?} is out of range for input {i} of rank {full} (the batch \
                     axis 0 cannot be contracted)",
                    self.axes
                )));
            }
            out[i] = a as usize;
        }
        Ok(out)
    }

    /// Per-sample output shape and each input's layout, for per-sample shapes `x`, `y`.
    fn plan(&self, x: &[usize], y: &[usize]) -> Result<(Vec<usize>, [Layout; 2])> {
        let [ax, ay] = self.resolve([x.len(), y.len()])?;
        if x[ax - 1] != y[ay - 1] {
            return Err(Error::invalid_input(format!(
                "Dot(axes={:?}): the contracted sizes differ: {} (input 0, per-sample shape \
                 {x:?}) and {} (input 1, per-sample shape {y:?})",
                self.axes,
                x[ax - 1],
                y[ay - 1]
            )));
        }
        let full = |s: &[usize]| [&[1usize][..], s].concat();
        let (xs, ys) = (full(x), full(y));
        // x: batch, the other axes in order, the contracted axis last
        let mut px: Vec<usize> = (0..xs.len()).filter(|&i| i != ax).collect();
        px.push(ax);
        // y: batch, the contracted axis, the other axes in order
        let mut py = vec![0, ay];
        py.extend((1..ys.len()).filter(|&i| i != ay));
        let mut out: Vec<usize> = px[1..px.len() - 1].iter().map(|&i| xs[i]).collect();
        out.extend(py[2..].iter().map(|&i| ys[i]));
        if out.is_empty() {
            out.push(1);
        }
        let layout = |perm: Vec<usize>, s: &[usize]| Layout {
            permuted_shape: perm.iter().map(|&i| s[i]).collect(),
            perm,
        };
        Ok((out, [layout(px, &xs), layout(py, &ys)]))
    }

    /// `t` laid out as `(batch, rows, cols)` after `layout`'s permutation, where rows are
    /// every permuted axis before `split` and columns the rest.
    fn as_matrices(t: &Tensor, layout: &Layout, split: usize) -> Array3<f32> {
        let b = t.shape()[0];
        let permuted = t.view().permuted_axes(IxDyn(&layout.perm));
        let rows: usize = layout.permuted_shape[1..split].iter().product();
        let cols: usize = layout.permuted_shape[split..].iter().product();
        let data: Vec<f32> = permuted.iter().copied().collect();
        Array3::from_shape_vec((b, rows, cols), data).expect("sizes of the permuted input")
    }

    /// Puts a `(batch, rows, cols)` gradient back into the input's own layout.
    fn from_matrices(m: Array3<f32>, layout: &Layout, batch: usize) -> Tensor {
        let mut shape = layout.permuted_shape.clone();
        shape[0] = batch;
        let permuted = Tensor::from_shape_vec(IxDyn(&shape), m.into_raw_vec_and_offset().0)
            .expect("sizes of the permuted input");
        let mut inverse = vec![0; layout.perm.len()];
        for (i, &p) in layout.perm.iter().enumerate() {
            inverse[p] = i;
        }
        permuted
            .permuted_axes(IxDyn(&inverse))
            .as_standard_layout()
            .into_owned()
    }

    fn operands(&self, inputs: &[&Tensor]) -> Result<(DotCache, Vec<usize>)> {
        check_batches("Dot", inputs)?;
        let shapes = per_sample_shapes(inputs);
        let out = self.output_shape(&shapes)?;
        let (_, layouts) = self.plan(&shapes[0], &shapes[1])?;
        let xr = layouts[0].perm.len() - 1;
        let mut x = Self::as_matrices(inputs[0], &layouts[0], xr);
        let mut y = Self::as_matrices(inputs[1], &layouts[1], 2);
        let (mut x_inv, mut y_inv) = (None, None);
        if self.normalize {
            x_inv = Some(normalize_rows(&mut x));
            // y's contracted axis runs along its rows: normalise its transpose's rows
            let mut yt = transpose(&y.view());
            y_inv = Some(normalize_rows(&mut yt));
            y = transpose(&yt.view());
        }
        Ok((
            DotCache {
                x,
                y,
                x_inv,
                y_inv,
                layouts,
            },
            out,
        ))
    }

    fn product(cache: &DotCache, out: &[usize]) -> Tensor {
        let (b, m, k) = cache.x.dim();
        let n = cache.y.dim().2;
        let mut data = vec![0.0f32; b * m * n];
        for s in 0..b {
            for i in 0..m {
                for j in 0..n {
                    let mut acc = 0.0f32;
                    for t in 0..k {
                        acc += cache.x[[s, i, t]] * cache.y[[s, t, j]];
                    }
                    data[(s * m + i) * n + j] = acc;
                }
            }
        }
        let shape = [&[b][..], out].concat();
        Tensor::from_shape_vec(IxDyn(&shape), data).expect("b * m * n values")
    }
}

/// Normalises each `(batch, row)` vector of `m` along its last axis in place (Keras's
/// `x * min(rsqrt(sum(x^2)), 1/epsilon)`); returns the inverse norms used.
fn normalize_rows(m: &mut Array3<f32>) -> Vec<f32> {
    let (b, r, _) = m.dim();
    let mut inv = Vec::with_capacity(b * r);
    for s in 0..b {
        for i in 0..r {
            let mut row = m.slice_mut(ndarray::s![s, i, ..]);
            let sq: f32 = row.iter().fold(0.0, |a, &v| a + v * v);
            let scale = (1.0 / sq.sqrt()).min(1.0 / NORM_EPSILON);
            row.mapv_inplace(|v| v * scale);
            inv.push(scale);
        }
    }
    inv
}

/// The gradient of `normalize_rows` (rows of `normed`, inverse norms `inv`) applied to `g`
/// in place: `inv * (g - n * <g, n>)`, or `inv * g` where the norm was clamped.
fn normalize_rows_backward(g: &mut Array3<f32>, normed: &Array3<f32>, inv: &[f32]) {
    let (b, r, _) = g.dim();
    for s in 0..b {
        for i in 0..r {
            let scale = inv[s * r + i];
            let n = normed.slice(ndarray::s![s, i, ..]);
            let mut gr = g.slice_mut(ndarray::s![s, i, ..]);
            let clamped = scale >= 1.0 / NORM_EPSILON;
            let dot: f32 = gr.iter().zip(n.iter()).fold(0.0, |a, (&x, &y)| a + x * y);
            for (gv, &nv) in gr.iter_mut().zip(n.iter()) {
                *gv = if clamped {
                    *gv * scale
                } else {
                    (*gv - nv * dot) * scale
                };
            }
        }
    }
}

fn transpose(m: &ArrayView3<'_, f32>) -> Array3<f32> {
    m.view()
        .permuted_axes([0, 2, 1])
        .as_standard_layout()
        .into_owned()
}

impl MergeLayer for Dot {
    fn layer_type(&self) -> &str {
        "Dot"
    }

    fn output_shape(&self, inputs: &[Vec<usize>]) -> Result<Vec<usize>> {
        if inputs.len() != 2 {
            return Err(Error::invalid_input(format!(
                "a Dot layer must be called on exactly 2 inputs, got {}",
                inputs.len()
            )));
        }
        if inputs.iter().any(|s| s.is_empty()) {
            return Err(Error::invalid_input(format!(
                "Dot: inputs need rank >= 2 (a batch axis and one more), got per-sample \
                 shapes {inputs:?}"
            )));
        }
        self.plan(&inputs[0], &inputs[1]).map(|(out, _)| out)
    }

    fn predict(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (cache, out) = self.operands(inputs)?;
        Ok(Self::product(&cache, &out))
    }

    fn forward(&mut self, inputs: &[&Tensor]) -> Result<Tensor> {
        let (cache, out) = self.operands(inputs)?;
        let result = Self::product(&cache, &out);
        self.cache = Some(cache);
        Ok(result)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Vec<Tensor>> {
        let c = self
            .cache
            .as_ref()
            .ok_or_else(|| Error::invalid_input("Dot: backward before forward"))?;
        let (b, m, k) = c.x.dim();
        let n = c.y.dim().2;
        if grad_output.len() != b * m * n || grad_output.shape().first() != Some(&b) {
            return Err(Error::invalid_input(format!(
                "Dot: gradient of shape {:?} does not match the output",
                grad_output.shape()
            )));
        }
        let g: Vec<f32> = grad_output.iter().copied().collect();
        let mut gx = Array3::<f32>::zeros((b, m, k));
        let mut gy = Array3::<f32>::zeros((b, k, n));
        for s in 0..b {
            for i in 0..m {
                for t in 0..k {
                    let mut acc = 0.0f32;
                    for j in 0..n {
                        acc += g[(s * m + i) * n + j] * c.y[[s, t, j]];
                    }
                    gx[[s, i, t]] = acc;
                }
            }
            for t in 0..k {
                for j in 0..n {
                    let mut acc = 0.0f32;
                    for i in 0..m {
                        acc += c.x[[s, i, t]] * g[(s * m + i) * n + j];
                    }
                    gy[[s, t, j]] = acc;
                }
            }
        }
        if let (Some(xi), Some(yi)) = (&c.x_inv, &c.y_inv) {
            normalize_rows_backward(&mut gx, &c.x, xi);
            let mut gyt = transpose(&gy.view());
            normalize_rows_backward(&mut gyt, &transpose(&c.y.view()), yi);
            gy = transpose(&gyt.view());
        }
        Ok(vec![
            Self::from_matrices(gx, &c.layouts[0], b),
            Self::from_matrices(gy, &c.layouts[1], b),
        ])
    }
}
