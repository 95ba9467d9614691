//! dropout layers, one per file.
