from . import exceptions as exceptions
from . import machine_learning as machine_learning
from . import math as math
from . import parallel as parallel
from . import tuning as tuning
from .exceptions import NotFittedError as NotFittedError

__version__: str
