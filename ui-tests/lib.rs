//! Nothing to use: this crate holds stridex's compile-fail cases (`<family>/<case>.rs`, each
//! beside the `.stderr` the compiler must print) and the trybuild test that checks them
//! (`compile_fail.rs`). See `tests/README.md`.
