//! Weights in Keras's layout: the order in which Keras lists a layer's arrays and the shapes
//! it gives them. The crate's layers keep some arrays with leading unit axes (a Dense bias
//! is `[1, units]`) and a `Bidirectional` keeps both directions side by side; these functions
//! translate between the two layouts so that `get_weights`/`set_weights` exchange arrays
//! with Keras as they are.

use crate::error::{Error, Result};
use crate::neural_network::traits::Layer;
use ndarray::{ArrayD, Axis};

/// A layer's weight arrays in Keras's order: a `Bidirectional` keeps each array's forward
/// and backward halves side by side on the last axis, Keras lists the forward layer's arrays
/// and then the backward layer's.
pub fn keras_arrays(
    layer: &dyn Layer,
    mut arrays: Vec<(&'static str, ArrayD<f32>)>,
) -> Vec<(&'static str, ArrayD<f32>)> {
    if !layer.uses_bias() {
        // Keras's use_bias=False layers list no bias at all.
        arrays.retain(|(name, _)| *name != "bias");
    }
    if layer.layer_type() != "Bidirectional" {
        return arrays;
    }
    let half = |a: &ArrayD<f32>, i: usize| {
        let last = Axis(a.ndim() - 1);
        let n = a.len_of(last) / 2;
        let v = a.slice_axis(last, ndarray::Slice::from(i * n..(i + 1) * n));
        // A fresh C-order copy: `to_owned` may keep the parent's strides.
        ArrayD::from_shape_vec(v.raw_dim(), v.iter().copied().collect())
            .expect("the element count matches the shape")
    };
    (0..2)
        .flat_map(|i| arrays.iter().map(move |(name, a)| (*name, half(a, i))))
        .collect()
}

/// The inverse of [`keras_arrays`] (the given arrays already checked against its shapes);
/// `current` is the layer's own full list, which supplies an unused bias.
fn from_keras_arrays(
    layer: &dyn Layer,
    arrays: Vec<ArrayD<f32>>,
    current: &[(&'static str, ArrayD<f32>)],
) -> Vec<ArrayD<f32>> {
    let arrays: Vec<ArrayD<f32>> = if layer.layer_type() == "Bidirectional" {
        let n = arrays.len() / 2;
        (0..n)
            .map(|i| {
                let (f, b) = (&arrays[i], &arrays[n + i]);
                ndarray::concatenate(Axis(f.ndim() - 1), &[f.view(), b.view()])
                    .expect("halves checked against the layer's shapes")
            })
            .collect()
    } else {
        arrays
    };
    if layer.uses_bias() {
        return arrays;
    }
    // Both halves of a Bidirectional share the flag, so the joined list lacks just the bias.
    let mut given = arrays.into_iter();
    current
        .iter()
        .map(|(name, old)| {
            if *name == "bias" {
                old.clone()
            } else {
                given.next().expect("one given array per listed name")
            }
        })
        .collect()
}

/// Names of the weight arrays whose Rust shape carries leading unit axes that Keras omits
/// (a Dense bias is `[1, units]` here, `(units,)` in Keras).
fn keras_drops_leading_ones(name: &str) -> bool {
    matches!(
        name,
        "bias" | "gamma" | "beta" | "running_mean" | "running_var"
    )
}

pub fn to_keras_shape(name: &str, mut a: ArrayD<f32>) -> ArrayD<f32> {
    if !keras_drops_leading_ones(name) {
        return a;
    }
    // Removing an axis is a view change whatever the memory order (a reshape would need C
    // order); at least one axis stays.
    while a.ndim() > 1 && a.shape()[0] == 1 {
        a = a.index_axis_move(Axis(0), 0);
    }
    a
}

/// A weight array must hold finite values (NaN or infinity reaches every prediction; a
/// float64 value beyond float32's range arrives here as infinity), and a BatchNormalization
/// moving variance must not be negative (its square root would be NaN).
fn check_weight_values(
    index: usize,
    layer: &str,
    name: &str,
    a: &ndarray::ArrayD<f32>,
) -> Result<()> {
    if let Some(v) = a.iter().find(|v| !v.is_finite()) {
        return Err(Error::invalid_input(format!(
            "set_weights: layer {index} ({layer}) {name} holds {v} (weights must be finite; \
             a float64 value beyond float32's range of ±3.4e38 becomes infinity)"
        )));
    }
    if name == "running_var" || name == "variance" {
        if let Some(v) = a.iter().find(|v| **v < 0.0) {
            return Err(Error::invalid_input(format!(
                "set_weights: layer {index} ({layer}) {} ({name}) holds the negative value {v}; a variance must be >= 0",
                if name == "variance" { "variance" } else { "moving variance" }
            )));
        }
    }
    Ok(())
}

/// The names of `layer`'s arrays in [`keras_weights`]'s order (as this crate names them:
/// `weight`, `bias`, `running_mean`...).
pub fn keras_weight_names(layer: &dyn Layer) -> Vec<String> {
    keras_weights(layer)
        .into_iter()
        .map(|(name, _)| name.to_string())
        .collect()
}

/// A layer's arrays as Keras lists them: its names, in Keras's order and shapes.
pub fn keras_weights(layer: &dyn Layer) -> Vec<(&'static str, ArrayD<f32>)> {
    keras_arrays(layer, layer.get_weights().named_arrays())
        .into_iter()
        .map(|(name, a)| (name, to_keras_shape(name, a)))
        .collect()
}

/// Loads `weights`, given in Keras's order and shapes (or this crate's shapes), into
/// `layers`; every array is checked before any is set, so a refused call changes nothing.
pub fn set_keras_weights(layers: &mut [Box<dyn Layer>], weights: Vec<ArrayD<f32>>) -> Result<()> {
    let total_given = weights.len();
    let mut given = weights.into_iter();
    let mut staged = Vec::new();
    let mut expected_total = 0;
    for (i, layer) in layers.iter().enumerate() {
        let current = layer.get_weights();
        let names = keras_arrays(layer.as_ref(), current.named_arrays());
        expected_total += names.len();
        if names.is_empty() {
            continue;
        }
        let mut arrays = Vec::with_capacity(names.len());
        for (name, old) in &names {
            let Some(a) = given.next() else {
                return Err(Error::invalid_input(format!(
                    "set_weights: expected more weight arrays (layer {i} {} needs {name})",
                    layer.layer_type()
                )));
            };
            let keras_shape = to_keras_shape(name, old.clone()).shape().to_vec();
            if a.shape() != old.shape() && a.shape() != keras_shape.as_slice() {
                return Err(Error::invalid_input(format!(
                    "set_weights: layer {i} ({}) {name} must have shape {:?}, got {:?}",
                    layer.layer_type(),
                    keras_shape,
                    a.shape()
                )));
            }
            check_weight_values(i, layer.layer_type(), name, &a)?;
            arrays.push(a);
        }
        let arrays = from_keras_arrays(layer.as_ref(), arrays, &current.named_arrays());
        staged.push((i, current.with_arrays(arrays)?));
    }
    if total_given != expected_total {
        return Err(Error::invalid_input(format!(
            "set_weights: the model has {expected_total} weight arrays, got {total_given}"
        )));
    }
    for (i, w) in staged {
        layers[i].apply_weights(&w)?;
    }
    Ok(())
}
