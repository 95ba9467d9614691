//! Prints the original-API trees (structure, predictions, probabilities) for a set of
//! datasets and settings, so two builds can be diffed for behaviour changes.
//! `cargo run --example tree_dump > out.txt`

use ndarray::{Array1, Array2};
use rustyml::machine_learning::{Algorithm, DecisionTree};

fn uniform(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as f64 / 2f64.powi(64)
}

fn main() {
    // With a folder argument, each model is also saved there; with `--load` before it, the
    // saved models are loaded instead of fitted, so an older build's files can be checked.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let load = args.first().is_some_and(|a| a == "--load");
    let dir = args.last().filter(|a| *a != "--load").cloned();
    let mut count = 0;
    for (seed, n, d, levels) in [
        (1u64, 60, 3, 0u64),
        (2, 200, 4, 4),
        (3, 500, 5, 3),
        (4, 300, 6, 0),
    ] {
        // levels > 0: small integer-valued (categorical-like) features with many ties.
        let x = Array2::from_shape_fn((n, d), |(i, j)| {
            let u = uniform(seed * 1_000_003 + (i * d + j) as u64);
            if levels > 0 {
                (u * levels as f64).floor()
            } else {
                (u * 100.0).round() / 10.0
            }
        });
        let yr = Array1::from_shape_fn(n, |i| {
            x[[i, 0]] * 1.5 - x[[i, 1]] + uniform(seed * 7_777 + i as u64)
        });
        let yc = Array1::from_shape_fn(n, |i| {
            ((x[[i, 0]] + x[[i, 1 % d]] + 2.0 * uniform(seed * 99_991 + i as u64)) as u64 % 3)
                as f64
        });
        for (alg, classify) in [
            (Algorithm::CART, true),
            (Algorithm::ID3, true),
            (Algorithm::C45, true),
            (Algorithm::CART, false),
        ] {
            for (depth, split, leaf, mid, rs, cat) in [
                (None, 2, 1, 0.0, None, false),
                (Some(3), 4, 2, 0.0, Some(7u64), false),
                (None, 2, 1, 0.02, None, false),
                (None, 5, 3, 0.0, Some(1), true),
                (Some(4), 2, 1, 0.01, None, true),
            ] {
                let mut t = DecisionTree::new(alg, classify)
                    .unwrap()
                    .with_min_samples_split(split)
                    .unwrap()
                    .with_min_samples_leaf(leaf)
                    .unwrap()
                    .with_min_impurity_decrease(mid)
                    .unwrap();
                if let Some(m) = depth {
                    t = t.with_max_depth(m);
                }
                if let Some(s) = rs {
                    t = t.with_random_state(s);
                }
                if cat {
                    t.set_categorical_features(vec![0, 2]);
                }
                let y = if classify { &yc } else { &yr };
                count += 1;
                let file = dir.as_ref().map(|d| format!("{d}/{count}.bin"));
                if load {
                    t = DecisionTree::load_from_path(file.as_ref().unwrap()).unwrap();
                } else {
                    t.fit(&x, y).unwrap();
                    if let Some(f) = &file {
                        t.save_to_path(f).unwrap();
                    }
                }
                println!("== seed {seed} {alg:?} classify={classify} depth={depth:?} split={split} leaf={leaf} mid={mid} rs={rs:?} cat={cat}");
                println!("{}", t.generate_tree_structure().unwrap());
                let probe = x.mapv(|v| v + 0.5);
                let bits: Vec<u64> = t
                    .predict(&probe)
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                println!("predict {bits:?}");
                if classify {
                    let p = t.predict_proba(&probe).unwrap();
                    println!(
                        "proba {:?}",
                        p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}
