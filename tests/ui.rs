//! Compile errors are part of the product: each case in `tests/ui/` must fail to compile with
//! the message recorded in its `.stderr`, spanned at the offending token.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
