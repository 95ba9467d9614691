"""Deterministic blocked reductions over float arrays (identical bits serial or parallel).

``sum(x)``, ``sq_sum(x)`` and ``mean_var(x)`` (mean and population variance) read float64
arrays in place (float32 is converted once); arrays of any shape reduce over all elements in
C order.
"""

from rustyml import _native

sum = _native.math.reduction.sum
sq_sum = _native.math.reduction.sq_sum
mean_var = _native.math.reduction.mean_var

__all__ = ["mean_var", "sq_sum", "sum"]
