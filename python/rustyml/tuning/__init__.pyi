from . import elementwise as elementwise
from . import matmul as matmul
from . import metrics as metrics
from . import norm as norm
from . import reduction as reduction
from . import tree as tree

SERIAL: int
PARALLEL: int

def gates() -> list[tuple[str, str, int, int, str]]: ...
def gate_sources() -> list[tuple[str, str, str, str]]: ...
