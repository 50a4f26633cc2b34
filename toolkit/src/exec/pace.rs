//! [`SyncPace`]: where a synchronous tool's calls run, inline or on tokio's blocking pool.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Where a synchronous tool's next call runs: on tokio's blocking pool, or inline on the
/// caller's thread. One per synchronous tool of a toolkit, shared by its calls.
///
/// The hop to the blocking pool costs two thread wake-ups (tens of microseconds under load);
/// for a tool that adds two numbers that is most of the call. Running every synchronous tool
/// inline would be cheap but lets one slow tool stall a runtime worker (and with it every task
/// queued there). So the rule is:
///
/// - a tool's calls run on the pool, timed there, until [`PROBES`] calls in a row each took
///   less than [`QUICK`]; then they run inline (timed too);
/// - a call that takes [`QUICK`] or longer, wherever it ran, sends the tool back to the pool to
///   prove itself again; after [`SLOW_CALLS`] such calls it stays on the pool for good.
///
/// A tool is thus inline only after proving quick, and a tool that turns slow later stalls a
/// worker for at most [`SLOW_CALLS`] calls in the toolkit's life (a quick tool preempted once
/// by the OS just proves itself again). Code that may block for long at unpredictable moments
/// (network, locks) belongs in an `async fn` (with `tokio::task::spawn_blocking` where needed).
#[derive(Debug, Default)]
pub(crate) struct SyncPace(AtomicU32);

/// A call shorter than this counts as quick: tokio's guidance for the time between two yields
/// of a task.
pub(crate) const QUICK: Duration = Duration::from_micros(100);

/// Quick calls in a row on the pool before a tool runs inline.
pub(crate) const PROBES: u32 = 8;

/// Slow calls after which a tool stays on the pool for good.
pub(crate) const SLOW_CALLS: u32 = 3;

/// `SyncPace` state: quick calls in a row (bits 0–7), slow calls so far (bits 8–15), and:
const STREAK: u32 = 0xff;
const SLOW_ONE: u32 = 1 << 8;
/// The tool runs inline.
const INLINE: u32 = 1 << 31;
/// The tool was slow [`SLOW_CALLS`] times and stays on the pool.
const POOL_FOR_GOOD: u32 = 1 << 30;

impl SyncPace {
    /// Whether the next call runs inline.
    pub(crate) fn inline(&self) -> bool {
        self.0.load(Ordering::Relaxed) & INLINE != 0
    }

    /// Record how long a call took, and where it ran.
    pub(crate) fn record(&self, took: Duration, inline: bool) {
        let slow = took >= QUICK;
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |state| {
                if state & POOL_FOR_GOOD != 0 {
                    return None;
                }
                if slow {
                    let slow_calls = ((state >> 8) & STREAK) + 1;
                    return Some(if slow_calls >= SLOW_CALLS {
                        POOL_FOR_GOOD
                    } else {
                        slow_calls * SLOW_ONE
                    });
                }
                if inline || state & INLINE != 0 {
                    return None;
                }
                let streak = (state & STREAK) + 1;
                Some(if streak >= PROBES {
                    (state & !STREAK) | INLINE
                } else {
                    (state & !STREAK) | streak
                })
            });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{PROBES, QUICK, SLOW_CALLS, SyncPace};

    const FAST: Duration = Duration::from_micros(3);

    #[test]
    fn a_tool_runs_inline_after_proving_quick_and_proves_itself_again_after_a_slow_call() {
        let pace = SyncPace::default();
        for _ in 1..PROBES {
            pace.record(FAST, false);
            assert!(!pace.inline());
        }
        pace.record(FAST, false);
        assert!(pace.inline());
        pace.record(FAST, true);
        assert!(pace.inline());
        pace.record(QUICK, true);
        assert!(!pace.inline(), "slow: back to the pool");
        for _ in 0..PROBES {
            pace.record(FAST, false);
        }
        assert!(pace.inline(), "proved quick again");
    }

    #[test]
    fn a_slow_probe_restarts_the_streak() {
        let pace = SyncPace::default();
        for _ in 1..PROBES {
            pace.record(FAST, false);
        }
        pace.record(Duration::from_millis(5), false);
        pace.record(FAST, false);
        assert!(!pace.inline());
    }

    #[test]
    fn a_tool_slow_often_enough_stays_on_the_pool() {
        let pace = SyncPace::default();
        for _ in 0..SLOW_CALLS {
            for _ in 0..PROBES {
                pace.record(FAST, false);
            }
            assert!(pace.inline());
            pace.record(Duration::from_millis(5), true);
        }
        for _ in 0..4 * PROBES {
            pace.record(FAST, false);
        }
        assert!(!pace.inline(), "slow three times: on the pool for good");
    }
}
