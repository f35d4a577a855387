//! Compile-fail cases, one per rule of docs/rules.md, with their expected compiler output
//! (`<family>/*.stderr` beside this file, written against Rust 1.95.0). `TRYBUILD=overwrite`
//! regenerates them. The descriptors that must compile are built and run by the facade's
//! suite (`tests/suite/accepted.rs`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("gather/*.rs");
    t.compile_fail("slice/*.rs");
    t.compile_fail("chain/*.rs");
    t.compile_fail("dynamic/*.rs");
    t.compile_fail("elements/*.rs");
    t.compile_fail("nd/*.rs");
    t.compile_fail("scatter/*.rs");
}
