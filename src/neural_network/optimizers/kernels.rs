//! The optimizers' slice kernels: every update rule as a function over flat `f32` slices.
//!
//! Each element of a parameter update depends only on the same element of the gradient and of
//! the state buffers, so the parallel path (behind the `fused_slice` gate) cuts the slices into
//! aligned chunks and runs the very same per-element arithmetic on each chunk: serial and
//! parallel agree bit for bit.

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
            (bits(&p), bits(&s1), bits(&s2), bits(&l2))
        };
        let (s, p) = serial_and_parallel(&FUSED_SLICE, run_all);
        assert_eq!(s, p);
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
