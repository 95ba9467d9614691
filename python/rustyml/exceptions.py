"""Exceptions raised by rustyml."""

from __future__ import annotations

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
                made = _also(NotFittedError, sklearn_exceptions.NotFittedError)
        return super().__new__(made, *args, **kwargs)


_FLAVOURS = {}


def _also(ours, theirs):
    """Our class ``ours`` that is also scikit-learn's ``theirs`` (one class per pair)."""
    flavour = _FLAVOURS.get((ours, theirs))
    if flavour is None:
        flavour = type(
            ours.__name__, (ours, theirs), {"__module__": __name__, "__doc__": ours.__doc__}
        )
        _FLAVOURS[(ours, theirs)] = flavour
    return flavour


class InvalidParameterError(ValueError, TypeError):
    """A hyper-parameter of the wrong type or out of its range (scikit-learn's
    ``InvalidParameterError`` has the same two bases, so either ``except`` catches it)."""


class DataConversionWarning(UserWarning):
    """Input data was converted (e.g. a column-vector ``y`` raveled), as scikit-learn warns.

    Raised through :func:`data_conversion_warning`, so that with scikit-learn imported the
    warning is also scikit-learn's ``DataConversionWarning`` and its filters see it."""


def data_conversion_warning() -> type[DataConversionWarning]:
    """The warning class to raise: ours, or ours that is also scikit-learn's when scikit-learn
    is already imported (as for ``NotFittedError``)."""
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return DataConversionWarning
    return _also(DataConversionWarning, sklearn_exceptions.DataConversionWarning)
