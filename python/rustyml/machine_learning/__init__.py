"""Classical machine learning estimators with scikit-learn conventions."""

from rustyml.machine_learning._decision_tree import DecisionTree
from rustyml.machine_learning._isolation_forest import IsolationForest
from rustyml.machine_learning._knn import KNN
from rustyml.machine_learning._linear_regression import LinearRegression

__all__ = ["KNN", "DecisionTree", "IsolationForest", "LinearRegression"]
