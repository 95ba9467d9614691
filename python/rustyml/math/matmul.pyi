from typing import Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import TypeAlias

Parallelism: TypeAlias = Literal["auto", "serial"] | int
FloatArray: TypeAlias = npt.NDArray[np.float32] | npt.NDArray[np.float64]

def dot(a: FloatArray, b: FloatArray, parallelism: Parallelism = "auto") -> FloatArray: ...
def matvec(a: FloatArray, x: FloatArray, parallelism: Parallelism = "auto") -> FloatArray: ...
