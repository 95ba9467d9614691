//! Pooling layers (max, average, global) over one pooling engine.
