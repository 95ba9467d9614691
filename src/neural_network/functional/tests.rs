use crate::neural_network::keras::{
    functional_model_from_config, model_from_config, KerasFunctional,
};
use crate::neural_network::test_support::on_threads;
use crate::neural_network::{Tensor, TensorView};
use serde_json::{json, Value};

/// A tensor reference `"name"` (call 0) or `"name#k"` (call k), as Keras's keras_history.
fn tensor(r: &str) -> Value {
    let (name, node) = match r.split_once('#') {
        Some((n, k)) => (n, k.parse::<usize>().unwrap()),
        None => (r, 0),
    };
    json!({"class_name": "__keras_tensor__", "config": {"keras_history": [name, node, 0]}})
}

/// A layer entry: `calls` lists each call's input tensors (one for a plain layer).
fn layer(name: &str, class: &str, config: Value, calls: &[&[&str]]) -> Value {
    let nodes: Vec<Value> = calls
        .iter()
        .map(|c| {
            let arg = if c.len() == 1
                && ![
                    "Add",
                    "Subtract",
                    "Multiply",
                    "Average",
                    "Maximum",
                    "Minimum",
                    "Concatenate",
                    "Dot",
                ]
                .contains(&class)
            {
                tensor(c[0])
            } else {
                Value::Array(c.iter().map(|r| tensor(r)).collect())
            };
            json!({"args": [arg], "kwargs": {}})
        })
        .collect();
    json!({"class_name": class, "name": name, "config": config, "inbound_nodes": nodes})
}

fn input(name: &str, shape: &[usize]) -> Value {
    let mut b = vec![Value::Null];
    b.extend(shape.iter().map(|&s| json!(s)));
    json!({"class_name": "InputLayer", "name": name, "config": {"batch_shape": b}, "inbound_nodes": []})
}

fn model(layers: Vec<Value>, inputs: &[&str], outputs: &[&str], seed: u64) -> RustymlModel {
    let refs = |names: &[&str]| Value::Array(names.iter().map(|n| json!([n, 0, 0])).collect());
    let config = json!({"name": "m", "seed": seed, "layers": layers,
        "input_layers": refs(inputs), "output_layers": refs(outputs)});
    functional_model_from_config(&config.to_string())
}

type RustymlModel = crate::error::Result<KerasFunctional>;

fn sgd(lr: f32) -> String {
    json!({"class_name": "SGD", "config": {"learning_rate": lr, "momentum": 0.0, "nesterov": false}}).to_string()
}

fn mse(n: usize) -> String {
    Value::Array(vec![json!({"name": "mean_squared_error"}); n]).to_string()
}

fn t(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_shape_vec(ndarray::IxDyn(shape), v.to_vec()).unwrap()
}

fn smooth(shape: &[usize], k: f32) -> Tensor {
    let n: usize = shape.iter().product();
    t(
        shape,
        &(0..n)
            .map(|i| ((i as f32 + 1.0) * 0.37 + k).sin())
            .collect::<Vec<_>>(),
    )
}

#[test]
fn a_shared_layer_sums_its_calls_gradients_by_hand() {
    // o = d(a) + d(b) with d(x) = w x + c, one sample, MSE against y:
    // dL/dw = 2 (o - y) (a + b), dL/dc = 2 (o - y) * 2
    let mut m = model(
        vec![
            input("a", &[1]),
            input("b", &[1]),
            layer("d", "Dense", json!({"units": 1}), &[&["a"], &["b"]]),
            layer("s", "Add", json!({}), &[&["d", "d#1"]]),
        ],
        &["a", "b"],
        &["s"],
        3,
    )
    .unwrap();
    m.set_weights(vec![t(&[1, 1], &[0.5]), t(&[1], &[0.25])])
        .unwrap();
    m.compile_json(&sgd(0.1), &mse(1), vec![1.0]).unwrap();
    let (a, b, y) = (2.0f32, -1.0f32, 3.0f32);
    let o = (0.5 * a + 0.25) + (0.5 * b + 0.25);
    let step = m
        .model_mut()
        .train_batch(
            vec![t(&[1, 1], &[a]), t(&[1, 1], &[b])],
            &[t(&[1, 1], &[y])],
        )
        .unwrap();
    assert!((step.loss - (o - y) * (o - y)).abs() < 1e-6);
    let w = m.get_weights();
    let (dw, dc) = (2.0 * (o - y) * (a + b), 2.0 * (o - y) * 2.0);
    assert!((w[0][[0, 0]] - (0.5 - 0.1 * dw)).abs() < 1e-6, "{:?}", w);
    assert!((w[1][[0]] - (0.25 - 0.1 * dc)).abs() < 1e-6, "{:?}", w);
}

#[test]
fn a_tensor_feeding_two_layers_gets_both_gradients() {
    // residual: o = h + d2(h), h = d1(x): checks the sum against finite differences of the
    // loss in each weight of d1 (whose gradient arrives by two paths)
    let build = || {
        let mut m = model(
            vec![
                input("x", &[3]),
                layer(
                    "d1",
                    "Dense",
                    json!({"units": 2, "activation": "tanh"}),
                    &[&["x"]],
                ),
                layer("d2", "Dense", json!({"units": 2}), &[&["d1"]]),
                layer("s", "Add", json!({}), &[&["d1", "d2"]]),
            ],
            &["x"],
            &["s"],
            7,
        )
        .unwrap();
        m.compile_json(&sgd(1.0), &mse(1), vec![1.0]).unwrap();
        m
    };
    let x = smooth(&[4, 3], 0.0);
    let y = smooth(&[4, 2], 1.0);
    let loss_at = |w: &[Tensor]| {
        let mut m = build();
        m.set_weights(w.to_vec()).unwrap();
        m.model().evaluate(&[x.view()], &[y.view()]).unwrap().0 as f64
    };
    let mut m = build();
    let w0 = m.get_weights();
    m.model_mut()
        .train_batch(vec![x.clone()], std::slice::from_ref(&y))
        .unwrap();
    let w1 = m.get_weights();
    // with SGD at rate 1, the step is the gradient
    let h = 1e-2f32;
    for j in 0..w0[0].len() {
        let mut plus = w0.clone();
        let mut minus = w0.clone();
        plus[0].as_slice_mut().unwrap()[j] += h;
        minus[0].as_slice_mut().unwrap()[j] -= h;
        let numeric = (loss_at(&plus) - loss_at(&minus)) / (2.0 * h as f64);
        let analytic = (w0[0].as_slice().unwrap()[j] - w1[0].as_slice().unwrap()[j]) as f64;
        assert!(
            (numeric - analytic).abs() < 2e-3 * (1.0 + analytic.abs()),
            "{j}: {analytic} vs {numeric}"
        );
    }
}

/// A two-tower, shared-layer, two-output model trained with Adam and a clip norm.
fn two_tower() -> KerasFunctional {
    let mut m = model(
        vec![
            input("a", &[4]),
            input("b", &[3]),
            layer(
                "da",
                "Dense",
                json!({"units": 5, "activation": "relu"}),
                &[&["a"]],
            ),
            layer(
                "db",
                "Dense",
                json!({"units": 5, "activation": "tanh"}),
                &[&["b"]],
            ),
            layer("shared", "Dense", json!({"units": 5}), &[&["da"], &["db"]]),
            layer(
                "cat",
                "Concatenate",
                json!({"axis": -1}),
                &[&["shared", "shared#1"]],
            ),
            layer("mx", "Maximum", json!({}), &[&["da", "db"]]),
            layer("o1", "Dense", json!({"units": 2}), &[&["cat"]]),
            layer("o2", "Dense", json!({"units": 1}), &[&["mx"]]),
        ],
        &["a", "b"],
        &["o1", "o2"],
        11,
    )
    .unwrap();
    let adam = json!({"class_name": "Adam", "config": {"learning_rate": 0.01, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "global_clipnorm": 0.5}});
    m.compile_json(&adam.to_string(), &mse(2), vec![1.0, 0.5])
        .unwrap();
    m
}

#[test]
fn same_seed_same_bits_at_one_and_several_threads() {
    let xa = smooth(&[30, 4], 0.0);
    let xb = smooth(&[30, 3], 2.0);
    let y1 = smooth(&[30, 2], 4.0);
    let y2 = smooth(&[30, 1], 5.0);
    let train = |threads: usize| {
        on_threads(threads, || {
            let mut m = two_tower();
            let h = m
                .model_mut()
                .fit_with_batches(&[xa.clone(), xb.clone()], &[y1.clone(), y2.clone()], 3, 7)
                .unwrap();
            let outs = m.model().predict(&[xa.view(), xb.view()]).unwrap();
            let bits: Vec<u32> = outs
                .iter()
                .flat_map(|o| o.iter().map(|v| v.to_bits()))
                .collect();
            (h, bits)
        })
    };
    let one = train(1);
    assert_eq!(one, train(2));
    assert_eq!(one, train(4));
    assert!(one.0[2] < one.0[0], "training lowers the loss: {:?}", one.0);
}

#[test]
fn a_chain_trains_to_the_bits_of_the_same_sequential() {
    let mut seq = model_from_config(
        &json!({"seed": 5, "input_shape": [3], "layers": [
            {"class_name": "Dense", "config": {"units": 4, "activation": "tanh"}},
            {"class_name": "Dense", "config": {"units": 2}}]})
        .to_string(),
    )
    .unwrap();
    let mut g = model(
        vec![
            input("x", &[3]),
            layer(
                "d1",
                "Dense",
                json!({"units": 4, "activation": "tanh"}),
                &[&["x"]],
            ),
            layer("d2", "Dense", json!({"units": 2}), &[&["d1"]]),
        ],
        &["x"],
        &["d2"],
        5,
    )
    .unwrap();
    g.set_weights(seq.get_weights()).unwrap();
    seq.compile_json(
        &sgd(0.05),
        &json!({"name": "mean_squared_error"}).to_string(),
    )
    .unwrap();
    g.compile_json(&sgd(0.05), &mse(1), vec![1.0]).unwrap();
    let x = smooth(&[20, 3], 0.0);
    let y = smooth(&[20, 2], 1.0);
    let hs = seq.model_mut().fit_with_batches(&x, &y, 2, 6).unwrap();
    let hg = g
        .model_mut()
        .fit_with_batches(std::slice::from_ref(&x), std::slice::from_ref(&y), 2, 6)
        .unwrap();
    assert_eq!(hs.loss(), hg.as_slice());
    let ps = seq.model().predict(&x).unwrap();
    let pg = g.model().predict(&[x.view()]).unwrap();
    assert_eq!(ps, pg[0]);
}

#[test]
fn bad_graphs_are_named_errors() {
    let err = model(
        vec![
            input("a", &[2]),
            input("z", &[2]),
            layer("s", "Add", json!({}), &[&["a", "z"]]),
        ],
        &["a"],
        &["s"],
        0,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("Graph disconnected") && err.contains("\"z\""),
        "{err}"
    );
    let err = model(
        vec![
            input("a", &[2]),
            input("b", &[3]),
            layer("s", "Add", json!({}), &[&["a", "b"]]),
        ],
        &["a", "b"],
        &["s"],
        0,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("\"s\"") && err.contains("same shape"), "{err}");
    let err = model(
        vec![
            input("a", &[2]),
            layer("d", "Dense", json!({"units": 1}), &[&["nope"]]),
        ],
        &["a"],
        &["d"],
        0,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("\"nope\""), "{err}");
    let err = model(
        vec![
            input("a", &[2]),
            input("b", &[3]),
            layer("d", "Dense", json!({"units": 1}), &[&["a"], &["b"]]),
            layer("s", "Add", json!({}), &[&["d", "d#1"]]),
        ],
        &["a", "b"],
        &["s"],
        0,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("shared layer"), "{err}");
    // wrong number of arrays at run time
    let m = two_tower();
    let x: Vec<TensorView<'_>> = Vec::new();
    assert!(m.model().predict(&x).is_err());
}

/// Keras's merge-layer masks: the logical and of the inputs' masks (an input without one
/// counts as all true); `Dot` drops them; masks of different shapes are refused.
#[test]
fn merge_layers_combine_keras_masks() {
    use super::graph::merged_mask;
    use crate::neural_network::layers::merge::{Dot, ElementwiseMerge, MergeOp};
    use crate::neural_network::traits::Mask;
    let a = Mask::from_shape_vec(vec![2, 2], vec![true, true, false, true]).unwrap();
    let b = Mask::from_shape_vec(vec![2, 2], vec![true, false, true, true]).unwrap();
    let add = ElementwiseMerge::new(MergeOp::Add);
    let masks = vec![Some(a.clone()), Some(b), None];
    let both = merged_mask(&add, &[0, 1], &masks).unwrap().unwrap();
    assert_eq!(
        both.iter().copied().collect::<Vec<_>>(),
        [true, false, false, true]
    );
    assert_eq!(merged_mask(&add, &[0, 2], &masks).unwrap(), Some(a.clone()));
    assert_eq!(merged_mask(&add, &[2, 2], &masks).unwrap(), None);
    assert_eq!(
        merged_mask(&Dot::new([1, 1], false), &[0, 1], &masks).unwrap(),
        None
    );
    let long = Mask::from_elem(vec![2, 4], true);
    let err = merged_mask(&add, &[0, 1], &[Some(a), Some(long)]).unwrap_err();
    assert!(err.to_string().contains("mask"), "{err}");
}
