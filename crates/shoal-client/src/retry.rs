//! Retrying calls that meet a moving region or a busy server: full-jitter
//! exponential backoff within a deadline.

use crate::{ClientError, ClientOptions};
use std::time::{Duration, Instant};

/// The delays between attempts.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    max: Duration,
    deadline: Instant,
}

impl Backoff {
    /// A schedule per `options`, starting now.
    pub fn new(options: &ClientOptions) -> Backoff {
        Backoff {
            next: options.initial_backoff,
            max: options.max_backoff,
            deadline: Instant::now() + options.retry_deadline,
        }
    }

    /// The pause before the next attempt (full jitter: uniform in
    /// `[0, cap]`, the cap doubling each time up to the maximum), or `None`
    /// once the deadline has passed.
    pub fn next_delay(&mut self) -> Option<Duration> {
        let now = Instant::now();
        if now >= self.deadline {
            return None;
        }
        let cap = self.next;
        self.next = (self.next * 2).min(self.max);
        let jittered = cap.mul_f64(rand::random::<f64>());
        Some(jittered.min(self.deadline - now))
    }

    /// The current cap (for tests and logs).
    pub fn cap(&self) -> Duration {
        self.next
    }
}

/// Runs `call` until it succeeds, fails for good, or the deadline passes.
pub(crate) async fn retrying<T, F, Fut>(
    options: &ClientOptions,
    mut call: F,
) -> Result<T, ClientError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    let mut backoff = Backoff::new(options);
    loop {
        match call().await {
            Ok(v) => return Ok(v),
            Err(status) => {
                let e = ClientError::from(status);
                if !e.is_retryable() {
                    return Err(e);
                }
                match backoff.next_delay() {
                    Some(d) => tokio::time::sleep(d).await,
                    None => return Err(e),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_double_up_to_the_maximum_and_delays_stay_under_them() {
        let options = ClientOptions {
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(80),
            retry_deadline: Duration::from_secs(60),
            ..ClientOptions::default()
        };
        let mut b = Backoff::new(&options);
        let mut caps = Vec::new();
        for _ in 0..6 {
            let cap = b.cap();
            let d = b.next_delay().unwrap();
            assert!(d <= cap, "{d:?} > {cap:?}");
            caps.push(cap.as_millis());
        }
        assert_eq!(caps, [10, 20, 40, 80, 80, 80]);
    }

    #[test]
    fn no_delay_after_the_deadline() {
        let options = ClientOptions {
            retry_deadline: Duration::ZERO,
            ..ClientOptions::default()
        };
        assert!(Backoff::new(&options).next_delay().is_none());
    }
}
