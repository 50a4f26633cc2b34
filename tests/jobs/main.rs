//! Durable background jobs on SQLite and Postgres (`background::JobQueue`, `Worker`): real
//! databases (a throwaway Postgres cluster per test, SQLite in a temporary file) and, for the
//! crash tests, real worker processes killed with SIGKILL.

#[path = "../db/mod.rs"]
mod db;
#[path = "fixture.rs"]
mod fixture;
#[path = "../db/proxy.rs"]
mod proxy;

mod bad_input;
mod busy;
mod cancel;
mod crash;
mod engines;
mod lost_replies;
mod outages;
mod turns;

use agent_toolkit::background::JobQueue;

/// A database of one test: the SQLite file or the Postgres cluster are removed on drop.
pub enum Db {
    Sqlite(db::SqliteFile),
    Postgres(db::Postgres, String),
}

impl Db {
    pub fn sqlite(name: &str) -> Db {
        Db::Sqlite(db::SqliteFile::new(name))
    }

    /// `None` when Postgres is not installed and this is not CI (the message is printed).
    pub fn postgres() -> Option<Db> {
        let pg = db::Postgres::start()?;
        let url = pg.database("jobs");
        Some(Db::Postgres(pg, url))
    }

    /// What `jobs-child` takes as DB.
    pub fn arg(&self) -> String {
        match self {
            Db::Sqlite(file) => format!("sqlite:{}", file.path().display()),
            Db::Postgres(_, url) => url.clone(),
        }
    }

    pub async fn queue(&self, name: &str) -> JobQueue {
        let queue = match self {
            Db::Sqlite(file) => JobQueue::sqlite(file.path()).await,
            Db::Postgres(_, url) => JobQueue::postgres(url).await,
        };
        queue
            .expect("open the queue")
            .name(name)
            .heartbeat(std::time::Duration::from_secs(1))
    }
}
