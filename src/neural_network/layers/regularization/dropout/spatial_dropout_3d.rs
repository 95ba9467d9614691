//! The `SpatialDropout3D` layer: dropout of whole channels of a [batch, depth, height, width, channels] input.

spatial_dropout_layer!(
    SpatialDropout3D,
    5,
    "[batch, depth, height, width, channels]"
);
