from . import conv as conv
from . import elementwise as elementwise
from . import liblinear as liblinear
from . import matmul as matmul
from . import metrics as metrics
from . import norm as norm
from . import pool as pool
from . import recurrent as recurrent
from . import reduction as reduction
from . import tree as tree
from . import upsampling as upsampling

SERIAL: int
PARALLEL: int

def gates() -> list[tuple[str, str, int, int, str]]: ...
def gate_sources() -> list[tuple[str, str, str, str]]: ...
def knob_sources() -> list[tuple[str, int, str, str]]: ...
def host_class() -> dict[str, object]: ...
def shipped_profiles() -> list[tuple[str, str]]: ...
def active_profile() -> dict[str, object]: ...
