use agent_toolkit::prelude::*;

/// Unsafe.
#[tool]
unsafe fn danger(n: u32) -> u32 {
    n
}

/// Bounded.
#[tool]
fn bounded(n: u32) -> u32
where
    u32: Copy,
{
    n
}

fn main() {
    let _ = Toolkit::builder().register(Danger).register(Bounded);
}
