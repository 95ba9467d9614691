"""scikit-learn's own estimator checks (``parametrize_with_checks``) over every rustyml estimator.

Each check is one test, so a regression names the estimator and the convention it broke
(input validation wording, cloning, pickling, ``n_features_in_``, sparse refusal, ...). Sparse
input is refused with a ``TypeError`` that says so, which the sparse checks accept.

The instances are the defaults except where scikit-learn's own test suite changes the same
parameter for its own estimator: TSNE's perplexity must stay below the checks' 10-30 samples
(scikit-learn checks its TSNE with ``perplexity=2`` too)."""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

import rustyml.machine_learning as ml
import rustyml.utils as ut
from rustyml.neural_network import MLPClassifier, MLPRegressor

ESTIMATORS = [
    ml.DBSCAN(),
    ml.DecisionTree(),
    ml.DecisionTree(is_classifier=False),
    ml.IsolationForest(),
    ml.KernelPCA(),
    ml.KMeans(),
    ml.KNN(),
    ml.LDA(),
    ml.LinearRegression(),
    ml.LinearRegression(solver="gradient_descent"),
    ml.LinearSVC(),
    ml.LogisticRegression(),
    ml.MeanShift(),
    ml.PCA(),
    ml.SVC(),
    ml.TSNE(perplexity=2),
    ut.StandardScaler(),
    ut.MinMaxScaler(),
    ut.MaxAbsScaler(),
    ut.RobustScaler(),
    ut.Normalizer(),
    ut.LabelEncoder(),
    MLPClassifier(),
    MLPRegressor(),
]


def expected_failures(estimator):
    """Checks an estimator is known to fail, each with the reason (shown by pytest as xfail)."""
    if isinstance(estimator, ml.LinearRegression) and estimator.solver == "gradient_descent":
        reason = (
            "plain gradient descent with a fixed learning rate (the original crate's algorithm) "
            "diverges on these checks' unscaled data (features around 100); it refuses with a "
            "ValueError naming the remedy instead of returning NaN"
        )
        return dict.fromkeys(
            ["check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in"], reason
        )
    return {}


with warnings.catch_warnings():
    # "does not inherit from sklearn.base.BaseEstimator": by design, rustyml never imports
    # scikit-learn; the conventions are checked one by one below instead.
    warnings.simplefilter("ignore", UserWarning)
    checks = parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures)


@checks
def test_scikit_learn_estimator_check(estimator, check):
    with warnings.catch_warnings():
        # convergence and conversion warnings are the checks' business, not failures here
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
