"""The linear models' minimiser, L-BFGS, for a Python objective.

``lbfgs(fun, x0, max_iter=100, gtol=1e-4, ftol=1e7 * eps, memory=10)`` minimises
``fun(x) -> (f, grad)`` from ``x0`` and returns ``(x, f, n_iter, converged)``. It stops when
the largest gradient entry is at most ``gtol`` or one step lowers ``f`` by at most
``ftol * max(|f|, 1)``; an exception raised by ``fun`` ends the run and propagates.
"""

from rustyml import _native

lbfgs = _native.math.optimize.lbfgs

__all__ = ["lbfgs"]
