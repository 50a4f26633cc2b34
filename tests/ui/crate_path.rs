use agent_toolkit::prelude::*;

/// A path that ends in `::`.
#[tool(crate = "agent_toolkit::")]
fn trailing() {}

/// Not a string.
#[tool(crate = agent_toolkit)]
fn bare() {}

/// Given twice.
#[tool(crate = "agent_toolkit", crate = "agent_toolkit")]
fn twice() {}

struct Store;

#[tools(crate = "agent_toolkit", read_only)]
impl Store {
    /// Reads.
    #[tool]
    fn read(&self) -> String {
        String::new()
    }
}

fn main() {
    // The fallback keeps every struct and registration impl.
    let _ = Toolkit::builder().register(Trailing).register(Bare).register(Twice).register(Store);
}
