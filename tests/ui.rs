//! Compile-time behaviour of `category!`: every accepted form compiles and gives the right
//! value, every mistake fails with the message in `tests/ui/*.stderr`.
//! Refresh the expected output with `TRYBUILD=overwrite cargo test --test ui`, then review it.

#[test]
fn category_macro_ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass_*.rs");
    cases.compile_fail("tests/ui/fail_*.rs");
}
