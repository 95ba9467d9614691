//! Test support for the layers: the central-difference check of a layer's backward pass.

use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;

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
    let loss = |layer: &dyn Layer, x: &Tensor| -> f64 {
        let o = layer.predict(x).unwrap();
        o.iter()
            .zip(c.iter())
            .map(|(&o, &c)| o as f64 * c as f64)
            .sum()
    };
    let name = layer.layer_type().to_string();
    for i in 0..x.len() {
        let (mut p, mut m) = (x.clone(), x.clone());
        p.as_slice_mut().unwrap()[i] += h;
        m.as_slice_mut().unwrap()[i] -= h;
        let num = (loss(layer, &p) - loss(layer, &m)) / (2.0 * h as f64);
        let got = dx.as_slice().unwrap()[i] as f64;
        assert!(
            (got - num).abs() < tol(num),
            "{name} dx[{i}]: {got} vs {num}"
        );
    }
    let grads: Vec<Vec<f32>> = layer.parameters().iter().map(|p| p.grad.to_vec()).collect();
    for (k, g) in grads.iter().enumerate() {
        for (i, &gi) in g.iter().enumerate() {
            let orig = layer.parameters()[k].value[i];
            layer.parameters()[k].value[i] = orig + h;
            let lp = loss(layer, x);
            layer.parameters()[k].value[i] = orig - h;
            let lm = loss(layer, x);
            layer.parameters()[k].value[i] = orig;
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
