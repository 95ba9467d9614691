//! Unit tests of the border layers: placement against direct index arithmetic, the
//! pad/crop transpose identity, finite differences and the error paths.

use super::*;
use crate::error::Error;
use crate::neural_network::layers::gradient_check::weighted_sum;
use crate::neural_network::traits::Layer;
use crate::neural_network::{NnError, Tensor};
use ndarray::IxDyn;

fn varied(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_shape_vec(
        IxDyn(shape),
        (0..n).map(|k| (k % 11) as f32 - 5.5).collect(),
    )
    .unwrap()
}

#[test]
fn padding_places_every_value_by_index_arithmetic() {
    let x = varied(&[2, 2, 3, 2, 3]);
    let mut pad = ZeroPadding3D::new(((1, 0), (0, 2), (3, 1)));
    let out = pad.forward(&x).unwrap();
    assert_eq!(out.shape(), &[2, 3, 5, 6, 3]);
    for (idx, &v) in out.indexed_iter() {
        let (d, h, w) = (idx[1] as isize - 1, idx[2] as isize, idx[3] as isize - 3);
        let inside = (0..2).contains(&d) && (0..3).contains(&h) && (0..2).contains(&w);
        let want = if inside {
            x[[idx[0], d as usize, h as usize, w as usize, idx[4]]]
        } else {
            0.0
        };
        assert_eq!(v, want, "{idx:?}");
    }
    assert_eq!(pad.output_shape(), "(None, 3, 5, 6, 3)");
}

#[test]
fn cropping_keeps_the_window_by_index_arithmetic() {
    let x = varied(&[2, 6, 3]);
    let mut crop = Cropping1D::new((2, 1));
    let out = crop.forward(&x).unwrap();
    assert_eq!(out.shape(), &[2, 3, 3]);
    for (idx, &v) in out.indexed_iter() {
        assert_eq!(v, x[[idx[0], idx[1] + 2, idx[2]]]);
    }
    let mut crop2 = Cropping2D::new(((1, 0), (0, 2)));
    let x = varied(&[1, 3, 4, 2]);
    let out = crop2.forward(&x).unwrap();
    assert_eq!(out.shape(), &[1, 2, 2, 2]);
    for (idx, &v) in out.indexed_iter() {
        assert_eq!(v, x[[0, idx[1] + 1, idx[2], idx[3]]]);
    }
}

#[test]
fn backward_is_the_transpose_and_matches_finite_differences() {
    let layers: Vec<(Box<dyn Layer>, Vec<usize>)> = vec![
        (Box::new(ZeroPadding1D::new((2, 1))), vec![2, 4, 3]),
        (
            Box::new(ZeroPadding2D::new(((1, 2), (0, 1)))),
            vec![2, 3, 4, 2],
        ),
        (Box::new(ZeroPadding3D::new(1)), vec![1, 2, 2, 2, 1]),
        (Box::new(Cropping1D::new((1, 2))), vec![2, 6, 3]),
        (Box::new(Cropping2D::new((1, 1))), vec![2, 4, 5, 2]),
        (
            Box::new(Cropping3D::new(((1, 0), (0, 1), (1, 1)))),
            vec![1, 3, 3, 4, 2],
        ),
    ];
    for (mut layer, shape) in layers {
        let x = varied(&shape);
        let out = layer.forward(&x).unwrap();
        let g = varied(out.shape()).mapv(|v| v * 0.5 + 0.25);
        let grad = layer.backward(&g).unwrap();
        assert_eq!(grad.shape(), x.shape());
        // Exact copies: every product appears once on each side, sums of the same terms.
        let loss = |t: &Tensor| weighted_sum(&layer.predict(t).unwrap(), &g);
        for k in 0..x.len() {
            let mut xp = x.clone();
            let mut xm = x.clone();
            xp.as_slice_mut().unwrap()[k] += 1.0;
            xm.as_slice_mut().unwrap()[k] -= 1.0;
            let numeric = (loss(&xp) - loss(&xm)) / 2.0;
            assert_eq!(
                numeric as f32,
                grad.as_slice().unwrap()[k],
                "{}",
                layer.layer_type()
            );
        }
    }
}

#[test]
fn errors_name_the_layer_and_shapes() {
    let mut pad = ZeroPadding2D::new(1);
    match pad.forward(&varied(&[2, 3, 4])) {
        Err(Error::InvalidInput(m)) => {
            assert!(
                m.contains("ZeroPadding2D") && m.contains("[2, 3, 4]"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    let mut crop = Cropping3D::new(((0, 0), (2, 2), (0, 0)));
    match crop.forward(&varied(&[1, 2, 4, 2, 1])) {
        Err(Error::InvalidInput(m)) => {
            assert!(m.contains("Cropping3D") && m.contains("(2, 2)"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    let mut wide = ZeroPadding1D::new((usize::MAX, 1));
    assert!(matches!(
        wide.forward(&varied(&[1, 2, 1])),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        Cropping1D::new(0).forward(&Tensor::zeros(IxDyn(&[1, 0, 2]))),
        Err(Error::EmptyInput(_))
    ));
    let mut pad = ZeroPadding1D::new(1);
    assert!(matches!(
        pad.backward(&varied(&[1, 4, 1])),
        Err(Error::NeuralNetwork(NnError::ForwardPassNotRun(_)))
    ));
    pad.forward(&varied(&[1, 2, 1])).unwrap();
    assert!(matches!(
        pad.backward(&varied(&[1, 3, 1])),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn constructor_forms_expand_per_axis() {
    assert_eq!(Border1D::from(2).amounts(), &[(2, 2)]);
    assert_eq!(Border1D::from((1, 3)).amounts(), &[(1, 3)]);
    assert_eq!(Border2D::from((1, 2)).amounts(), &[(1, 1), (2, 2)]);
    assert_eq!(
        Border2D::from(((1, 0), (0, 2))).amounts(),
        &[(1, 0), (0, 2)]
    );
    assert_eq!(
        Border3D::from((1, 2, 0)).amounts(),
        &[(1, 1), (2, 2), (0, 0)]
    );
    assert_eq!(Border3D::from(3).amounts(), &[(3, 3); 3]);
}
