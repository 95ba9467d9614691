from . import matmul as matmul
from . import reduction as reduction

SERIAL: int
PARALLEL: int

def gates() -> list[tuple[str, str, int, int, str]]: ...
