//! The optimizers' slice kernels: every update rule as a function over flat `f32` slices.
//!
//! Each element of a parameter update depends only on the same element of the gradient and of
//! the state buffers, so the parallel path (behind the `fused_slice` gate) cuts the slices into
//! aligned chunks and runs the very same per-element arithmetic on each chunk: serial and
//! parallel agree bit for bit.

use super::rules::{AdamEpsilon, EpsilonPlacement};
use crate::declare_gate;
use rayon::prelude::*;
use std::borrow::Cow;

declare_gate! {
    /// Fused multi-slice optimizer updates (SGD, momentum, Adam, RMSprop, AdaGrad, weight
    /// decay). Work = parameter elements updated.
    pub FUSED_SLICE: elementwise::fused_slice = 1_000_000, "elements"
}

/// Elements per rayon task: a few L1-sized slices of each operand.
const TASK: usize = 16_384;

/// Runs `f` over `param` and `grad` whole, or chunk-aligned in parallel behind the gate.
fn run2(param: &mut [f32], grad: &[f32], f: impl Fn(&mut [f32], &[f32]) + Sync) {
    assert_eq!(
        param.len(),
        grad.len(),
        "parameter and gradient lengths differ"
    );
    if FUSED_SLICE.allows_parallel(param.len()) {
        param
            .par_chunks_mut(TASK)
            .zip(grad.par_chunks(TASK))
            .for_each(|(p, g)| f(p, g));
    } else {
        f(param, grad);
    }
}

/// [`run2`] with one state buffer.
fn run3(
    param: &mut [f32],
    grad: &[f32],
    s1: &mut [f32],
    f: impl Fn(&mut [f32], &[f32], &mut [f32]) + Sync,
) {
    assert_eq!(
        param.len(),
        grad.len(),
        "parameter and gradient lengths differ"
    );
    assert_eq!(param.len(), s1.len(), "parameter and state lengths differ");
    if FUSED_SLICE.allows_parallel(param.len()) {
        param
            .par_chunks_mut(TASK)
            .zip(grad.par_chunks(TASK))
            .zip(s1.par_chunks_mut(TASK))
            .for_each(|((p, g), a)| f(p, g, a));
    } else {
        f(param, grad, s1);
    }
}

/// [`run2`] with two state buffers.
fn run4(
    param: &mut [f32],
    grad: &[f32],
    s1: &mut [f32],
    s2: &mut [f32],
    f: impl Fn(&mut [f32], &[f32], &mut [f32], &mut [f32]) + Sync,
) {
    assert_eq!(
        param.len(),
        grad.len(),
        "parameter and gradient lengths differ"
    );
    assert_eq!(param.len(), s1.len(), "parameter and state lengths differ");
    assert_eq!(param.len(), s2.len(), "parameter and state lengths differ");
    if FUSED_SLICE.allows_parallel(param.len()) {
        param
            .par_chunks_mut(TASK)
            .zip(grad.par_chunks(TASK))
            .zip(s1.par_chunks_mut(TASK))
            .zip(s2.par_chunks_mut(TASK))
            .for_each(|(((p, g), a), b)| f(p, g, a, b));
    } else {
        f(param, grad, s1, s2);
    }
}

/// The gradient multiplied by `grad_scale` (the clip-by-global-norm factor); borrowed
/// unchanged when the scale is 1.
pub fn scaled_grad(grad: &[f32], grad_scale: f32) -> Cow<'_, [f32]> {
    if grad_scale == 1.0 {
        Cow::Borrowed(grad)
    } else {
        let mut out = grad.to_vec();
        let len = out.len();
        let scale = |s: &mut [f32]| s.iter_mut().for_each(|g| *g *= grad_scale);
        if FUSED_SLICE.allows_parallel(len) {
            out.par_chunks_mut(TASK).for_each(scale);
        } else {
            scale(&mut out);
        }
        Cow::Owned(out)
    }
}

/// The gradient an L2-coupled optimizer steps with: scaled by `grad_scale`, plus
/// `weight_decay * p` for parameters that decay.
pub(crate) fn coupled_grad<'a>(
    grad: &'a [f32],
    param: &[f32],
    decays: bool,
    grad_scale: f32,
    weight_decay: f32,
) -> Cow<'a, [f32]> {
    let grad = scaled_grad(grad, grad_scale);
    if decays && weight_decay > 0.0 {
        Cow::Owned(l2_regularized_grad(&grad, param, weight_decay))
    } else {
        grad
    }
}

/// Plain gradient descent: `p -= lr * g`.
pub fn sgd_step(param: &mut [f32], grad: &[f32], lr: f32) {
    run2(param, grad, |p, g| {
        p.iter_mut().zip(g).for_each(|(p, &g)| *p -= lr * g)
    });
}

/// Momentum SGD in Keras's form: `v = momentum * v - lr * g`, then `p += v`, or with Nesterov
/// `p += momentum * v - lr * g`.
pub fn sgd_momentum_step(
    param: &mut [f32],
    grad: &[f32],
    velocity: &mut [f32],
    lr: f32,
    momentum: f32,
    nesterov: bool,
) {
    run3(param, grad, velocity, |p, g, v| {
        for ((p, &g), v) in p.iter_mut().zip(g).zip(v.iter_mut()) {
            *v = momentum * *v - lr * g;
            if nesterov {
                *p += momentum * *v - lr * g;
            } else {
                *p += *v;
            }
        }
    });
}

/// Decoupled weight decay: `p *= 1 - lr * weight_decay`.
pub fn apply_weight_decay(param: &mut [f32], lr: f32, weight_decay: f32) {
    let factor = 1.0 - lr * weight_decay;
    let shrink = |s: &mut [f32]| s.iter_mut().for_each(|p| *p *= factor);
    if FUSED_SLICE.allows_parallel(param.len()) {
        param.par_chunks_mut(TASK).for_each(shrink);
    } else {
        shrink(param);
    }
}

/// The L2-coupled gradient `g + weight_decay * p`.
pub fn l2_regularized_grad(grad: &[f32], param: &[f32], weight_decay: f32) -> Vec<f32> {
    assert_eq!(
        param.len(),
        grad.len(),
        "parameter and gradient lengths differ"
    );
    let mut out = grad.to_vec();
    let add = |o: &mut [f32], p: &[f32]| {
        o.iter_mut()
            .zip(p)
            .for_each(|(o, &p)| *o += weight_decay * p)
    };
    if FUSED_SLICE.allows_parallel(out.len()) {
        out.par_chunks_mut(TASK)
            .zip(param.par_chunks(TASK))
            .for_each(|(o, p)| add(o, p));
    } else {
        add(&mut out, param);
    }
    out
}

/// One Adam step (Kingma & Ba 2015) at timestep `t >= 1`: `m = b1 m + (1 - b1) g`,
/// `v = b2 v + (1 - b2) g²`, `p -= lr * m̂ / (sqrt(v̂) + eps)` with the bias-corrected moments
/// `m̂ = m / (1 - b1^t)`, `v̂ = v / (1 - b2^t)`.
#[allow(clippy::too_many_arguments)]
pub fn adam_step(
    param: &mut [f32],
    grad: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    lr: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    t: u64,
) {
    let t = t.max(1).min(i32::MAX as u64) as i32;
    let c1 = 1.0 - beta1.powi(t);
    let c2 = 1.0 - beta2.powi(t);
    run4(param, grad, m, v, |p, g, m, v| {
        for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
            *m = beta1 * *m + (1.0 - beta1) * g;
            *v = beta2 * *v + (1.0 - beta2) * g * g;
            let m_hat = *m / c1;
            let v_hat = *v / c2;
            *p -= lr * m_hat / (v_hat.sqrt() + epsilon);
        }
    });
}

/// One RMSprop step (Hinton's form): `c = rho c + (1 - rho) g²`, `p -= lr g / (sqrt(c) + eps)`.
pub fn rmsprop_step(
    param: &mut [f32],
    grad: &[f32],
    cache: &mut [f32],
    rho: f32,
    lr: f32,
    epsilon: f32,
) {
    run3(param, grad, cache, |p, g, c| {
        for ((p, &g), c) in p.iter_mut().zip(g).zip(c.iter_mut()) {
            *c = rho * *c + (1.0 - rho) * g * g;
            *p -= lr * g / (c.sqrt() + epsilon);
        }
    });
}

/// One AdaGrad step (Duchi et al. 2011): `a += g²`, `p -= lr g / (sqrt(a) + eps)`.
pub fn adagrad_step(
    param: &mut [f32],
    grad: &[f32],
    accumulator: &mut [f32],
    lr: f32,
    epsilon: f32,
) {
    run3(param, grad, accumulator, |p, g, a| {
        for ((p, &g), a) in p.iter_mut().zip(g).zip(a.iter_mut()) {
            *a += g * g;
            *p -= lr * g / (a.sqrt() + epsilon);
        }
    });
}

/// Chunks of an optional state buffer aligned with the parameter's `TASK` chunks (`None` for
/// each chunk when the buffer is absent).
fn optional_chunks(buf: Option<&mut [f32]>, len: usize) -> Vec<Option<&mut [f32]>> {
    match buf {
        Some(b) => {
            assert_eq!(b.len(), len, "parameter and state lengths differ");
            b.chunks_mut(TASK).map(Some).collect()
        }
        None => (0..len.div_ceil(TASK)).map(|_| None).collect(),
    }
}

/// [`run3`] with two further optional state buffers.
fn run3_opt2(
    param: &mut [f32],
    grad: &[f32],
    s1: &mut [f32],
    o1: Option<&mut [f32]>,
    o2: Option<&mut [f32]>,
    f: impl Fn(&mut [f32], &[f32], &mut [f32], Option<&mut [f32]>, Option<&mut [f32]>) + Sync,
) {
    assert_eq!(
        param.len(),
        grad.len(),
        "parameter and gradient lengths differ"
    );
    assert_eq!(param.len(), s1.len(), "parameter and state lengths differ");
    let len = param.len();
    if FUSED_SLICE.allows_parallel(len) {
        param
            .par_chunks_mut(TASK)
            .zip(grad.par_chunks(TASK))
            .zip(s1.par_chunks_mut(TASK))
            .zip(optional_chunks(o1, len).into_par_iter())
            .zip(optional_chunks(o2, len).into_par_iter())
            .for_each(|((((p, g), a), b), c)| f(p, g, a, b, c));
    } else {
        if let Some(b) = &o1 {
            assert_eq!(b.len(), len, "parameter and state lengths differ");
        }
        if let Some(c) = &o2 {
            assert_eq!(c.len(), len, "parameter and state lengths differ");
        }
        f(param, grad, s1, o1, o2);
    }
}

/// Keras's `global_clipnorm` factor: every gradient is scaled by `max_norm / norm` when the
/// global norm `norm = sqrt(sq_sum)` of all of them exceeds `max_norm`, else left as it is.
pub(crate) fn global_clip_factor(sq_sum: f64, max_norm: f32) -> f32 {
    let norm = sq_sum.sqrt();
    if norm > max_norm as f64 {
        (max_norm as f64 / norm) as f32
    } else {
        1.0
    }
}

/// Each parameter's gradient rescaled so its L2 norm is at most `bound`:
/// `g * bound / max(||g||, bound)` (the form Keras computes, also when no clipping is needed).
/// The norm is accumulated in f64 by the deterministic blocked fold.
pub fn clip_by_norm(grad: Cow<'_, [f32]>, bound: f32) -> Cow<'_, [f32]> {
    let norm = crate::math::reduction::sq_sum_f32(&grad).sqrt() as f32;
    let denom = norm.max(bound);
    let mut out = grad.into_owned();
    let len = out.len();
    let clip = |s: &mut [f32]| s.iter_mut().for_each(|g| *g = *g * bound / denom);
    if FUSED_SLICE.allows_parallel(len) {
        out.par_chunks_mut(TASK).for_each(clip);
    } else {
        clip(&mut out);
    }
    Cow::Owned(out)
}

/// Each gradient element clamped to `[-bound, bound]`.
pub fn clip_by_value(grad: Cow<'_, [f32]>, bound: f32) -> Cow<'_, [f32]> {
    let mut out = grad.into_owned();
    let len = out.len();
    let clip = |s: &mut [f32]| s.iter_mut().for_each(|g| *g = g.clamp(-bound, bound));
    if FUSED_SLICE.allows_parallel(len) {
        out.par_chunks_mut(TASK).for_each(clip);
    } else {
        clip(&mut out);
    }
    Cow::Owned(out)
}

/// One Adam step at timestep `t >= 1` with a chosen epsilon placement and optional AMSGrad
/// (`v_max` holds the running maximum of the second moment, which then replaces it in the
/// denominator).
///
/// - [`AdamEpsilon::CorrectedRoot`]: `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g²`,
///   `p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)` (equal to [`adam_step`]
///   without AMSGrad).
/// - [`AdamEpsilon::UncorrectedRoot`]: `m += (g - m)(1 - b1)`, `v += (g² - v)(1 - b2)`,
///   `p -= (m alpha) / (sqrt(v) + eps)` with `alpha = lr sqrt(1 - b2^t) / (1 - b1^t)`.
#[allow(clippy::too_many_arguments)]
pub fn adam_step_with(
    param: &mut [f32],
    grad: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    v_max: Option<&mut [f32]>,
    lr: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    t: u64,
    placement: AdamEpsilon,
) {
    let t = t.max(1).min(i32::MAX as u64) as i32;
    let p1 = beta1.powf(t as f32);
    let p2 = beta2.powf(t as f32);
    let (c1, c2) = (1.0 - p1, 1.0 - p2);
    let alpha = lr * c2.sqrt() / c1;
    let (k1, k2) = (1.0 - beta1, 1.0 - beta2);
    // Two state buffers travel as `s1` and the first optional slot; AMSGrad's maximum as the
    // second.
    // The placement and AMSGrad are chosen once per chunk, outside the element loops, so
    // each loop is a straight zip the compiler vectorises; every element's arithmetic is
    // the same in all four.
    run3_opt2(param, grad, m, Some(v), v_max, |p, g, m, v, vmax| {
        let v = v.expect("second moment present");
        let elements = p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut());
        match (placement, vmax) {
            (AdamEpsilon::CorrectedRoot, None) => {
                for (((p, &g), m), v) in elements {
                    *m = beta1 * *m + k1 * g;
                    *v = beta2 * *v + k2 * g * g;
                    *p -= lr * (*m / c1) / ((*v / c2).sqrt() + epsilon);
                }
            }
            (AdamEpsilon::UncorrectedRoot, None) => {
                for (((p, &g), m), v) in elements {
                    *m += (g - *m) * k1;
                    *v += (g * g - *v) * k2;
                    *p -= (*m * alpha) / (v.sqrt() + epsilon);
                }
            }
            (AdamEpsilon::CorrectedRoot, Some(vmax)) => {
                for ((((p, &g), m), v), vmax) in elements.zip(vmax.iter_mut()) {
                    *m = beta1 * *m + k1 * g;
                    *v = beta2 * *v + k2 * g * g;
                    *vmax = vmax.max(*v);
                    *p -= lr * (*m / c1) / ((*vmax / c2).sqrt() + epsilon);
                }
            }
            (AdamEpsilon::UncorrectedRoot, Some(vmax)) => {
                for ((((p, &g), m), v), vmax) in elements.zip(vmax.iter_mut()) {
                    *m += (g - *m) * k1;
                    *v += (g * g - *v) * k2;
                    *vmax = vmax.max(*v);
                    *p -= (*m * alpha) / (vmax.sqrt() + epsilon);
                }
            }
        }
    });
}

/// One RMSprop step with a chosen epsilon placement, optional centring and optional momentum:
/// `s = rho s + (1 - rho) g²`; centred, also `a = rho a + (1 - rho) g` and the statistic is
/// `s - a²`; the increment is `lr g / (sqrt(stat) + eps)` or `lr g / sqrt(stat + eps)`; with
/// momentum `u = momentum u + increment`, `p -= u`, otherwise `p -= increment`.
/// `mean_grad` must be given exactly when centred, `velocity` exactly when momentum > 0.
#[allow(clippy::too_many_arguments)]
pub fn rmsprop_step_with(
    param: &mut [f32],
    grad: &[f32],
    cache: &mut [f32],
    mean_grad: Option<&mut [f32]>,
    velocity: Option<&mut [f32]>,
    rho: f32,
    lr: f32,
    epsilon: f32,
    momentum: f32,
    placement: EpsilonPlacement,
) {
    let k = 1.0 - rho;
    run3_opt2(
        param,
        grad,
        cache,
        mean_grad,
        velocity,
        |p, g, c, mut a, mut u| {
            for i in 0..p.len() {
                let g = g[i];
                c[i] = rho * c[i] + k * (g * g);
                let stat = match a.as_deref_mut() {
                    Some(a) => {
                        a[i] = rho * a[i] + k * g;
                        c[i] - a[i] * a[i]
                    }
                    None => c[i],
                };
                let increment = match placement {
                    EpsilonPlacement::OutsideRoot => lr * g / (stat.sqrt() + epsilon),
                    EpsilonPlacement::InsideRoot => lr * g / (stat + epsilon).sqrt(),
                };
                match u.as_deref_mut() {
                    Some(u) => {
                        u[i] = momentum * u[i] + increment;
                        p[i] -= u[i];
                    }
                    None => p[i] -= increment,
                }
            }
        },
    );
}

/// One AdaGrad step with a chosen epsilon placement: `a += g²`, then
/// `p -= lr g / (sqrt(a) + eps)` or `p -= lr g / sqrt(a + eps)`.
pub fn adagrad_step_with(
    param: &mut [f32],
    grad: &[f32],
    accumulator: &mut [f32],
    lr: f32,
    epsilon: f32,
    placement: EpsilonPlacement,
) {
    match placement {
        EpsilonPlacement::OutsideRoot => adagrad_step(param, grad, accumulator, lr, epsilon),
        EpsilonPlacement::InsideRoot => run3(param, grad, accumulator, |p, g, a| {
            for ((p, &g), a) in p.iter_mut().zip(g).zip(a.iter_mut()) {
                *a += g * g;
                *p -= lr * g / (*a + epsilon).sqrt();
            }
        }),
    }
}

/// The step-dependent factors of one Nadam step (Dozat 2016, in Keras's form): the momentum
/// schedule `u_t = b1 (1 - 0.5 * 0.96^t)` at this step and the next, the running products
/// of the schedule up to this step and the next, and `b2^t`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NadamFactors {
    pub u_t: f32,
    pub u_next: f32,
    pub product: f32,
    pub product_next: f32,
    pub beta2_power: f32,
}

/// One Nadam step: `m += (g - m)(1 - b1)`, `v += (g² - v)(1 - b2)`,
/// `m̂ = u_next m / (1 - product_next) + (1 - u_t) g / (1 - product)`,
/// `v̂ = v / (1 - b2^t)`, `p -= m̂ lr / (sqrt(v̂) + eps)`.
#[allow(clippy::too_many_arguments)]
pub fn nadam_step(
    param: &mut [f32],
    grad: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    lr: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    f: NadamFactors,
) {
    let (k1, k2) = (1.0 - beta1, 1.0 - beta2);
    let (d_next, d_now, d_v) = (1.0 - f.product_next, 1.0 - f.product, 1.0 - f.beta2_power);
    let fresh = 1.0 - f.u_t;
    run4(param, grad, m, v, |p, g, m, v| {
        for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
            *m += (g - *m) * k1;
            *v += (g * g - *v) * k2;
            let m_hat = f.u_next * *m / d_next + fresh * g / d_now;
            let v_hat = *v / d_v;
            *p -= m_hat * lr / (v_hat.sqrt() + epsilon);
        }
    });
}

/// One Adamax step (Kingma & Ba's infinity-norm variant) at timestep `t >= 1`:
/// `m += (g - m)(1 - b1)`, `u = max(b2 u, |g|)`, `p -= lr m / ((1 - b1^t)(u + eps))`.
#[allow(clippy::too_many_arguments)]
pub fn adamax_step(
    param: &mut [f32],
    grad: &[f32],
    m: &mut [f32],
    u: &mut [f32],
    lr: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    t: u64,
) {
    let t = t.max(1).min(i32::MAX as u64) as i32;
    let correction = 1.0 - beta1.powf(t as f32);
    let k1 = 1.0 - beta1;
    run4(param, grad, m, u, |p, g, m, u| {
        for (((p, &g), m), u) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(u.iter_mut()) {
            *m += (g - *m) * k1;
            *u = (beta2 * *u).max(g.abs());
            *p -= lr * *m / (correction * (*u + epsilon));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    fn data(n: usize, k: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32) * k).sin()).collect()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Every kernel, forced serial and forced parallel, on a length spanning several tasks
    /// with a ragged tail, leaves the same bits in every buffer.
    #[test]
    fn every_kernel_agrees_bitwise_serial_and_parallel() {
        let n = 3 * TASK + 77;
        let g = data(n, 0.31);
        let run_all = || {
            let mut p = data(n, 0.17);
            let mut s1 = vec![0.0f32; n];
            let mut s2 = vec![0.0f32; n];
            let scaled = scaled_grad(&g, 0.5).into_owned();
            sgd_step(&mut p, &scaled, 0.1);
            sgd_momentum_step(&mut p, &g, &mut s1, 0.1, 0.9, true);
            apply_weight_decay(&mut p, 0.1, 0.01);
            let l2 = l2_regularized_grad(&g, &p, 0.01);
            adam_step(&mut p, &l2, &mut s1, &mut s2, 0.01, 0.9, 0.999, 1e-8, 3);
            rmsprop_step(&mut p, &g, &mut s1, 0.9, 0.01, 1e-7);
            adagrad_step(&mut p, &g, &mut s2, 0.01, 1e-7);
            let mut s3 = vec![0.0f32; n];
            let mut s4 = vec![0.0f32; n];
            for placement in [AdamEpsilon::CorrectedRoot, AdamEpsilon::UncorrectedRoot] {
                adam_step_with(
                    &mut p,
                    &g,
                    &mut s1,
                    &mut s2,
                    Some(&mut s3),
                    0.01,
                    0.9,
                    0.999,
                    1e-3,
                    2,
                    placement,
                );
                adam_step_with(
                    &mut p, &g, &mut s1, &mut s2, None, 0.01, 0.9, 0.999, 1e-3, 3, placement,
                );
            }
            for placement in [EpsilonPlacement::OutsideRoot, EpsilonPlacement::InsideRoot] {
                rmsprop_step_with(
                    &mut p,
                    &g,
                    &mut s1,
                    Some(&mut s3),
                    Some(&mut s4),
                    0.9,
                    0.01,
                    1e-3,
                    0.5,
                    placement,
                );
                rmsprop_step_with(
                    &mut p, &g, &mut s1, None, None, 0.9, 0.01, 1e-3, 0.0, placement,
                );
                adagrad_step_with(&mut p, &g, &mut s2, 0.01, 1e-3, placement);
            }
            let factors = NadamFactors {
                u_t: 0.45,
                u_next: 0.46,
                product: 0.4,
                product_next: 0.19,
                beta2_power: 0.99,
            };
            nadam_step(
                &mut p, &g, &mut s1, &mut s2, 0.01, 0.9, 0.999, 1e-3, factors,
            );
            adamax_step(&mut p, &g, &mut s3, &mut s4, 0.01, 0.9, 0.999, 1e-3, 2);
            let by_norm = clip_by_norm(Cow::Borrowed(&g), 3.0).into_owned();
            let by_value = clip_by_value(Cow::Borrowed(&g), 0.25).into_owned();
            (
                bits(&p),
                bits(&s1),
                bits(&s2),
                bits(&l2),
                (bits(&s3), bits(&s4), bits(&by_norm), bits(&by_value)),
            )
        };
        let (s, p) = serial_and_parallel(&FUSED_SLICE, run_all);
        assert_eq!(s, p);
    }

    /// Each of Adam's four forms (epsilon placement x AMSGrad) against its update written out
    /// one element at a time, bit for bit (the same operations in the same order), over a
    /// length with a ragged tail and several steps so the AMSGrad maximum is both kept and
    /// replaced.
    #[test]
    fn adam_forms_match_the_update_written_per_element() {
        let n = 1000;
        let (lr, b1, b2, eps) = (0.01f32, 0.9f32, 0.5f32, 1e-3f32);
        for placement in [AdamEpsilon::CorrectedRoot, AdamEpsilon::UncorrectedRoot] {
            for amsgrad in [false, true] {
                let (mut p, mut m, mut v, mut vmax) = (
                    data(n, 0.17),
                    vec![0.0f32; n],
                    vec![0.0f32; n],
                    vec![0.0f32; n],
                );
                let (mut rp, mut rm, mut rv, mut rvmax) =
                    (p.clone(), m.clone(), v.clone(), vmax.clone());
                for t in 1..=4u64 {
                    // large gradients first, then small ones: v falls below its maximum
                    let g: Vec<f32> = data(n, 0.31).iter().map(|x| x * (5 - t) as f32).collect();
                    let vm = if amsgrad { Some(&mut vmax[..]) } else { None };
                    adam_step_with(
                        &mut p, &g, &mut m, &mut v, vm, lr, b1, b2, eps, t, placement,
                    );
                    let (c1, c2) = (1.0 - b1.powf(t as f32), 1.0 - b2.powf(t as f32));
                    let alpha = lr * c2.sqrt() / c1;
                    for i in 0..n {
                        let denom = match placement {
                            AdamEpsilon::CorrectedRoot => {
                                rm[i] = b1 * rm[i] + (1.0 - b1) * g[i];
                                rv[i] = b2 * rv[i] + (1.0 - b2) * g[i] * g[i];
                                rv[i]
                            }
                            AdamEpsilon::UncorrectedRoot => {
                                rm[i] += (g[i] - rm[i]) * (1.0 - b1);
                                rv[i] += (g[i] * g[i] - rv[i]) * (1.0 - b2);
                                rv[i]
                            }
                        };
                        let denom = if amsgrad {
                            rvmax[i] = rvmax[i].max(denom);
                            rvmax[i]
                        } else {
                            denom
                        };
                        rp[i] -= match placement {
                            AdamEpsilon::CorrectedRoot => {
                                lr * (rm[i] / c1) / ((denom / c2).sqrt() + eps)
                            }
                            AdamEpsilon::UncorrectedRoot => (rm[i] * alpha) / (denom.sqrt() + eps),
                        };
                    }
                }
                let label = format!("{placement:?} amsgrad={amsgrad}");
                assert_eq!(bits(&p), bits(&rp), "{label}");
                assert_eq!((bits(&m), bits(&v)), (bits(&rm), bits(&rv)), "{label}");
                if amsgrad {
                    assert_eq!(bits(&vmax), bits(&rvmax), "{label}");
                    assert!(
                        vmax.iter().zip(&v).any(|(a, b)| a > b),
                        "the maximum is kept"
                    );
                }
            }
        }
    }

    #[test]
    fn scaled_grad_borrows_at_unit_scale() {
        let g = [1.0f32, -2.0];
        assert!(matches!(scaled_grad(&g, 1.0), Cow::Borrowed(_)));
        assert_eq!(&*scaled_grad(&g, 0.5), &[0.5, -1.0]);
    }

    /// Three Adam steps on f(p) = p²/2 (gradient p) against the published update written out
    /// in f64.
    #[test]
    fn adam_trajectory_matches_the_published_rule() {
        let (lr, b1, b2, eps) = (0.1f64, 0.9f64, 0.999f64, 1e-8f64);
        let mut p = [1.5f32];
        let (mut m, mut v) = ([0.0f32], [0.0f32]);
        let (mut pr, mut mr, mut vr) = (1.5f64, 0.0f64, 0.0f64);
        for t in 1..=3u64 {
            let g = [p[0]];
            adam_step(&mut p, &g, &mut m, &mut v, 0.1, 0.9, 0.999, 1e-8, t);
            let gr = pr;
            mr = b1 * mr + (1.0 - b1) * gr;
            vr = b2 * vr + (1.0 - b2) * gr * gr;
            let mh = mr / (1.0 - b1.powi(t as i32));
            let vh = vr / (1.0 - b2.powi(t as i32));
            pr -= lr * mh / (vh.sqrt() + eps);
            assert!((p[0] as f64 - pr).abs() < 1e-6, "t = {t}: {} vs {pr}", p[0]);
        }
        // Adam's first step moves by ~lr whatever the gradient's size.
        assert!((pr - (1.5 - 0.1 - 0.1 - 0.1)).abs() < 0.01);
    }

    #[test]
    fn momentum_rmsprop_adagrad_trajectories_match_their_rules() {
        // Momentum (Keras form), gradient constant 2: v1 = -0.2, p1 = 0.8; v2 = -0.38, p2 = 0.42.
        let mut p = [1.0f32];
        let mut vel = [0.0f32];
        sgd_momentum_step(&mut p, &[2.0], &mut vel, 0.1, 0.9, false);
        assert!((p[0] - 0.8).abs() < 1e-6 && (vel[0] + 0.2).abs() < 1e-6);
        sgd_momentum_step(&mut p, &[2.0], &mut vel, 0.1, 0.9, false);
        assert!((p[0] - 0.42).abs() < 1e-6 && (vel[0] + 0.38).abs() < 1e-6);
        // Nesterov: v1 = -0.2, p1 = 1 + 0.9 * -0.2 - 0.2 = 0.62.
        let (mut p, mut vel) = ([1.0f32], [0.0f32]);
        sgd_momentum_step(&mut p, &[2.0], &mut vel, 0.1, 0.9, true);
        assert!((p[0] - 0.62).abs() < 1e-6);

        // RMSprop, g = 2, rho = 0.9: c1 = 0.4, p1 = 1 - 0.1 * 2 / sqrt(0.4); c2 = 0.76.
        let (mut p, mut c) = ([1.0f32], [0.0f32]);
        rmsprop_step(&mut p, &[2.0], &mut c, 0.9, 0.1, 0.0);
        let p1 = 1.0 - 0.2 / 0.4f64.sqrt();
        assert!((p[0] as f64 - p1).abs() < 1e-6 && (c[0] - 0.4).abs() < 1e-6);
        rmsprop_step(&mut p, &[2.0], &mut c, 0.9, 0.1, 0.0);
        let p2 = p1 - 0.2 / 0.76f64.sqrt();
        assert!((p[0] as f64 - p2).abs() < 1e-6 && (c[0] - 0.76).abs() < 1e-6);

        // AdaGrad, g = 2 then 1: a = 4, p = 1 - 0.1; a = 5, p -= 0.1 / sqrt(5).
        let (mut p, mut a) = ([1.0f32], [0.0f32]);
        adagrad_step(&mut p, &[2.0], &mut a, 0.1, 0.0);
        assert!((p[0] - 0.9).abs() < 1e-6);
        adagrad_step(&mut p, &[1.0], &mut a, 0.1, 0.0);
        assert!((p[0] as f64 - (0.9 - 0.1 / 5f64.sqrt())).abs() < 1e-6);
    }

    #[test]
    fn decay_and_l2_follow_their_definitions() {
        let mut p = [2.0f32, -4.0];
        apply_weight_decay(&mut p, 0.1, 0.5);
        assert_eq!(p, [1.9, -3.8]);
        assert_eq!(
            l2_regularized_grad(&[1.0, 1.0], &[2.0, -4.0], 0.5),
            vec![2.0, -1.0]
        );
    }
}
