use agent_toolkit::prelude::*;

struct PdfReport;

/// Builds a report.
#[tool]
fn report() -> PdfReport {
    PdfReport
}

fn main() {}
