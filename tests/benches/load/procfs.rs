//! What the bench reads about the server process from `/proc`, and CPU pinning (`taskset`).

use std::process::Command;

/// The process's resident memory (`VmRSS` of `/proc/<pid>/status`), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The CPU time the process has used, user plus system, every thread (live or exited) included
/// (`utime + stime` of `/proc/<pid>/stat`), in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of the whole line; `rest` starts at field 3.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / clock_ticks() as f64)
}

/// The time CPU `cpu` has been busy (anything but idle and waiting for I/O) since boot, in
/// seconds (`/proc/stat`).
pub fn cpu_busy_seconds(cpu: usize) -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let label = format!("cpu{cpu}");
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label.as_str()))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    let total: u64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3)? + ticks.get(4)?;
    Some((total - idle) as f64 / clock_ticks() as f64)
}

/// `getconf CLK_TCK` (the unit of `/proc/<pid>/stat`'s times), 100 when it cannot be asked.
fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100)
    })
}

/// The CPUs the server and the clients run on: `Some((server, clients))` when this machine has
/// at least two and `taskset` is installed, else `None` (the bench then runs unpinned and says
/// so).
pub fn pinning() -> Option<(usize, usize)> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let taskset = Command::new("taskset")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    (cpus >= 2 && taskset).then_some((0, 1))
}

/// Pin this process's main thread (and so every thread it starts afterwards) to `cpu`.
pub fn pin_self(cpu: usize) -> bool {
    Command::new("taskset")
        .args([
            "-p",
            "-c",
            &cpu.to_string(),
            &std::process::id().to_string(),
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The machine's load average over the last minute (`/proc/loadavg`).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The CPU's model name (`lscpu`'s "Model name").
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}
