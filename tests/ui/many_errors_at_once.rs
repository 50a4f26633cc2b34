use agent_toolkit::prelude::*;

#[tool(timeout = "soon", retries = "3")]
fn undocumented(#[arg(default = 1, colour = "red")] n: u32, (a, b): (u32, u32)) -> u32 {
    n + a + b
}

fn main() {
    // The fallback expansion keeps the function and the struct, so these uses add no errors.
    let _ = undocumented(1, (2, 3));
    let _ = Undocumented;
}
