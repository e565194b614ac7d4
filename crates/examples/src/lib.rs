//! The toolkit's runnable examples; see `examples/`. The library is empty: cargo needs one
//! target besides the examples.
