use std::time::Duration;

use super::RetryPolicy;

/// `initial × multiplier^(retry-1)`, capped, then spread by ±jitter.
pub(super) fn delay(policy: &RetryPolicy, retry: u32) -> Duration {
    let exponent = retry.saturating_sub(1).min(64) as i32;
    let base = policy.initial_backoff.as_secs_f64() * policy.multiplier.powi(exponent);
    let capped = base.min(policy.max_backoff.as_secs_f64());
    let spread = if policy.jitter > 0.0 {
        1.0 + policy.jitter * (fastrand::f64() * 2.0 - 1.0)
    } else {
        1.0
    };
    Duration::try_from_secs_f64((capped * spread).max(0.0)).unwrap_or(policy.max_backoff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_by_the_multiplier_and_stops_at_the_cap() {
        let p = RetryPolicy::exponential(10, Duration::from_millis(100), 2.0)
            .with_jitter(0.0)
            .with_max_backoff(Duration::from_millis(500));
        let waits: Vec<_> = (1..=5).map(|r| p.backoff(r).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 500, 500]);
    }

    #[test]
    fn jitter_stays_within_its_fraction() {
        let p = RetryPolicy::exponential(3, Duration::from_millis(100), 1.0).with_jitter(0.2);
        for _ in 0..1000 {
            let ms = p.backoff(1).as_secs_f64() * 1000.0;
            assert!((80.0..=120.0).contains(&ms), "{ms}");
        }
    }
}
