"""Boundary conversion for estimator inputs: container, dtype, dimensionality and emptiness,
worded as scikit-learn's ``check_array`` words them so code (and tests) written for
scikit-learn recognise the errors. Values (NaN, infinity, ranges) are checked in Rust, which
names the problem."""

import warnings

import numpy as np

from rustyml.exceptions import data_conversion_warning


def _is_sparse(x):
    # Duck-typed so rustyml never imports SciPy itself: every SciPy sparse container lives in
    # scipy.sparse and has ``toarray``.
    return type(x).__module__.startswith("scipy.sparse") and hasattr(x, "toarray")


def _refuse_sparse(x, name):
    if _is_sparse(x):
        raise TypeError(
            f"Sparse data was passed for {name} ({type(x).__name__}), but rustyml does not support "
            f"sparse input: dense data is required. Use {name}.toarray() to convert it to a "
            "dense NumPy array."
        )


def _as_array(x, name):
    """``x`` as a NumPy array (no copy of an array); sparse input and ragged sequences refused,
    naming ``name``."""
    _refuse_sparse(x, name)
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be converted to an array: {exc}") from exc


def _as_numeric(x, name):
    """``x`` as a NumPy array of a real dtype: object arrays of numbers are converted (as
    scikit-learn does); complex data is a ``ValueError``; strings and other objects a
    ``TypeError``."""
    x = _as_array(x, name)
    kind = x.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {x.dtype}")
    if kind == "O":
        if any(isinstance(v, complex) for v in x.flat):
            raise ValueError(f"Complex data not supported: {name} holds complex numbers")
        try:
            x = x.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers; converting it failed: {exc}") from exc
    elif kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    return x


def _wrong_ndim(x, name, ndim):
    if ndim == 2 and x.ndim < 2:
        got = "scalar array" if x.ndim == 0 else "1D array"
        return ValueError(
            f"{name} must be 2-dimensional: expected 2D array, got {got} instead (shape "
            f"{x.shape}). Reshape your data either using array.reshape(-1, 1) if your data has "
            "a single feature or array.reshape(1, -1) if it contains a single sample."
        )
    return ValueError(
        f"{name} must be {ndim}-dimensional, got {x.ndim} dimension(s) with shape {x.shape}"
    )


def as_float_array(x, name, ndim, dtype=np.float64, *, min_samples=0):
    """Return ``x`` as a ``dtype`` NumPy array of ``ndim`` dimensions.

    Arrays already in a float dtype are returned as they are (no copy, any strides); integer,
    boolean and numeric object arrays are converted like scikit-learn does. Sparse input and
    strings raise ``TypeError``; complex data, a wrong dimensionality and (with
    ``min_samples``, as ``fit`` asks) fewer rows than ``min_samples`` or no column raise
    ``ValueError``.
    """
    x = _as_numeric(x, name)
    if x.ndim != ndim:
        raise _wrong_ndim(x, name, ndim)
    if min_samples and x.shape[0] < min_samples:
        raise ValueError(
            f"Found array with {x.shape[0]} sample(s) (shape={x.shape}) while a minimum of "
            f"{min_samples} is required: {name} is empty."
        )
    if min_samples and ndim == 2 and x.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={x.shape}) while a minimum of 1 is required: "
            f"{name} has no column."
        )
    if x.dtype.kind != "f":
        x = x.astype(dtype)
    return x


def fit_array(X, name="X"):
    """``X`` for a ``fit``: a 2-D float array with at least one row and one column."""
    return as_float_array(X, name, 2, min_samples=1)


def column_or_1d(y, estimator, name="y"):
    """``y`` as a 1-D array: ``None`` is refused in scikit-learn's words, a column vector
    (n, 1) is raveled with scikit-learn's ``DataConversionWarning``. The dtype is left alone
    (labels may be strings)."""
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None."
        )
    y = _as_array(y, name)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples, ), for example using ravel().",
            data_conversion_warning(),
            stacklevel=3,
        )
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(
            f"{name} must be 1-dimensional, got {y.ndim} dimension(s) with shape {y.shape}"
        )
    return y


def target_array(y, estimator):
    """A regressor's ``y``: 1-D float64 (see :func:`column_or_1d`)."""
    return as_float_array(column_or_1d(y, estimator), "y", 1)


# -- feature names (scikit-learn's ``feature_names_in_`` convention) -------------------------


def feature_names(X):
    """The column names of a DataFrame-like ``X`` as an object array, or ``None`` when ``X``
    has no columns or none of its column names is a string (such names are positions, not
    names). Mixed string and non-string names are a ``TypeError``, as in scikit-learn."""
    if isinstance(X, np.ndarray):
        return None
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "shape"):
        return None
    names = np.asarray(list(columns), dtype=object)
    if names.ndim != 1 or len(names) == 0:
        return None
    strings = sum(isinstance(n, str) for n in names)
    if strings == len(names):
        return names
    if strings == 0:
        return None
    kinds = sorted({type(n).__name__ for n in names})
    raise TypeError(
        "Feature names are only supported if all input features have string names, but your "
        f"input has {kinds} as feature name / column name types. If you want feature names to "
        "be stored and validated, you must convert them all to strings, by using "
        "X.columns = X.columns.astype(str) for example. Otherwise you can remove feature / "
        "column names from your input data, or convert them all to a non-string data type."
    )


def _listed(names, limit=5):
    shown = [f"- {n}" for n in names[:limit]]
    if len(names) > limit:
        shown.append("- ...")
    return "".join(line + "\n" for line in shown)


def check_feature_names(estimator, names, *, stacklevel=3):
    """Compare the column names of a later ``X`` (``names``, from :func:`feature_names`) with
    those seen by ``fit``: different or reordered names are a ``ValueError`` (the columns would
    be read as other features); names on one side only are a ``UserWarning``."""
    fitted = estimator.__dict__.get("feature_names_in_")
    if fitted is None and names is None:
        return
    cls = type(estimator).__name__
    if fitted is None:
        if "n_features_in_" in estimator.__dict__:
            warnings.warn(
                f"X has feature names, but {cls} was fitted without feature names",
                UserWarning,
                stacklevel=stacklevel,
            )
        return
    if names is None:
        warnings.warn(
            f"X does not have valid feature names, but {cls} was fitted with feature names",
            UserWarning,
            stacklevel=stacklevel,
        )
        return
    if len(fitted) == len(names) and all(a == b for a, b in zip(fitted, names)):
        return
    seen = set(fitted)
    given = set(names)
    unseen = [n for n in names if n not in seen]
    missing = [n for n in fitted if n not in given]
    message = "The feature names should match those that were passed during fit.\n"
    if unseen:
        message += "Feature names unseen at fit time:\n" + _listed(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _listed(missing)
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)


def frame_values(X):
    """A DataFrame with pandas' nullable (extension) dtypes as a float64 array with NaN for
    missing values, so the missing-value check names NaN; other inputs unchanged."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or isinstance(X, np.ndarray) or not hasattr(X, "to_numpy"):
        return X
    try:
        if all(isinstance(d, np.dtype) for d in dtypes):
            return X
        return X.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        return X


def non_finite_error(value, name, estimator, native=None):
    """A ``ValueError`` in scikit-learn's words when ``value`` holds NaN or infinity, else
    ``None``; ``native`` (the native call's error, which says where) is quoted. Only called
    after a native call failed, so a successful call never pays the extra pass over the
    data."""
    try:
        arr = np.asarray(value)
        if arr.dtype.kind not in "fc":
            arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        return None
    cls = type(estimator).__name__
    where = "" if native is None else f" (native check: {native})"
    if np.isnan(arr).any():
        return ValueError(
            f"Input {name} contains NaN. {cls} does not accept missing values encoded as NaN: "
            "impute them (for example with sklearn.impute.SimpleImputer) or drop the samples "
            f"that hold them{where}."
        )
    if np.isinf(arr).any():
        return ValueError(
            f"Input {name} contains infinity or a value too large for dtype('float64'){where}."
        )
    return None
