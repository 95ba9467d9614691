//! Upsampling layers over one resize engine.
