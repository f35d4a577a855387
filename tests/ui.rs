//! Compile-fail cases, one per rule of docs/rules.md, with their expected compiler output
//! (`ui-tests/**/*.stderr`, written against Rust 1.95.0). `TRYBUILD=overwrite` regenerates them.
//! The descriptors that must compile (`ui-tests/pass/`) are built and run by `tests/suite/accepted.rs`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui-tests/gather/*.rs");
    t.compile_fail("ui-tests/slice/*.rs");
    t.compile_fail("ui-tests/chain/*.rs");
    t.compile_fail("ui-tests/dynamic/*.rs");
    t.compile_fail("ui-tests/elements/*.rs");
    t.compile_fail("ui-tests/nd/*.rs");
    t.compile_fail("ui-tests/scatter/*.rs");
}
