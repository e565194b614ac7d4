//! fake-marketplace (being written)
