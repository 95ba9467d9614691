"""Classical machine learning estimators with scikit-learn conventions."""

from rustyml.machine_learning._linear_regression import LinearRegression

__all__ = ["LinearRegression"]
