"""Classical machine learning estimators with scikit-learn conventions."""

from rustyml.machine_learning._dbscan import DBSCAN
from rustyml.machine_learning._kmeans import KMeans
from rustyml.machine_learning._lda import LDA, LinearDiscriminantAnalysis
from rustyml.machine_learning._linear_regression import LinearRegression
from rustyml.machine_learning._linear_svc import LinearSVC
from rustyml.machine_learning._logistic_regression import LogisticRegression
from rustyml.machine_learning._meanshift import MeanShift, estimate_bandwidth
from rustyml.machine_learning._svc import SVC

__all__ = [
    "DBSCAN",
    "LDA",
    "SVC",
    "KMeans",
    "LinearDiscriminantAnalysis",
    "LinearRegression",
    "LinearSVC",
    "LogisticRegression",
    "MeanShift",
    "estimate_bandwidth",
]
