"""Classical machine learning estimators with scikit-learn conventions."""

from rustyml.machine_learning._dbscan import DBSCAN
from rustyml.machine_learning._kernel_pca import KernelPCA
from rustyml.machine_learning._kmeans import KMeans
from rustyml.machine_learning._linear_regression import LinearRegression
from rustyml.machine_learning._meanshift import MeanShift, estimate_bandwidth
from rustyml.machine_learning._pca import PCA
from rustyml.machine_learning._tsne import TSNE

__all__ = [
    "DBSCAN",
    "PCA",
    "TSNE",
    "KMeans",
    "KernelPCA",
    "LinearRegression",
    "MeanShift",
    "estimate_bandwidth",
]
