//! The `SpatialDropout1D` layer: dropout of whole channels of a [batch, steps, channels] input.

spatial_dropout_layer!(SpatialDropout1D, 3, "[batch, steps, channels]");
