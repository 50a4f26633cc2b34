//! Databases for the tests: a throwaway Postgres cluster (Debian's `postgresql` package, which
//! `.ci/run` installs) in a temporary directory on a free loopback port, and temporary SQLite
//! files.
//!
//! Include it from a test binary with `#[path = "../db/mod.rs"] mod db;`.
//!
//! When the Postgres binaries are missing, [`Postgres::start`] returns `None` after printing a
//! loud message, so a developer without Postgres can still run the other tests; under CI
//! (`CI` set) a missing Postgres fails the test instead.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// A Postgres server of one test, stopped and deleted on drop.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    /// Run the server as this user (`initdb` refuses root).
    user: Option<String>,
    /// Whether the server flushes its commits to disk (`fsync`; off in the tests).
    fsync: bool,
}

impl Postgres {
    /// Start a fresh cluster, or `None` (with a message) when Postgres is not installed and
    /// this is not CI. It runs with `fsync=off`: nothing here needs to survive the machine.
    pub fn start() -> Option<Postgres> {
        Self::start_with_fsync(false)
    }

    /// [`start`](Self::start), with `fsync` on (Postgres's default: every commit waits for its
    /// write-ahead log to reach the disk) or off.
    pub fn start_with_fsync(fsync: bool) -> Option<Postgres> {
        let Some(bin) = find_bin() else {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "Postgres is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH); \
                     .ci/run installs Debian's `postgresql` package"
                );
            }
            eprintln!(
                "\n!!! SKIPPED: Postgres is not installed (apt-get install postgresql); \
                 the Postgres tests did not run !!!\n"
            );
            return None;
        };
        let dir = temp_dir("pg");
        // initdb and postgres refuse to run as root: use the `postgres` account Debian's
        // package creates.
        let user = is_root().then(|| "postgres".to_string());
        if let Some(user) = &user {
            run(Command::new("chown").arg("-R").arg(user).arg(&dir));
        }
        let data = dir.join("data");
        let port = free_port();
        let pg = Postgres {
            dir,
            bin,
            port,
            user,
            fsync,
        };
        pg.run_tool(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        pg.start_server();
        Some(pg)
    }

    /// The port the server listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id (from its `postmaster.pid`), while it runs.
    pub fn server_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// The URL of the `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A new empty database, and its URL: tests of one cluster do not see each other's tables.
    pub fn database(&self, name: &str) -> String {
        self.run_tool(
            "createdb",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                name,
            ],
        );
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Stop the server at once (`pg_ctl stop -m immediate`): the database goes away under its
    /// clients.
    pub fn stop(&self) {
        self.run_tool(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
    }

    /// Start it again after [`stop`](Self::stop), on the same port with the same data.
    pub fn restart(&self) {
        self.start_server();
    }

    /// `pg_ctl start` on this cluster's port, waiting up to three minutes (a loaded two-core
    /// machine starting several clusters at once can take more than `pg_ctl`'s default 60 s);
    /// a failure shows the server's own log.
    fn start_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync={} -c max_connections=200",
            self.port,
            self.dir.display(),
            if self.fsync { "on" } else { "off" }
        );
        let log = self.dir.join("log");
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.run_tool(
                "pg_ctl",
                &[
                    "-D",
                    self.data().to_str().unwrap(),
                    "-o",
                    &options,
                    "-l",
                    log.to_str().unwrap(),
                    "-t",
                    "180",
                    "-w",
                    "start",
                ],
            )
        }));
        if started.is_err() {
            panic!(
                "the test Postgres did not start; its log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn run_tool(&self, tool: &str, args: &[&str]) {
        let exe = self.bin.join(tool);
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.arg("-u").arg(user).arg("--").arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        command.args(args).current_dir(&self.dir);
        run(&mut command);
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.arg("-u").arg(user).arg("--").arg(self.bin.join("pg_ctl"));
                c
            }
            None => Command::new(self.bin.join("pg_ctl")),
        };
        let _ = command
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "stop",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A path for a SQLite file of one test, in a directory removed on drop.
pub struct SqliteFile {
    dir: PathBuf,
}

impl SqliteFile {
    /// A fresh directory with no database in it yet.
    pub fn new(name: &str) -> SqliteFile {
        SqliteFile {
            dir: temp_dir(name),
        }
    }

    /// The database file's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join("jobs.db")
    }
}

impl Drop for SqliteFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort();
    if let Some(newest) = versions.pop() {
        return Some(newest);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|p| p.join("initdb").exists() && p.join("pg_ctl").exists())
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn run(command: &mut Command) {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("could not run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "agent-toolkit-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create a temporary directory");
    dir
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

/// Whether `path` exists (for tests that look at the SQLite file).
pub fn exists(path: &Path) -> bool {
    path.exists()
}
