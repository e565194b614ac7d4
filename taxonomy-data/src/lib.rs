//! taxonomy-data (being written)
