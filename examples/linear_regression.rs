//! The chapter's example: fit y = 2x + 1 on x = 1..5 and predict.
use ndarray::{Array1, Array2};
use rustyml::machine_learning::LinearRegression;

fn main() {
    let x = Array2::from_shape_vec((5, 1), vec![1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let y = Array1::from_vec(vec![3.0, 5.0, 7.0, 9.0, 11.0]);
    let mut model = LinearRegression::new(true);
    model.fit(&x, &y).unwrap();
    let preds = model.predict(&x).unwrap();
    println!("prediction: {:.3}", preds[0]);
}
