"""Matrix products on the gemmkit engine.

``dot(a, b, parallelism="auto")`` and ``matvec(a, x, parallelism="auto")`` take float32 or
float64 NumPy arrays (read in place, any strides; mixed dtypes promote to float64) and return
a new array. ``parallelism`` is ``"auto"``, ``"serial"`` or a worker count; results are
bitwise identical at any worker count on one machine.
"""

from rustyml import _native

dot = _native.math.matmul.dot
matvec = _native.math.matmul.matvec

__all__ = ["dot", "matvec"]
