//! Test support for the layers: the central-difference check of a layer's backward pass.

use crate::neural_network::traits::{Layer, ParamGrad};
use crate::neural_network::Tensor;

/// Central differences of `f` at `at` with step `h`, one coordinate at a time, in f64.
pub(crate) fn numeric_gradient(f: impl Fn(&[f64]) -> f64, at: &[f64], h: f64) -> Vec<f64> {
    (0..at.len())
        .map(|i| {
            let mut p = at.to_vec();
            p[i] += h;
            let up = f(&p);
            p[i] -= 2.0 * h;
            (up - f(&p)) / (2.0 * h)
        })
        .collect()
}

/// `Σ c ⊙ out` in f64: the scalar loss whose gradient with respect to `out` is `c`.
pub(crate) fn weighted_sum(out: &Tensor, c: &Tensor) -> f64 {
    out.iter()
        .zip(c.iter())
        .map(|(&o, &c)| o as f64 * c as f64)
        .sum()
}

/// Checks `layer`'s backward pass at `x` against central differences of its own `predict`.
/// The loss is `L = Σ c ⊙ layer(x)` with `c = upstream(output shape)` fixed, so `dL/dout = c`;
/// every input gradient and every gradient `parameters()` exposes must lie within
/// `tol(numeric)` of the difference quotient with step `h`, the loss summed in f64.
/// Returns the parameter gradients of the checked pass.
pub(crate) fn check_layer_gradients(
    layer: &mut dyn Layer,
    x: &Tensor,
    upstream: impl FnOnce(&[usize]) -> Tensor,
    h: f32,
    tol: impl Fn(f64) -> f64,
) -> Vec<Vec<f32>> {
    let out = layer.forward(x).unwrap();
    let c = upstream(out.shape());
    let dx = layer.backward(&c).unwrap();
    assert_eq!(dx.shape(), x.shape());
    let loss = |layer: &dyn Layer, x: &Tensor| weighted_sum(&layer.predict(x).unwrap(), &c);
    let name = layer.layer_type().to_string();
    check_central_differences(
        layer,
        x,
        &dx,
        &name,
        (h, tol),
        loss,
        <dyn Layer as Layer>::parameters,
    )
}

/// The comparison behind [`check_layer_gradients`], for anything whose loss `loss(model, x)`
/// can be evaluated and whose parameters `params(model)` can be nudged in place: `dx` and
/// every parameter gradient must lie within `tol(numeric)` of the central difference with
/// step `h` (the pair `(h, tol)`); failures name `name`. Returns the parameter gradients.
pub(crate) fn check_central_differences<M: ?Sized>(
    model: &mut M,
    x: &Tensor,
    dx: &Tensor,
    name: &str,
    (h, tol): (f32, impl Fn(f64) -> f64),
    loss: impl Fn(&M, &Tensor) -> f64,
    params: impl Fn(&mut M) -> Vec<ParamGrad<'_>>,
) -> Vec<Vec<f32>> {
    for i in 0..x.len() {
        let (mut p, mut m) = (x.clone(), x.clone());
        p.as_slice_mut().unwrap()[i] += h;
        m.as_slice_mut().unwrap()[i] -= h;
        let num = (loss(model, &p) - loss(model, &m)) / (2.0 * h as f64);
        let got = dx.as_slice().unwrap()[i] as f64;
        assert!(
            (got - num).abs() < tol(num),
            "{name} dx[{i}]: {got} vs {num}"
        );
    }
    let grads: Vec<Vec<f32>> = params(model).iter().map(|p| p.grad.to_vec()).collect();
    for (k, g) in grads.iter().enumerate() {
        for (i, &gi) in g.iter().enumerate() {
            let orig = params(model)[k].value[i];
            params(model)[k].value[i] = orig + h;
            let lp = loss(model, x);
            params(model)[k].value[i] = orig - h;
            let lm = loss(model, x);
            params(model)[k].value[i] = orig;
            let num = (lp - lm) / (2.0 * h as f64);
            let got = gi as f64;
            assert!(
                (got - num).abs() < tol(num),
                "{name} param {k}[{i}]: {got} vs {num}"
            );
        }
    }
    grads
}
