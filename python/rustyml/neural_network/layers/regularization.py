"""Layers active in training only: dropout (whole inputs or whole channels) and Gaussian noise."""

from rustyml.neural_network.layers.base import Layer, _check_seed, _register


def _take_dropout_arguments(layer, class_name, rate, seed):
    """A dropout layer's ``rate`` (in [0, 1)) and ``seed``, checked and set on ``layer``."""
    rate = float(rate)
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"{class_name}: rate must be in [0, 1), got {rate}")
    layer.rate = rate
    layer.seed = _check_seed(seed, type(layer).__name__)


@_register
class Dropout(Layer):
    """Zeroes a ``rate`` fraction of inputs in training, scaling the rest by ``1/(1-rate)``."""

    _CONFIG = ("rate", "seed")

    def __init__(self, rate, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        _take_dropout_arguments(self, "Dropout", rate, seed)


def _spatial_dropout(class_name, rank):
    def __init__(self, rate, seed=None, name=None, input_shape=None):
        Layer.__init__(self, name, input_shape)
        _take_dropout_arguments(self, class_name, rate, seed)

    doc = f"Drops whole channels of {rank}-D feature maps in training (Keras's {class_name})."
    cls = type(
        class_name, (Layer,), {"__doc__": doc, "__init__": __init__, "_CONFIG": ("rate", "seed")}
    )
    cls.__module__ = __name__
    return _register(cls)


SpatialDropout1D = _spatial_dropout("SpatialDropout1D", 1)


SpatialDropout2D = _spatial_dropout("SpatialDropout2D", 2)


SpatialDropout3D = _spatial_dropout("SpatialDropout3D", 3)


@_register
class GaussianNoise(Layer):
    """Adds ``N(0, stddev)`` noise in training."""

    _CONFIG = ("stddev", "seed")

    def __init__(self, stddev, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.stddev = float(stddev)
        self.seed = _check_seed(seed, type(self).__name__)


@_register
class GaussianDropout(Layer):
    """Multiplies by ``N(1, rate / (1 - rate))`` noise in training."""

    _CONFIG = ("rate", "seed")

    def __init__(self, rate, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.rate = float(rate)
        self.seed = _check_seed(seed, type(self).__name__)
