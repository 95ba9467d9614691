"""Numerical kernels: ``matmul``, ``reduction``, ``distance``, ``losses``, ``optimize``."""

from rustyml.math import distance, losses, matmul, optimize, reduction

__all__ = ["distance", "losses", "matmul", "optimize", "reduction"]
