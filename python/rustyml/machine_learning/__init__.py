"""Classical machine learning estimators with scikit-learn conventions."""

from rustyml.machine_learning._dbscan import DBSCAN
from rustyml.machine_learning._decision_tree import DecisionTree
from rustyml.machine_learning._isolation_forest import IsolationForest
from rustyml.machine_learning._kmeans import KMeans
from rustyml.machine_learning._knn import KNN
from rustyml.machine_learning._linear_regression import LinearRegression
from rustyml.machine_learning._meanshift import MeanShift, estimate_bandwidth

__all__ = [
    "DBSCAN",
    "KNN",
    "DecisionTree",
    "IsolationForest",
    "KMeans",
    "LinearRegression",
    "MeanShift",
    "estimate_bandwidth",
]
