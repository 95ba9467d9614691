"""Keras-style layers: declarative objects holding a config.

A layer here computes nothing: it is a name plus Keras's constructor arguments. ``Sequential``
hands the list of configs (``get_config()`` plus the class name) to one native model class,
which builds the Rust layers; a saved file stores the same configs. Adding a layer is one class
in its family's module (its Keras arguments) plus one entry in the native builder.

One module per family, as Keras lays out its layers: ``base`` (``Layer``, the class registry,
``serialize`` / ``deserialize``, the shared argument checks), ``core``, ``activations``,
``regularization``, ``normalization``, ``reshaping``, ``pooling``, ``convolution``,
``recurrent``, ``preprocessing`` and ``wrappers``. Every layer is re-exported here, so
``rustyml.neural_network.layers.Dense`` (the path in pickles written before the split) stays.
"""

from rustyml.neural_network.layers.activations import (
    ELU,
    Activation,
    LeakyReLU,
    PReLU,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)

# the underscored and lower-case names: helpers the models and the Keras file format reach
# through this package
from rustyml.neural_network.layers.base import (  # noqa: F401
    _REGISTRY,
    Layer,
    _register,
    _shape_tuple,
    _takes_initializers,
    deserialize,
    remember_model,
    serialize,
)
from rustyml.neural_network.layers.convolution import (
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    DepthwiseConv1D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
)
from rustyml.neural_network.layers.core import Dense, Embedding, Identity, Masking
from rustyml.neural_network.layers.normalization import (
    BatchNormalization,
    GroupNormalization,
    InstanceNormalization,
    LayerNormalization,
    UnitNormalization,
)
from rustyml.neural_network.layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
)
from rustyml.neural_network.layers.preprocessing import (  # noqa: F401 - helpers, as above
    Normalization,
    Rescaling,
    adapted_layer_weights,
    apply_adapted_statistics,
)
from rustyml.neural_network.layers.recurrent import GRU, LSTM, SimpleRNN
from rustyml.neural_network.layers.regularization import (
    Dropout,
    GaussianDropout,
    GaussianNoise,
    SpatialDropout1D,
    SpatialDropout2D,
    SpatialDropout3D,
)
from rustyml.neural_network.layers.reshaping import (
    Cropping1D,
    Cropping2D,
    Cropping3D,
    Flatten,
    Permute,
    RepeatVector,
    Reshape,
    UpSampling1D,
    UpSampling2D,
    UpSampling3D,
    ZeroPadding1D,
    ZeroPadding2D,
    ZeroPadding3D,
)
from rustyml.neural_network.layers.wrappers import Bidirectional, TimeDistributed

__all__ = [  # noqa: RUF022 - grouped by module
    # base
    "Layer",
    "deserialize",
    "serialize",
    # core
    "Dense",
    "Embedding",
    "Identity",
    "Masking",
    # activations
    "Activation",
    "ELU",
    "LeakyReLU",
    "PReLU",
    "ReLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    # regularization
    "Dropout",
    "GaussianDropout",
    "GaussianNoise",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    # normalization
    "BatchNormalization",
    "GroupNormalization",
    "InstanceNormalization",
    "LayerNormalization",
    "UnitNormalization",
    # reshaping
    "Cropping1D",
    "Cropping2D",
    "Cropping3D",
    "Flatten",
    "Permute",
    "RepeatVector",
    "Reshape",
    "UpSampling1D",
    "UpSampling2D",
    "UpSampling3D",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "ZeroPadding3D",
    # pooling
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalAveragePooling3D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalMaxPooling3D",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    # convolution
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "SeparableConv1D",
    "SeparableConv2D",
    # recurrent
    "GRU",
    "LSTM",
    "SimpleRNN",
    # preprocessing
    "Normalization",
    "Rescaling",
    # wrappers
    "Bidirectional",
    "TimeDistributed",
]
