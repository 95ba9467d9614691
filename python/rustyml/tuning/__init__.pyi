from . import elementwise as elementwise
from . import matmul as matmul
from . import metrics as metrics
from . import reduction as reduction

SERIAL: int
PARALLEL: int

def gates() -> list[tuple[str, str, int, int, str]]: ...
