"""Shared data for the classifier tests: scikit-learn's bundled data sets, split and scaled
the same way for rustyml and its scikit-learn peer."""

from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

LOADERS = {
    "iris": load_iris,
    "wine": load_wine,
    "breast_cancer": load_breast_cancer,
    "digits": load_digits,
}


def load(name, scale=True):
    """The whole data set (standardised when ``scale``)."""
    X, y = LOADERS[name](return_X_y=True)
    if scale:
        X = StandardScaler().fit_transform(X)
    return X, y


def split(name, scale=True):
    """A stratified 70/30 split (scaler fitted on the training part when ``scale``)."""
    X, y = LOADERS[name](return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    if scale:
        scaler = StandardScaler().fit(Xtr)
        Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    return Xtr, Xte, ytr, yte
