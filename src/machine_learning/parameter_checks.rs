//! Tests of the rule every estimator follows: one check of its hyper-parameters, so the same
//! bad value is the same `InvalidParameter`, naming the same parameter, whether it came
//! through the original constructor or setter or through the scikit-learn-style engine's
//! `fit`.

use super::*;
use crate::error::Error;
use crate::math::distance::Metric;
use ndarray::{array, Array2};

/// The name an `InvalidParameter` carries; anything else fails the test.
fn named(result: crate::error::Result<impl Sized>) -> String {
    match result {
        Err(Error::InvalidParameter { name, .. }) => name,
        Err(other) => panic!("expected InvalidParameter, got {other:?}"),
        Ok(_) => panic!("expected InvalidParameter, got Ok"),
    }
}

fn data() -> Array2<f64> {
    array![
        [0.0, 1.0],
        [1.0, 0.0],
        [2.0, 2.0],
        [3.0, 1.0],
        [4.0, 3.0],
        [5.0, 5.0]
    ]
}

#[test]
fn clustering_doors_agree() {
    let x = data();
    assert_eq!(named(KMeans::new(0, 10, 1e-4)), "n_clusters");
    assert_eq!(named(KMeans::builder(0).fit_checked(&x)), "n_clusters");
    assert_eq!(
        named(KMeans::new(2, 10, 1e-4).unwrap().with_n_init(0)),
        "n_init"
    );

    assert_eq!(named(DBSCAN::new(-1.0, 2)), "eps");
    assert_eq!(named(DBSCAN::builder(-1.0, 2).fit_checked(&x)), "eps");
    let minkowski = DistanceCalculationMetric::Minkowski(0.5);
    assert_eq!(
        named(DBSCAN::new(1.0, 2).unwrap().with_metric(minkowski)),
        "p"
    );
    let engine = DBSCAN::builder(1.0, 2).with_engine_metric(Metric::Minkowski(0.5));
    assert_eq!(named(engine.clone().fit_checked(&x)), "p");

    assert_eq!(named(MeanShift::new(f64::NAN)), "bandwidth");
    assert_eq!(
        named(MeanShift::builder(Some(-2.0)).fit_checked(&x)),
        "bandwidth"
    );
}

#[test]
fn neighbours_and_decomposition_doors_agree() {
    let x = data();
    let y = array![0.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    assert_eq!(named(KNN::<i32>::new(0)), "n_neighbors");
    assert_eq!(named(knn::KnnClassifier::new(0).fit(&x, &y)), "n_neighbors");
    let minkowski = DistanceCalculationMetric::Minkowski(0.0);
    assert_eq!(
        named(KNN::<i32>::new(3).unwrap().with_metric(minkowski)),
        "p"
    );

    assert_eq!(named(PCA::new(0)), "n_components");
    assert_eq!(
        named(PCA::builder(NComponents::Count(0)).fit_checked(&x)),
        "n_components"
    );
    // more components than the data can give: the data's limit, one variant for both doors
    assert_eq!(named(PCA::new(3).unwrap().fit(&x)), "n_components");
    assert_eq!(
        named(PCA::builder(NComponents::Count(3)).fit_checked(&x)),
        "n_components"
    );

    assert_eq!(named(TSNE::new(2, -1.0, 200.0, 500)), "perplexity");
    assert_eq!(
        named(TSNE::builder(2).with_perplexity(-1.0).fit(&x)),
        "perplexity"
    );
}

#[test]
fn linear_and_kernel_doors_agree() {
    let x = data();
    let y = array![0.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    assert_eq!(
        named(LogisticRegression::new(true, 0.0, 100, 1e-4)),
        "learning_rate"
    );
    assert_eq!(
        named(LogisticRegression::new(true, 0.1, 0, 1e-4)),
        "max_iter"
    );
    assert_eq!(
        named(
            LogisticRegression::with_defaults()
                .with_tol(-1.0)
                .fit(&x, &y)
        ),
        "tol"
    );

    assert_eq!(named(SVC::new(KernelType::Linear, -1.0, 1e-3, 100)), "C");
    assert_eq!(named(SVC::with_defaults().with_c(-1.0).fit(&x, &y)), "C");

    assert_eq!(
        named(LinearSVC::new(
            100,
            0.0,
            RegularizationType::L2(0.1),
            true,
            1e-3
        )),
        "learning_rate"
    );
    assert_eq!(
        named(LinearSVC::with_defaults().with_tol(-1.0).fit(&x, &y)),
        "tol"
    );

    assert_eq!(
        named(
            IsolationForest::new(10, 4)
                .unwrap()
                .with_contamination(Contamination::Fraction(0.9))
        ),
        "contamination"
    );
    let mut engine = IsolationForest::builder(10);
    engine.contamination = Contamination::Fraction(0.9);
    assert_eq!(named(engine.clone().fit_checked(&x)), "contamination");

    let lda = LDA::new(1).unwrap();
    assert_eq!(
        named(lda.with_shrinkage(lda::Shrinkage::Manual(2.0))),
        "shrinkage"
    );
    assert_eq!(
        named(
            LDA::with_defaults()
                .with_tol(-1.0)
                .fit_labels(x.view(), y.view())
        ),
        "tol"
    );

    let tree = DecisionTree::new(Algorithm::CART, true).unwrap();
    assert_eq!(named(tree.with_min_samples_split(1)), "min_samples_split");
    let door = DecisionTree::with_defaults(Algorithm::CART, true).set_min_samples_split(1);
    assert_eq!(named(door.clone().fit(&x, &y)), "min_samples_split");
}
