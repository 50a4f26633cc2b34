//! The scoring of the BFCL bench (`tests/benches/bfcl.rs`, figures in BENCHMARKS.md) checked on
//! every category: `tests/bfcl/bfcl.py selftest` builds calls from BFCL's ground truth and
//! scores them with BFCL's own AST checker (from the same `bfcl-eval` wheel as the corpus):
//! they must score right, and no call, a call of another name or a changed argument must score
//! wrong (no call is right only for irrelevance). A bench whose scoring cannot fail would
//! report nothing.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_bfcl_scoring_tells_right_calls_from_wrong_ones() {
    let wheel = super::corpus::path().with_file_name("bfcl_eval-2026.3.23-py3-none-any.whl");
    if !wheel.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the BFCL wheel is missing at {}; run tests/search/setup.sh",
            wheel.display()
        );
        eprintln!(
            "SKIPPED: the BFCL wheel is not at {}; run `bash tests/search/setup.sh`",
            wheel.display()
        );
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bfcl/bfcl.py");
    let output = Command::new("python3")
        .arg(script)
        .arg("selftest")
        .arg(&wheel)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("verdicts as expected over 100 questions"),
        "{stdout}"
    );
}
