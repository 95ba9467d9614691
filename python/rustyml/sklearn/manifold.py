"""``sklearn.manifold`` door for TSNE.

The door exists so that patching covers it and every call is counted and logged, but the
embedding is scikit-learn's: its random initialisation, Barnes-Hut tree (angle-bounded
summaries in another cell order) and float32 gradient steps are not reproduced by rustyml's
t-SNE, whose embedding is equally good by trustworthiness but not the same array.
``fit`` runs through ``fit_transform``, so each fit counts once.
"""

from sklearn import manifold as _sk

from rustyml.sklearn._dispatch import Unsupported, native_path

__all__ = ["TSNE"]

_SkTSNE = _sk.TSNE


class TSNE(_SkTSNE):
    __doc__ = _SkTSNE.__doc__

    @native_path(_SkTSNE.fit_transform, fits=True)
    def fit_transform(self, X, y=None):
        raise Unsupported("scikit-learn's random initialisation and Barnes-Hut steps")
