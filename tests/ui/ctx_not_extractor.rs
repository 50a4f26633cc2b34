use agent_toolkit::prelude::*;

struct Database;

/// Queries the database.
#[tool]
async fn query(sql: String, #[ctx] db: Database) -> String {
    let _ = db;
    sql
}

fn main() {}
