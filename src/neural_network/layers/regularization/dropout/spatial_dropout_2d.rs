//! The `SpatialDropout2D` layer: dropout of whole channels of a [batch, height, width, channels] input.

spatial_dropout_layer!(SpatialDropout2D, 4, "[batch, height, width, channels]");
