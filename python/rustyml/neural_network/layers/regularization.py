"""Layers active in training only: dropout (whole inputs or whole channels) and Gaussian noise."""

from rustyml.neural_network.layers.base import Layer, _check_seed, _register


@_register
class Dropout(Layer):
    """Zeroes a ``rate`` fraction of inputs in training, scaling the rest by ``1/(1-rate)``."""

    def __init__(self, rate, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        rate = float(rate)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate = rate
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"rate": self.rate, "seed": self.seed}


def _spatial_dropout(class_name, rank):
    def __init__(self, rate, seed=None, name=None, input_shape=None):
        Layer.__init__(self, name, input_shape)
        rate = float(rate)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"{class_name}: rate must be in [0, 1), got {rate}")
        self.rate = rate
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"rate": self.rate, "seed": self.seed}

    doc = f"Drops whole channels of {rank}-D feature maps in training (Keras's {class_name})."
    cls = type(
        class_name, (Layer,), {"__doc__": doc, "__init__": __init__, "_own_config": _own_config}
    )
    cls.__module__ = __name__
    return _register(cls)


SpatialDropout1D = _spatial_dropout("SpatialDropout1D", 1)


SpatialDropout2D = _spatial_dropout("SpatialDropout2D", 2)


SpatialDropout3D = _spatial_dropout("SpatialDropout3D", 3)


@_register
class GaussianNoise(Layer):
    """Adds ``N(0, stddev)`` noise in training."""

    def __init__(self, stddev, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.stddev = float(stddev)
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"stddev": self.stddev, "seed": self.seed}


@_register
class GaussianDropout(Layer):
    """Multiplies by ``N(1, rate / (1 - rate))`` noise in training."""

    def __init__(self, rate, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.rate = float(rate)
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"rate": self.rate, "seed": self.seed}
