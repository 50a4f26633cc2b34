//! `SqlJournalStore` on real databases (a SQLite file, a throwaway Postgres cluster): the
//! `JournalStore` contract, its table made by the library's migrations, errors mapped to
//! `JournalError::Store` and `Malformed`, retention, and a program resumed through it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use agent_toolkit::ToolContext;
use agent_toolkit::code::{
    CodeMode, Journal, JournalError, JournalStore, MemoryJournalStore, SqlJournalStore,
};
use agent_toolkit::storage::Database;

use super::db;
use super::fixtures::{Effects, toolkit};
use super::{err, ok};

const PROGRAM: &str = r#"
    const a = await tools.charge({ customer: "acme", cents: 100 });
    const [x, y] = await Promise.all([tools.forecast({ city: "Oslo" }), tools.forecast({ city: "Rome" })]);
    return [a, x.high, y.high, Math.floor(Math.random() * 1000), Date.now()];
"#;

/// A journal with calls in it: the program's, run to its end.
async fn finished_journal() -> Journal {
    let store = MemoryJournalStore::new();
    let mode = CodeMode::new().journal_store(store.clone());
    ok(&mode
        .run(
            &toolkit(Arc::new(Effects::default())),
            "j",
            PROGRAM,
            &ToolContext::new(),
        )
        .await);
    store.load("j").await.unwrap().unwrap()
}

/// The same journal as if its program had been cut off after `keep` calls, the last one
/// without an answer.
fn cut(journal: &Journal, keep: usize) -> Journal {
    let mut v = serde_json::to_value(journal).unwrap();
    v.as_object_mut().unwrap().remove("finished");
    let entries = v["entries"].as_array_mut().unwrap();
    entries.truncate(keep);
    entries
        .last_mut()
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove("outcome");
    serde_json::from_value(v).unwrap()
}

async fn contract(db: &Database) {
    let store = SqlJournalStore::new(db).await.unwrap();
    assert!(store.load("p1").await.unwrap().is_none());
    let finished = finished_journal().await;
    let started = cut(&finished, 2);
    // Saved, read back the same; saved again, replaced (one row per program).
    store.save("p1", &started).await.unwrap();
    assert_eq!(store.load("p1").await.unwrap().as_ref(), Some(&started));
    store.save("p1", &finished).await.unwrap();
    assert_eq!(store.load("p1").await.unwrap().as_ref(), Some(&finished));
    store.save("p2", &started).await.unwrap();
    // Another store on the database (another process, say) reads what this one wrote.
    let other = SqlJournalStore::new(db).await.unwrap();
    assert_eq!(other.load("p2").await.unwrap().as_ref(), Some(&started));
    store.remove("p1").await.unwrap();
    assert!(other.load("p1").await.unwrap().is_none());
    assert!(store.load("p2").await.unwrap().is_some());
    store.remove("missing").await.unwrap();

    // Retention: finished journals written before the cutoff go; unfinished ones stay.
    store.save("done", &finished).await.unwrap();
    assert_eq!(
        store
            .delete_finished_before(SystemTime::now() - Duration::from_secs(3600))
            .await
            .unwrap(),
        0
    );
    let later = SystemTime::now() + Duration::from_secs(1);
    assert_eq!(store.delete_finished_before(later).await.unwrap(), 1);
    assert!(store.load("done").await.unwrap().is_none());
    assert!(store.load("p2").await.unwrap().is_some());
}

/// A program resumed through the store: its finished calls answered from the journal, the
/// charge cut off not run again, the lookup cut off run again.
async fn resumes(db: &Database) {
    let effects = Arc::new(Effects::default());
    let kit = toolkit(effects.clone());
    let store = SqlJournalStore::new(db).await.unwrap();
    let mode = CodeMode::new().journal_store(store.clone());
    let whole = finished_journal().await;
    // Cut during the forecasts: the charge is journaled, a forecast is not answered.
    store.save("forecasts", &cut(&whole, 3)).await.unwrap();
    let resumed = ok(&mode
        .run(&kit, "forecasts", PROGRAM, &ToolContext::new())
        .await);
    assert_eq!(
        effects.charges.load(Ordering::SeqCst),
        0,
        "the charge was answered from the journal"
    );
    assert_eq!(
        effects.lookups.load(Ordering::SeqCst),
        1,
        "only the cut-off forecast ran again"
    );
    // Seed and clock came from the journal too: the same result as the whole run.
    let whole_result = ok(&CodeMode::new()
        .journal_store({
            let memory = MemoryJournalStore::new();
            memory.save("w", &whole).await.unwrap();
            memory
        })
        .run(&kit, "w", PROGRAM, &ToolContext::new())
        .await);
    assert_eq!(resumed, whole_result);
    assert!(
        store
            .load("forecasts")
            .await
            .unwrap()
            .unwrap()
            .is_finished()
    );

    // Cut during the charge: not run again, the program is told its outcome is unknown.
    store.save("charge", &cut(&whole, 1)).await.unwrap();
    let message = err(&mode.run(&kit, "charge", PROGRAM, &ToolContext::new()).await);
    assert!(
        message.contains("`charge` was running when the program was interrupted"),
        "{message}"
    );
    assert_eq!(effects.charges.load(Ordering::SeqCst), 0);
}

/// A row that is not a journal this build reads is `Malformed`, naming the program.
async fn malformed(db: &Database, raw: impl AsyncFn(&str)) {
    let store = SqlJournalStore::new(db).await.unwrap();
    store.save("bad", &finished_journal().await).await.unwrap();
    for (text, says) in [
        ("nope", "not JSON"),
        (r#"{"version": 99, "code": ""}"#, "format version 99"),
        (r#"{"version": 1, "code": 7}"#, "invalid type"),
    ] {
        raw(text).await;
        match store.load("bad").await {
            Err(JournalError::Malformed(message)) => {
                assert!(message.contains("program `bad`"), "{message}");
                assert!(message.contains("a program journal"), "{message}");
                assert!(message.contains(says), "{message}");
            }
            other => panic!("expected Malformed for {text}, got {other:?}"),
        }
    }
    // A program whose journal cannot be read does not start.
    let kit = toolkit(Arc::new(Effects::default()));
    let mode = CodeMode::new().journal_store(store);
    let message = err(&mode.run(&kit, "bad", PROGRAM, &ToolContext::new()).await);
    assert!(message.contains("did not start"), "{message}");
}

/// The table is made once, by the library's migrations, as component `code`.
async fn migrated_once(db: &Database, version: impl AsyncFn() -> i64) {
    SqlJournalStore::new(db).await.unwrap();
    SqlJournalStore::new(db).await.unwrap();
    assert_eq!(version().await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_journal_store() {
    let file = db::SqliteFile::new("code-journals");
    let db = Database::sqlite(file.path()).await.unwrap();
    contract(&db).await;
    resumes(&db).await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}", file.path().display()))
        .await
        .unwrap();
    malformed(&db, async |text: &str| {
        sqlx::query("UPDATE agent_toolkit_code_journals SET journal = ?1 WHERE program = 'bad'")
            .bind(text)
            .execute(&pool)
            .await
            .unwrap();
    })
    .await;
    migrated_once(&db, async || {
        sqlx::query_scalar("SELECT version FROM agent_toolkit_schema WHERE component = 'code'")
            .fetch_one(&pool)
            .await
            .unwrap()
    })
    .await;
    // Journals outlive the process's handle: a new database handle on the file reads them.
    drop(db);
    let reopened = SqlJournalStore::sqlite(file.path()).await.unwrap();
    assert!(reopened.load("p2").await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_journal_store() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("journals");
    let db = Database::postgres(&url).await.unwrap();
    contract(&db).await;
    resumes(&db).await;
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    malformed(&db, async |text: &str| {
        sqlx::query("UPDATE agent_toolkit_code_journals SET journal = $1 WHERE program = 'bad'")
            .bind(text)
            .execute(&pool)
            .await
            .unwrap();
    })
    .await;
    migrated_once(&db, async || {
        sqlx::query_scalar("SELECT version FROM agent_toolkit_schema WHERE component = 'code'")
            .fetch_one(&pool)
            .await
            .unwrap()
    })
    .await;

    // The database gone: the store fails with `Store`, and a program does not start.
    let store = SqlJournalStore::new(&db).await.unwrap();
    pool.close().await;
    pg.stop();
    match store.load("p2").await {
        Err(JournalError::Store(message)) => {
            assert!(message.contains("Postgres 127.0.0.1"), "{message}")
        }
        other => panic!("expected Store, got {other:?}"),
    }
    let error = store
        .save("p3", &finished_journal().await)
        .await
        .unwrap_err();
    assert!(matches!(error, JournalError::Store(_)), "{error:?}");
    let kit = toolkit(Arc::new(Effects::default()));
    let mode = CodeMode::new().journal_store(store);
    let message = err(&mode.run(&kit, "p4", PROGRAM, &ToolContext::new()).await);
    assert!(message.contains("did not start"), "{message}");
}
