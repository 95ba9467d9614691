"""Exceptions raised by rustyml."""

import sys


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit`` (same bases as scikit-learn's).

    When scikit-learn is already imported, the error raised is also an instance of
    ``sklearn.exceptions.NotFittedError``, so code written for scikit-learn catches it; rustyml
    itself never imports scikit-learn (about a second at start-up) to get there.
    """

    def __new__(cls, *args, **kwargs):
        made = cls
        if cls is NotFittedError:
            sklearn_exceptions = sys.modules.get("sklearn.exceptions")
            if sklearn_exceptions is not None:
                made = _also_sklearn(sklearn_exceptions.NotFittedError)
        return super().__new__(made, *args, **kwargs)


_FLAVOURS = {}


def _also_sklearn(sklearn_error):
    """Our ``NotFittedError`` that is also scikit-learn's (one class per scikit-learn class)."""
    flavour = _FLAVOURS.get(sklearn_error)
    if flavour is None:
        flavour = type(
            "NotFittedError",
            (NotFittedError, sklearn_error),
            {"__module__": __name__, "__doc__": NotFittedError.__doc__},
        )
        _FLAVOURS[sklearn_error] = flavour
    return flavour


class DataConversionWarning(UserWarning):
    """Input data was converted (e.g. a column-vector ``y`` raveled), as scikit-learn warns."""
