//! Border layers: zero padding and cropping in 1D, 2D and 3D.
