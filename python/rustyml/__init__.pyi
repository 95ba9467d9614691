from . import exceptions as exceptions
from . import machine_learning as machine_learning
from . import math as math
from . import metrics as metrics
from . import parallel as parallel
from . import tuning as tuning
from . import utils as utils
from .exceptions import NotFittedError as NotFittedError

__version__: str

def patch_sklearn(names: str | list[str] | None = None, *, verbose: bool = False) -> None: ...
def unpatch_sklearn(names: str | list[str] | None = None) -> None: ...
