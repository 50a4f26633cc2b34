//! What a worker reads and writes for many jobs at once: their rows, and their results.

use std::collections::HashSet;
use std::sync::Arc;

use super::codec::encode_result;
#[cfg(feature = "sqlite")]
use super::id_list;
use super::{COLUMNS, Row, State, gather};
use crate::durable::gather::Gather;
use crate::durable::job_queue::JobQueue;
use crate::jobs::JobError;
use crate::storage::{DatabaseError, Pool, now_ms};
use crate::tool::ToolResult;

/// The error of a statement that [`Gather`] wrote for many callers.
fn gathered(queue: &JobQueue, error: sqlx::Error) -> DatabaseError {
    queue.db.error(error)
}

/// What a worker reads and writes for many jobs at once: their rows, and their results (one
/// statement for every job that asked meanwhile; see [`Gather`]).
pub(in crate::durable) struct WorkerLedger {
    rows: Arc<Gather<u64, Option<Row>>>,
    results: Arc<Gather<Finished, bool>>,
}

/// A result to store: the job, its apalis task (deleted with it), its row's new state and the
/// result as stored.
pub(in crate::durable) struct Finished {
    id: u64,
    task: Option<String>,
    state: State,
    stored: String,
}

impl Finished {
    pub(in crate::durable) fn new(id: u64, task: Option<&str>, result: &ToolResult) -> Finished {
        Finished {
            id,
            task: task.map(str::to_owned),
            state: State::ended_by(result),
            stored: encode_result(result),
        }
    }
}

impl WorkerLedger {
    pub(in crate::durable) fn new(queue: &JobQueue) -> WorkerLedger {
        let rows = gather(queue, load_all);
        let results = gather(queue, finish_all);
        WorkerLedger { rows, results }
    }

    /// The ledger row of job `id`, if there is one (read with the rows other jobs asked for
    /// meanwhile).
    pub(in crate::durable) async fn load(&self, id: u64) -> Result<Option<Row>, JobError> {
        self.rows.run(id, true).await.map_err(JobError::Database)
    }

    /// Store the result of a job, unless it already has one; false when it had (written with
    /// the results other jobs finished meanwhile).
    pub(in crate::durable) async fn finish(&self, finished: Finished) -> Result<bool, JobError> {
        self.results
            .run(finished, true)
            .await
            .map_err(JobError::Database)
    }
}

/// The rows of jobs `ids` of `queue`, in their order; one statement.
async fn load_all(queue: JobQueue, ids: Vec<u64>) -> Vec<Result<Option<Row>, DatabaseError>> {
    let name = &queue.settings.name;
    let rows = match &queue.db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            let text = format!(
                "SELECT {COLUMNS} FROM agent_toolkit_jobs WHERE queue = ?1 AND id IN ({})",
                id_list(&ids)
            );
            sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(text))
                .bind(name)
                .fetch_all(pool)
                .await
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            // One statement text, prepared once per connection, whatever the ids. The rows
            // are found by id alone, then checked for the queue: given both, Postgres's plans
            // read every row of the queue (in an index, or the table).
            let text = format!(
                "WITH wanted AS MATERIALIZED (SELECT {COLUMNS}, queue FROM agent_toolkit_jobs \
                 WHERE id = ANY($2)) SELECT {COLUMNS} FROM wanted WHERE queue = $1"
            );
            let ids: Vec<i64> = ids.iter().map(|&id| id as i64).collect();
            sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(text))
                .bind(name)
                .bind(&ids)
                .fetch_all(pool)
                .await
        }
    };
    match rows {
        Ok(rows) => {
            let mut rows: std::collections::HashMap<u64, Row> =
                rows.into_iter().map(|r| (r.id as u64, r)).collect();
            // A job asked for twice in one statement (not done by one worker) gets its row
            // twice.
            ids.iter()
                .map(|id| {
                    Ok(match ids.iter().filter(|i| *i == id).count() {
                        1 => rows.remove(id),
                        _ => rows.get(id).cloned(),
                    })
                })
                .collect()
        }
        Err(e) => {
            let error = gathered(&queue, e);
            ids.iter().map(|_| Err(error.clone())).collect()
        }
    }
}

/// Store results of jobs that have none yet, and delete their apalis tasks (the job is done
/// either way: its result is stored, by this run or another); for each, whether its result was
/// stored. One statement on Postgres, one transaction on SQLite: a task is deleted only with
/// its result stored. Of one job given twice, the first result counts.
async fn finish_all(queue: JobQueue, finished: Vec<Finished>) -> Vec<Result<bool, DatabaseError>> {
    let mut seen = HashSet::new();
    let first: Vec<bool> = finished.iter().map(|f| seen.insert(f.id)).collect();
    let now = now_ms();
    let stored: Result<HashSet<i64>, sqlx::Error> = match &queue.db.pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(pool) => {
            const TEXT: &str = concat!(
                "UPDATE agent_toolkit_jobs SET state = ?2, result = ?3, finished_ms = ?4 \
                 WHERE id = ?1 AND state IN ",
                state!(unfinished)
            );
            // apalis's table (apalis-sqlite 1).
            const DELETE: &str = "DELETE FROM Jobs WHERE id = ?1";
            async {
                let mut tx = pool.begin().await?;
                let mut stored = HashSet::new();
                for (f, _) in finished.iter().zip(&first).filter(|(_, first)| **first) {
                    let done = sqlx::query(TEXT)
                        .bind(f.id as i64)
                        .bind(f.state.as_str())
                        .bind(&f.stored)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    if done.rows_affected() == 1 {
                        stored.insert(f.id as i64);
                    }
                }
                for task in finished.iter().filter_map(|f| f.task.as_deref()) {
                    sqlx::query(DELETE).bind(task).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(stored)
            }
            .await
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(pool) => {
            // apalis's table (apalis-postgres 1).
            const TEXT: &str = concat!(
                "WITH stored AS (UPDATE agent_toolkit_jobs AS j \
                  SET state = f.state, result = f.result, finished_ms = $4 \
                  FROM UNNEST($1::bigint[], $2::text[], $3::text[]) AS f(id, state, result) \
                  WHERE j.id = f.id AND j.state IN ",
                state!(unfinished),
                " RETURNING j.id), \
                done AS (DELETE FROM apalis.jobs WHERE id = ANY($5::text[])) \
                SELECT id FROM stored"
            );
            let (mut ids, mut states, mut results) = (Vec::new(), Vec::new(), Vec::new());
            for (f, _) in finished.iter().zip(&first).filter(|(_, first)| **first) {
                ids.push(f.id as i64);
                states.push(f.state.as_str());
                results.push(f.stored.as_str());
            }
            let tasks: Vec<&str> = finished.iter().filter_map(|f| f.task.as_deref()).collect();
            sqlx::query_scalar::<_, i64>(TEXT)
                .bind(&ids)
                .bind(&states)
                .bind(&results)
                .bind(now)
                .bind(&tasks)
                .fetch_all(pool)
                .await
                .map(|ids| ids.into_iter().collect())
        }
    };
    match stored {
        Ok(stored) => finished
            .iter()
            .zip(first)
            .map(|(f, first)| Ok(first && stored.contains(&(f.id as i64))))
            .collect(),
        Err(e) => {
            let error = gathered(&queue, e);
            finished.iter().map(|_| Err(error.clone())).collect()
        }
    }
}
