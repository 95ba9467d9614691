"""Classical machine learning estimators with scikit-learn conventions."""

from rustyml.machine_learning._dbscan import DBSCAN
from rustyml.machine_learning._kmeans import KMeans
from rustyml.machine_learning._linear_regression import LinearRegression
from rustyml.machine_learning._meanshift import MeanShift, estimate_bandwidth

__all__ = ["DBSCAN", "KMeans", "LinearRegression", "MeanShift", "estimate_bandwidth"]
