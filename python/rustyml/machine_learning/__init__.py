"""Classical machine learning estimators with scikit-learn conventions."""

from rustyml.machine_learning._dbscan import DBSCAN
from rustyml.machine_learning._decision_tree import DecisionTree
from rustyml.machine_learning._isolation_forest import IsolationForest
from rustyml.machine_learning._kernel_pca import KernelPCA
from rustyml.machine_learning._kmeans import KMeans
from rustyml.machine_learning._knn import KNN
from rustyml.machine_learning._lda import LDA, LinearDiscriminantAnalysis
from rustyml.machine_learning._linear_regression import LinearRegression
from rustyml.machine_learning._linear_svc import LinearSVC
from rustyml.machine_learning._logistic_regression import LogisticRegression
from rustyml.machine_learning._meanshift import MeanShift, estimate_bandwidth
from rustyml.machine_learning._pca import PCA
from rustyml.machine_learning._svc import SVC
from rustyml.machine_learning._tsne import TSNE

__all__ = [
    "DBSCAN",
    "KNN",
    "LDA",
    "PCA",
    "SVC",
    "TSNE",
    "DecisionTree",
    "IsolationForest",
    "KMeans",
    "KernelPCA",
    "LinearDiscriminantAnalysis",
    "LinearRegression",
    "LinearSVC",
    "LogisticRegression",
    "MeanShift",
    "estimate_bandwidth",
]
