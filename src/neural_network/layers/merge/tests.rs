use super::*;
use ndarray::IxDyn;

fn t(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_shape_vec(IxDyn(shape), v.to_vec()).unwrap()
}

/// A smooth pseudo-random tensor (no ties) of `shape`, offset by `k`.
fn smooth(shape: &[usize], k: f32) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as f32 + 1.0) * 0.731 + k).sin())
        .collect();
    t(shape, &v)
}

/// Checks `backward` against central differences of `sum(out * w)` for a fixed weighting
/// `w`, computed in f64 from f32 evaluations; the step and tolerance suit f32 arithmetic
/// on values of order 1 (the truncation error is O(h^2), the rounding O(eps / h)).
fn check_gradient(layer: &mut dyn MergeLayer, inputs: &[Tensor]) {
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let out = layer.forward(&refs).unwrap();
    let w = smooth(out.shape(), 0.3);
    let grads = layer.backward(&w).unwrap();
    let objective = |xs: &[Tensor]| -> f64 {
        let r: Vec<&Tensor> = xs.iter().collect();
        let o = layer.predict(&r).unwrap();
        o.iter()
            .zip(w.iter())
            .map(|(&a, &b)| a as f64 * b as f64)
            .sum()
    };
    let h = 1e-2f32;
    for (i, g) in grads.iter().enumerate() {
        assert_eq!(g.shape(), inputs[i].shape());
        for j in 0..inputs[i].len() {
            let mut plus = inputs.to_vec();
            let mut minus = inputs.to_vec();
            plus[i].as_slice_mut().unwrap()[j] += h;
            minus[i].as_slice_mut().unwrap()[j] -= h;
            let numeric = (objective(&plus) - objective(&minus)) / (2.0 * h as f64);
            let analytic = g.as_slice().unwrap()[j] as f64;
            assert!(
                (numeric - analytic).abs() <= 2e-3 * (1.0 + analytic.abs()),
                "{}: input {i} element {j}: analytic {analytic}, numeric {numeric}",
                layer.layer_type()
            );
        }
    }
}

#[test]
fn elementwise_values_by_hand() {
    let a = t(&[1, 3], &[1.0, -2.0, 3.0]);
    let b = t(&[1, 3], &[4.0, 5.0, -6.0]);
    let c = t(&[1, 3], &[0.5, 0.5, 2.0]);
    let run = |op, xs: &[&Tensor]| ElementwiseMerge::new(op).predict(xs).unwrap();
    assert_eq!(
        run(MergeOp::Add, &[&a, &b, &c]),
        t(&[1, 3], &[5.5, 3.5, -1.0])
    );
    assert_eq!(
        run(MergeOp::Subtract, &[&a, &b]),
        t(&[1, 3], &[-3.0, -7.0, 9.0])
    );
    assert_eq!(
        run(MergeOp::Multiply, &[&a, &b, &c]),
        t(&[1, 3], &[2.0, -5.0, -36.0])
    );
    assert_eq!(
        run(MergeOp::Average, &[&a, &b]),
        t(&[1, 3], &[2.5, 1.5, -1.5])
    );
    assert_eq!(
        run(MergeOp::Maximum, &[&a, &b, &c]),
        t(&[1, 3], &[4.0, 5.0, 3.0])
    );
    assert_eq!(
        run(MergeOp::Minimum, &[&a, &b, &c]),
        t(&[1, 3], &[0.5, -2.0, -6.0])
    );
}

#[test]
fn maximum_and_minimum_split_ties_as_the_fold_differentiates() {
    // max(max(a, b), c) with a == b == c: the outer tie halves the gradient between the
    // inner max and c, the inner tie halves its half again between a and b
    let x = t(&[1, 1], &[2.0]);
    for op in [MergeOp::Maximum, MergeOp::Minimum] {
        let mut m = ElementwiseMerge::new(op);
        m.forward(&[&x, &x, &x]).unwrap();
        let g = m.backward(&t(&[1, 1], &[1.0])).unwrap();
        let shares: Vec<f32> = g.iter().map(|t| t[[0, 0]]).collect();
        assert_eq!(shares, vec![0.25, 0.25, 0.5]);
    }
    // no tie: the winner takes all
    let (lo, hi) = (t(&[1, 1], &[1.0]), t(&[1, 1], &[3.0]));
    let mut m = ElementwiseMerge::new(MergeOp::Maximum);
    m.forward(&[&lo, &hi]).unwrap();
    let g = m.backward(&t(&[1, 1], &[2.0])).unwrap();
    assert_eq!((g[0][[0, 0]], g[1][[0, 0]]), (0.0, 2.0));
}

#[test]
fn elementwise_gradients_match_finite_differences() {
    let xs = vec![
        smooth(&[2, 3], 0.0),
        smooth(&[2, 3], 1.0),
        smooth(&[2, 3], 2.0),
    ];
    for op in [
        MergeOp::Add,
        MergeOp::Multiply,
        MergeOp::Average,
        MergeOp::Maximum,
        MergeOp::Minimum,
    ] {
        check_gradient(&mut ElementwiseMerge::new(op), &xs);
    }
    check_gradient(&mut ElementwiseMerge::new(MergeOp::Subtract), &xs[..2]);
}

#[test]
fn concatenate_values_shapes_and_gradient() {
    let a = t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let b = t(&[2, 1], &[5.0, 6.0]);
    let c = Concatenate::new(-1);
    assert_eq!(
        c.predict(&[&a, &b]).unwrap(),
        t(&[2, 3], &[1.0, 2.0, 5.0, 3.0, 4.0, 6.0])
    );
    assert_eq!(c.output_shape(&[vec![2], vec![1]]).unwrap(), vec![3]);
    assert_eq!(
        Concatenate::new(1)
            .output_shape(&[vec![2, 3], vec![4, 3]])
            .unwrap(),
        vec![6, 3]
    );
    let err = c.output_shape(&[vec![2, 3], vec![4, 3]]).unwrap_err();
    assert!(
        err.to_string().contains("every axis except the joined"),
        "{err}"
    );
    assert!(Concatenate::new(0)
        .output_shape(&[vec![2], vec![2]])
        .is_err());
    check_gradient(
        &mut Concatenate::new(1),
        &[smooth(&[2, 2, 3], 0.0), smooth(&[2, 1, 3], 1.0)],
    );
}

#[test]
fn dot_values_by_hand() {
    // vectors: one number per sample, shape (1,)
    let a = t(&[2, 3], &[1.0, 2.0, 3.0, 0.0, 1.0, 0.0]);
    let b = t(&[2, 3], &[4.0, 5.0, 6.0, 2.0, 7.0, 1.0]);
    let d = Dot::new([1, 1], false);
    assert_eq!(d.predict(&[&a, &b]).unwrap(), t(&[2, 1], &[32.0, 7.0]));
    // normalised: cosine similarity; (1,0)·(1,1)/sqrt(2)
    let u = t(&[1, 2], &[3.0, 0.0]);
    let v = t(&[1, 2], &[2.0, 2.0]);
    let cos = Dot::new([1, 1], true).predict(&[&u, &v]).unwrap()[[0, 0]];
    assert!((cos - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    // matrices: (2,3)·(3,1) per sample with axes (2, 1)
    let m = t(&[1, 2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let w = t(&[1, 3, 1], &[1.0, 0.0, -1.0]);
    let mm = Dot::new([2, 1], false);
    assert_eq!(
        mm.output_shape(&[vec![2, 3], vec![3, 1]]).unwrap(),
        vec![2, 1]
    );
    assert_eq!(mm.predict(&[&m, &w]).unwrap(), t(&[1, 2, 1], &[-2.0, -2.0]));
    // axes (1, 1) on (2,3) and (2,4): contracts the 2s, output (3, 4)
    assert_eq!(
        Dot::new([1, 1], false)
            .output_shape(&[vec![2, 3], vec![2, 4]])
            .unwrap(),
        vec![3, 4]
    );
    let err = Dot::new([1, 1], false)
        .output_shape(&[vec![3], vec![4]])
        .unwrap_err();
    assert!(err.to_string().contains("contracted sizes differ"), "{err}");
}

#[test]
fn dot_gradients_match_finite_differences() {
    check_gradient(
        &mut Dot::new([1, 1], false),
        &[smooth(&[2, 3], 0.0), smooth(&[2, 3], 1.0)],
    );
    check_gradient(
        &mut Dot::new([1, 1], true),
        &[smooth(&[2, 3], 0.0), smooth(&[2, 3], 1.0)],
    );
    check_gradient(
        &mut Dot::new([2, 1], false),
        &[smooth(&[2, 2, 3], 0.0), smooth(&[2, 3, 4], 1.0)],
    );
    check_gradient(
        &mut Dot::new([1, 2], true),
        &[smooth(&[2, 3, 2], 0.0), smooth(&[2, 2, 3], 1.0)],
    );
}

#[test]
fn mismatched_shapes_are_refused_not_panicking() {
    let a = smooth(&[2, 3], 0.0);
    let b = smooth(&[2, 4], 0.0);
    let err = ElementwiseMerge::new(MergeOp::Add)
        .predict(&[&a, &b])
        .unwrap_err();
    assert!(err.to_string().contains("same shape"), "{err}");
    let err = ElementwiseMerge::new(MergeOp::Add)
        .predict(&[&a])
        .unwrap_err();
    assert!(err.to_string().contains("at least 2 inputs"), "{err}");
    let c = smooth(&[3, 3], 0.0);
    assert!(ElementwiseMerge::new(MergeOp::Add)
        .predict(&[&a, &c])
        .is_err());
    let mut m = ElementwiseMerge::new(MergeOp::Multiply);
    assert!(m.backward(&a).is_err());
}
