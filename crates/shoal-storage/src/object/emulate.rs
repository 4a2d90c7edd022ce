//! Emulated object-store latency and bandwidth, so a laptop behaves like S3 in
//! benchmarks.
//!
//! Each attempt first waits `latency ± jitter` (uniform) — the time to first byte — and
//! then `bytes / bandwidth` for the payload it sends and for the payload it receives.
//! Bandwidth is per request, as S3's is per connection: concurrent requests do not slow
//! each other down. Waits use `tokio::time`, so tests with a paused clock cost nothing.

use std::time::Duration;

use rand::Rng;

use super::config::Emulation;

#[derive(Debug, Clone)]
pub(crate) struct Emulator {
    config: Emulation,
}

impl Emulator {
    pub(crate) fn new(config: Emulation) -> Emulator {
        Emulator { config }
    }

    /// `latency` plus a uniform offset in `[-jitter, +jitter]`, never negative.
    pub(crate) fn first_byte_delay(&self) -> Duration {
        let latency = self.config.latency;
        let jitter_us = u64::try_from(self.config.jitter.as_micros()).unwrap_or(u64::MAX);
        if jitter_us == 0 {
            return latency;
        }
        let offset = rand::rng().random_range(0..=jitter_us.saturating_mul(2));
        let base = latency.saturating_sub(Duration::from_micros(jitter_us));
        base + Duration::from_micros(offset)
    }

    /// Time to move `bytes` at the configured bandwidth (zero if unlimited).
    pub(crate) fn transfer_delay(&self, bytes: u64) -> Duration {
        let bandwidth = self.config.bandwidth_bytes_per_sec;
        if bandwidth == 0 || bytes == 0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(bytes as f64 / bandwidth as f64)
    }

    pub(crate) async fn first_byte(&self) {
        sleep(self.first_byte_delay()).await;
    }

    pub(crate) async fn transfer(&self, bytes: u64) {
        sleep(self.transfer_delay(bytes)).await;
    }
}

async fn sleep(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_follow_the_config() {
        let e = Emulator::new(Emulation::default());
        for _ in 0..1000 {
            let d = e.first_byte_delay();
            assert!(
                d >= Duration::from_millis(20) && d <= Duration::from_millis(40),
                "{d:?}"
            );
        }
        assert_eq!(e.transfer_delay(90_000_000), Duration::from_secs(1));
        assert_eq!(e.transfer_delay(9_000_000), Duration::from_millis(100));
        assert_eq!(e.transfer_delay(0), Duration::ZERO);

        let unlimited = Emulator::new(Emulation {
            latency: Duration::from_millis(5),
            jitter: Duration::ZERO,
            bandwidth_bytes_per_sec: 0,
        });
        assert_eq!(unlimited.first_byte_delay(), Duration::from_millis(5));
        assert_eq!(unlimited.transfer_delay(1 << 30), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn sleeps_on_the_tokio_clock() {
        let e = Emulator::new(Emulation {
            latency: Duration::from_millis(30),
            jitter: Duration::ZERO,
            bandwidth_bytes_per_sec: 1_000_000,
        });
        let start = tokio::time::Instant::now();
        e.first_byte().await;
        e.transfer(500_000).await;
        assert_eq!(start.elapsed(), Duration::from_millis(530));
    }
}
