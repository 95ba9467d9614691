"""What the metric-door tests share: how many calls took a path, and one call's warnings."""

import warnings

import rustyml.sklearn as door


def calls(name, path="rustyml"):
    """How many calls of the metric ``name`` took ``path`` since the last reset."""
    return door.dispatch_stats().get(("metrics", name, path), 0)


def run(fn, *args, **kwargs):
    """``(result, [(category, message)])`` of one call, every warning recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [(w.category, str(w.message)) for w in caught]
