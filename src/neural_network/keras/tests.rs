use super::*;
use crate::neural_network::Tensor;
use ndarray::{arr1, arr2, Array2};

const TWO_DENSE: &str = r#"{"name": "net", "seed": 7, "input_shape": [3], "layers": [
    {"class_name": "Dense", "config": {"units": 2, "activation": "relu", "name": "hidden"}},
    {"class_name": "Dense", "config": {"units": 1, "use_bias": false}}]}"#;

const SGD: &str = r#"{"class_name": "SGD", "config": {"learning_rate": 0.05, "momentum": 0.9, "nesterov": false}}"#;
const MSE: &str = r#"{"name": "mean_squared_error"}"#;

fn data(n: usize) -> (Tensor, Tensor) {
    let x = Array2::from_shape_fn((n, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f32 / 5.0 - 1.0);
    let y = Array2::from_shape_fn((n, 1), |(i, _)| (i % 3) as f32 - 1.0);
    (x.into_dyn(), y.into_dyn())
}

fn bits(arrays: &[ArrayD<f32>]) -> Vec<u32> {
    arrays
        .iter()
        .flat_map(|a| a.iter().map(|v| v.to_bits()))
        .collect()
}

#[test]
fn a_config_builds_the_network_it_describes_and_keras_weights_set_its_forward() {
    let mut net = model_from_config(TWO_DENSE).unwrap();
    assert_eq!(net.input_shape(), &[3]);
    assert_eq!(net.output_shapes(), &[vec![2], vec![1]]);
    // Keras's layout: kernel (in, units), bias (units,), no bias for use_bias=False
    let shapes: Vec<Vec<usize>> = net
        .get_weights()
        .iter()
        .map(|a| a.shape().to_vec())
        .collect();
    assert_eq!(shapes, vec![vec![3, 2], vec![2], vec![2, 1]]);
    let summaries = net.layer_summaries();
    assert_eq!(summaries[0], ("Dense".to_string(), vec![2], 8));
    assert_eq!(summaries[1], ("Dense".to_string(), vec![1], 2));
    net.set_weights(vec![
        arr2(&[[1.0f32, 0.0], [0.0, 1.0], [1.0, -1.0]]).into_dyn(),
        arr1(&[0.5f32, -1.0]).into_dyn(),
        arr2(&[[2.0f32], [3.0]]).into_dyn(),
    ])
    .unwrap();
    // x = (1, 2, 3): hidden = relu((1 + 3 + 0.5, 2 - 3 - 1)) = (4.5, 0); out = 2 * 4.5 = 9
    let out = net
        .model()
        .predict(&arr2(&[[1.0f32, 2.0, 3.0]]).into_dyn())
        .unwrap();
    assert_eq!(out.iter().copied().collect::<Vec<_>>(), vec![9.0]);
}

#[test]
fn config_model_config_round_trips_and_rebuilds_the_same_weights() {
    let net = model_from_config(TWO_DENSE).unwrap();
    let config = net.to_config();
    assert_eq!(config["name"], "net");
    assert_eq!(config["seed"], 7);
    // defaults filled in, keys rustyml does not read (the layer's name) dropped
    assert_eq!(
        config["layers"][0],
        serde_json::json!({"class_name": "Dense", "config":
            {"units": 2, "activation": "relu", "use_bias": true, "seed": null}})
    );
    let again = model_from_config(&config.to_string()).unwrap();
    assert_eq!(again.to_config(), config);
    assert_eq!(bits(&again.get_weights()), bits(&net.get_weights()));
    let (x, _) = data(5);
    assert_eq!(
        bits(&[again.model().predict(&x).unwrap()]),
        bits(&[net.model().predict(&x).unwrap()])
    );
}

#[test]
fn every_layer_family_survives_the_round_trip() {
    let config = r#"{"seed": 1, "input_shape": [8, 8, 2], "layers": [
        {"class_name": "Conv2D", "config": {"filters": 3, "kernel_size": 3, "padding": "same"}},
        {"class_name": "BatchNormalization", "config": {"momentum": 0.9, "epsilon": 0.001}},
        {"class_name": "MaxPooling2D", "config": {"pool_size": [2, 2]}},
        {"class_name": "SeparableConv2D", "config": {"filters": 2, "kernel_size": [2, 2]}},
        {"class_name": "LayerNormalization", "config": {"axis": -1, "epsilon": 0.001}},
        {"class_name": "ZeroPadding2D", "config": {"padding": [[1, 0], [0, 1]]}},
        {"class_name": "Reshape", "config": {"target_shape": [16, 2]}},
        {"class_name": "Bidirectional", "config": {"layer":
            {"class_name": "GRU", "config": {"units": 2, "return_sequences": true}},
            "merge_mode": "concat"}},
        {"class_name": "GlobalAveragePooling1D", "config": {}},
        {"class_name": "Dropout", "config": {"rate": 0.5}},
        {"class_name": "Dense", "config": {"units": 2, "activation": "softmax"}}]}"#;
    let net = model_from_config(config).unwrap();
    assert_eq!(net.output_shape(), &[2]);
    let again = model_from_config(&net.to_config().to_string()).unwrap();
    assert_eq!(again.to_config(), net.to_config());
    assert_eq!(bits(&again.get_weights()), bits(&net.get_weights()));
}

#[test]
fn configs_that_do_not_build_are_refused_with_the_door_s_messages() {
    let err = |json: &str| model_from_config(json).err().unwrap().to_string();
    let e = err(r#"{"input_shape": [3], "layers": [{"class_name": "Nope", "config": {}}]}"#);
    assert!(
        e.starts_with("invalid input: invalid layer 0 (Nope) config: unknown variant `Nope`"),
        "{e}"
    );
    assert_eq!(
        err(r#"{"input_shape": [3], "layers": []}"#),
        "invalid input: the model has no layers"
    );
    let e = err(r#"{"input_shape": [4, 4], "layers": [
        {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [3, 3]}}]}"#);
    assert!(
        e.contains("layer 0 (Conv2D) does not fit the input of per-sample shape [4, 4]"),
        "{e}"
    );
    // Keras applies Dense to the last axis of any input (RustyML 0.15's layer would refuse)
    let dense_3d = model_from_config(
        r#"{"input_shape": [4, 4], "layers": [{"class_name": "Dense", "config": {"units": 2}}]}"#,
    )
    .unwrap();
    assert_eq!(dense_3d.output_shape(), &[4, 2]);
    assert!(err(r#"{"layers": []}"#).contains("no input_shape"));
    let mut net = model_from_config(TWO_DENSE).unwrap();
    let e = net.compile_json("{}", MSE).err().unwrap().to_string();
    assert!(
        e.starts_with("invalid input: invalid optimizer config"),
        "{e}"
    );
    // a refused set_weights changes nothing
    let before = bits(&net.get_weights());
    let mut w = net.get_weights();
    w[1][0] = f32::NAN;
    assert!(net.set_weights(w).is_err());
    assert_eq!(bits(&net.get_weights()), before);
}

#[test]
fn optimizer_and_loss_specs_round_trip_and_compile() {
    for json in [
        SGD,
        r#"{"class_name": "AdamW", "config": {"learning_rate": 0.001, "beta_1": 0.9,
            "beta_2": 0.999, "epsilon": 1e-7, "weight_decay": 0.004, "amsgrad": true}}"#,
        r#"{"class_name": "RMSprop", "config": {"learning_rate": 0.01, "rho": 0.9,
            "epsilon": 1e-7, "clipnorm": 1.0}}"#,
        r#"{"class_name": "Adagrad", "config": {"learning_rate": 0.01, "epsilon": 1e-7}}"#,
    ] {
        let spec: OptimizerSpec = serde_json::from_str(json).unwrap();
        let again: OptimizerSpec =
            serde_json::from_value(serde_json::to_value(&spec).unwrap()).unwrap();
        assert_eq!(again, spec);
        spec.build().unwrap();
    }
    let loss: LossSpec =
        serde_json::from_str(r#"{"name": "binary_crossentropy", "from_logits": true}"#).unwrap();
    assert!(loss.from_logits);
    let mut net = model_from_config(TWO_DENSE).unwrap();
    net.compile_json(SGD, MSE).unwrap();
    net.model_mut().set_learning_rate(0.25);
    let (opt, loss) = net.compile_config().unwrap();
    assert_eq!(loss.name, "mean_squared_error");
    let OptimizerSpec::SGD { common, .. } = opt else {
        panic!("an SGD config")
    };
    assert_eq!(common.learning_rate, 0.25);
}

/// The Keras door's loop (`epoch_order` chunks stepped by `train_rows`, as the Python binding
/// runs it between its callbacks) and `Sequential::fit_with_batches` train on the same
/// batches: the same weights, bit for bit.
#[test]
fn both_epoch_loops_train_on_the_same_batches() {
    let (x, y) = data(13);
    let (epochs, batch_size) = (3u64, 4usize);
    let mut rust_door = model_from_config(TWO_DENSE).unwrap();
    rust_door.compile_json(SGD, MSE).unwrap();
    let history = rust_door
        .model_mut()
        .fit_with_batches(&x, &y, epochs as u32, batch_size)
        .unwrap();

    let mut keras_door = model_from_config(TWO_DENSE).unwrap();
    keras_door.compile_json(SGD, MSE).unwrap();
    let mut losses = Vec::new();
    for epoch in 0..epochs {
        let model = keras_door.model_mut();
        let order = model.epoch_order(13, true, epoch);
        let mut total = 0.0f64;
        for rows in order.chunks(batch_size) {
            let (loss, _) = model.train_rows(x.view(), y.view(), rows).unwrap();
            total += f64::from(loss) * rows.len() as f64;
        }
        losses.push((total / 13.0) as f32);
    }
    assert_eq!(
        bits(&keras_door.get_weights()),
        bits(&rust_door.get_weights())
    );
    assert_eq!(history.loss(), losses.as_slice());
    // shuffling happened: the unshuffled order trains to other weights
    let mut unshuffled = model_from_config(TWO_DENSE).unwrap();
    unshuffled.compile_json(SGD, MSE).unwrap();
    for _ in 0..epochs {
        let model = unshuffled.model_mut();
        for rows in model.epoch_order(13, false, 0).chunks(batch_size) {
            model.train_rows(x.view(), y.view(), rows).unwrap();
        }
    }
    assert_ne!(
        bits(&unshuffled.get_weights()),
        bits(&rust_door.get_weights())
    );
}

#[test]
fn epoch_orders_are_permutations_fixed_by_seed_and_epoch() {
    let mut a = Sequential::new_with_seed(3);
    let mut b = Sequential::new_with_seed(3);
    let order = a.epoch_order(50, true, 2);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    // the order of an epoch does not depend on the orders asked for before it
    b.epoch_order(50, true, 0);
    assert_eq!(b.epoch_order(50, true, 2), order);
    assert_ne!(a.epoch_order(50, true, 3), order);
    assert_ne!(Sequential::new_with_seed(4).epoch_order(50, true, 2), order);
    assert_eq!(a.epoch_order(5, false, 9), vec![0, 1, 2, 3, 4]);
}

/// `fit_with_batches` numbers its epochs on from the previous call (as Keras's
/// `initial_epoch`), so training in two calls is training in one.
#[test]
fn fit_with_batches_in_two_calls_is_one_call() {
    let (x, y) = data(10);
    let train = |calls: &[u32]| {
        let mut net = model_from_config(TWO_DENSE).unwrap();
        net.compile_json(SGD, MSE).unwrap();
        for &epochs in calls {
            net.model_mut().fit_with_batches(&x, &y, epochs, 3).unwrap();
        }
        bits(&net.get_weights())
    };
    assert_eq!(train(&[1, 2]), train(&[3]));
    assert_ne!(train(&[1, 1, 1]), train(&[1]));
}

/// The state bytes carry weights, optimizer moments and step count, and the shuffling
/// position: a copy built from the same config continues training with the original's bits,
/// and one built without them (a fresh optimizer) does not.
#[test]
fn a_model_rebuilt_from_its_state_continues_training_with_the_same_bits() {
    const ADAM: &str = r#"{"class_name": "Adam", "config": {"learning_rate": 0.01,
        "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}}"#;
    let (x, y) = data(11);
    let mut original = model_from_config(TWO_DENSE).unwrap();
    original.compile_json(ADAM, MSE).unwrap();
    original.model_mut().fit_with_batches(&x, &y, 2, 4).unwrap();
    let bytes = original.state_bytes().unwrap();

    let rebuilt = || {
        // another seed: every weight must come from the state
        let config = TWO_DENSE.replace("\"seed\": 7", "\"seed\": 8");
        let mut net = model_from_config(&config).unwrap();
        net.compile_json(ADAM, MSE).unwrap();
        net
    };
    let mut copy = rebuilt();
    copy.load_state_bytes(&bytes).unwrap();
    assert_eq!(bits(&copy.get_weights()), bits(&original.get_weights()));
    assert_eq!(copy.model().epochs_trained(), 2);

    let mut without_optimizer_state = rebuilt();
    without_optimizer_state
        .set_weights(original.get_weights())
        .unwrap();
    without_optimizer_state
        .model_mut()
        .resume_shuffling(original.model().seed(), 2);

    for net in [&mut original, &mut copy, &mut without_optimizer_state] {
        net.model_mut().fit_with_batches(&x, &y, 1, 4).unwrap();
    }
    assert_eq!(bits(&copy.get_weights()), bits(&original.get_weights()));
    assert_ne!(
        bits(&without_optimizer_state.get_weights()),
        bits(&original.get_weights())
    );
}

#[test]
fn a_state_that_does_not_fit_is_refused_and_changes_nothing() {
    let mut trained = model_from_config(TWO_DENSE).unwrap();
    trained.compile_json(SGD, MSE).unwrap();
    let (x, y) = data(6);
    trained.model_mut().fit_with_batches(&x, &y, 1, 3).unwrap();
    let bytes = trained.state_bytes().unwrap();

    let mut target = model_from_config(TWO_DENSE).unwrap();
    // saved compiled, loaded into an uncompiled model
    let e = target.load_state_bytes(&bytes).unwrap_err().to_string();
    assert!(e.contains("saved from a model compiled"), "{e}");
    target.compile_json(SGD, MSE).unwrap();
    let before = bits(&target.get_weights());
    for bad in [&bytes[..bytes.len() / 2], &bytes[1..], &b"RMLNNST\x01"[..]] {
        assert!(target.load_state_bytes(bad).is_err());
        assert_eq!(bits(&target.get_weights()), before);
    }
    // another architecture: refused by the weight checks, optimizer state left as it was
    let other = r#"{"seed": 7, "input_shape": [3], "layers": [
        {"class_name": "Dense", "config": {"units": 3}},
        {"class_name": "Dense", "config": {"units": 1}}]}"#;
    let mut other = model_from_config(other).unwrap();
    other.compile_json(SGD, MSE).unwrap();
    let e = other.load_state_bytes(&bytes).unwrap_err().to_string();
    assert!(e.contains("set_weights"), "{e}");
    assert_eq!(other.model().optimizer_state().unwrap().groups[0].len(), 0);
    let e = model_from_config(
        r#"{"input_shape": [3], "layers": [
        {"class_name": "Dense", "config": {"units": 2}}]}"#,
    )
    .unwrap()
    .load_state_bytes(&bytes)
    .unwrap_err()
    .to_string();
    assert!(e.contains("it holds 2 layers, this model has 1"), "{e}");
}

/// A config that leaves out constructor arguments gets Keras's defaults, as Keras's
/// `from_config` gives them (Adam/Nadam/Adamax betas 0.9 and 0.999, epsilon 1e-7, RMSprop's
/// rho 0.9, SGD without momentum).
#[test]
fn partial_optimizer_configs_take_keras_defaults() {
    use crate::neural_network::keras::OptimizerSpec;
    let read = |json: &str| serde_json::from_str::<OptimizerSpec>(json).unwrap();
    for class in ["Adam", "Nadam", "Adamax"] {
        assert_eq!(
            read(&format!(
                r#"{{"class_name": "{class}", "config": {{"learning_rate": 0.01}}}}"#
            )),
            read(&format!(
                r#"{{"class_name": "{class}", "config": {{"learning_rate": 0.01,
                    "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}}}}"#
            ))
        );
    }
    assert_eq!(
        read(r#"{"class_name": "RMSprop", "config": {"learning_rate": 0.01}}"#),
        read(
            r#"{"class_name": "RMSprop", "config": {"learning_rate": 0.01, "rho": 0.9,
                "epsilon": 1e-7, "momentum": 0.0, "centered": false}}"#
        )
    );
    assert_eq!(
        read(r#"{"class_name": "SGD", "config": {"learning_rate": 0.01}}"#),
        read(
            r#"{"class_name": "SGD", "config": {"learning_rate": 0.01, "momentum": 0.0,
                "nesterov": false}}"#
        )
    );
    // the rate has a different default per class in Keras: it stays required
    assert!(
        serde_json::from_str::<OptimizerSpec>(r#"{"class_name": "Adam", "config": {}}"#).is_err()
    );
}
