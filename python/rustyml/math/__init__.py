"""Numerical kernels: ``matmul``, ``reduction``, ``distance``."""

from rustyml.math import distance, matmul, reduction

__all__ = ["distance", "matmul", "reduction"]
