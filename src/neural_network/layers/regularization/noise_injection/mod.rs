//! noise injection layers, one per file.
