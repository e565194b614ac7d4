//! taxonomy-macros (being written)
