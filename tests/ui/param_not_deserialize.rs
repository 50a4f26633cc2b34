use agent_toolkit::prelude::*;

struct Point {
    x: f64,
}

/// Moves to a point.
#[tool]
fn move_to(point: Point) -> String {
    point.x.to_string()
}

fn main() {}
