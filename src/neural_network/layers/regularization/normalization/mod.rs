//! normalization layers, one per file.
