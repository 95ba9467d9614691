from typing import Literal, Union

import numpy as np
import numpy.typing as npt

Parallelism = Union[Literal["auto", "serial"], int]
FloatArray = Union[npt.NDArray[np.float32], npt.NDArray[np.float64]]

def dot(a: FloatArray, b: FloatArray, parallelism: Parallelism = "auto") -> FloatArray: ...
def matvec(a: FloatArray, x: FloatArray, parallelism: Parallelism = "auto") -> FloatArray: ...
