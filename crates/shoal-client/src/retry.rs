//! Retrying calls that meet a moving region (UNAVAILABLE) or a busy server
//! (RESOURCE_EXHAUSTED): full-jitter exponential backoff within a deadline.
//! Statuses the server sends with any other code are not retried.
//!
//! Failures of the connection itself (refused, reset, broken mid-stream —
//! tonic reports these as UNAVAILABLE or UNKNOWN, with a local error as
//! their source) are retried for calls that may run twice (reads, puts,
//! deletes, scans), so a server restart is ridden out within the deadline.
//! Calls that must not run twice (increment, append, check-and-mutate,
//! table changes) are retried only when the failure shows the request was
//! not applied: the server itself answered UNAVAILABLE or RESOURCE_EXHAUSTED
//! (it refuses before applying), or the connection was never made. A
//! connection that broke mid-call may have applied it, so that failure is
//! returned instead.

use crate::{ClientError, ClientOptions};
use std::time::{Duration, Instant};

/// The delays between attempts: the cap starts at
/// [`ClientOptions::initial_backoff`] and doubles up to
/// [`ClientOptions::max_backoff`]; each delay is uniform in `[0, cap]`; no
/// delay reaches past [`ClientOptions::retry_deadline`].
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    max: Duration,
    deadline: Instant,
}

impl Backoff {
    /// A schedule per `options`, its deadline counted from now.
    pub fn new(options: &ClientOptions) -> Backoff {
        Backoff {
            next: options.initial_backoff,
            max: options.max_backoff,
            deadline: Instant::now() + options.retry_deadline,
        }
    }

    /// The pause before the next attempt, or `None` once the deadline has
    /// passed.
    pub fn next_delay(&mut self) -> Option<Duration> {
        let now = Instant::now();
        if now >= self.deadline {
            return None;
        }
        let cap = self.next;
        self.next = (self.next.saturating_mul(2)).min(self.max);
        let jittered = cap.mul_f64(rand::random::<f64>());
        Some(jittered.min(self.deadline - now))
    }

    /// The cap of the next delay.
    pub fn cap(&self) -> Duration {
        self.next
    }
}

/// Whether a call may safely be applied twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idempotence {
    /// Reads, puts, deletes: running twice does no harm.
    Idempotent,
    /// Increment, append, check-and-mutate.
    NotIdempotent,
}

/// True if `status` is worth another attempt for a call of this kind.
pub(crate) fn should_retry(status: &tonic::Status, kind: Idempotence) -> bool {
    use tonic::Code;
    let busy = matches!(status.code(), Code::Unavailable | Code::ResourceExhausted);
    // A status the server sent carries no local error source; one made by
    // the client's transport (the connection failed) does.
    let from_server = std::error::Error::source(status).is_none();
    match kind {
        Idempotence::Idempotent => busy || !from_server,
        Idempotence::NotIdempotent => (busy && from_server) || never_connected(status),
    }
}

/// True if the failure is a connection that could not be made (so no
/// request went out).
fn never_connected(status: &tonic::Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        if e.is::<tonic::ConnectError>() || e.is::<crate::frames::NotConnected>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// Runs `call` until it succeeds, fails with a code not worth retrying, or
/// the deadline passes (then the last failure is returned).
pub(crate) async fn retrying<T, F, Fut>(
    options: &ClientOptions,
    kind: Idempotence,
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
                if !should_retry(&status, kind) {
                    return Err(status.into());
                }
                match backoff.next_delay() {
                    Some(d) => {
                        tracing::debug!(code = ?status.code(), message = status.message(), delay = ?d, "retrying");
                        tokio::time::sleep(d).await;
                    }
                    None => return Err(status.into()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn quick() -> ClientOptions {
        ClientOptions {
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            retry_deadline: Duration::from_secs(5),
            ..ClientOptions::default()
        }
    }

    #[test]
    fn defaults_are_10ms_1s_30s() {
        let o = ClientOptions::default();
        assert_eq!(o.initial_backoff, Duration::from_millis(10));
        assert_eq!(o.max_backoff, Duration::from_secs(1));
        assert_eq!(o.retry_deadline, Duration::from_secs(30));
    }

    #[test]
    fn caps_double_up_to_the_maximum_and_delays_stay_under_them() {
        let mut b = Backoff::new(&ClientOptions::default());
        let mut caps = Vec::new();
        let mut delays = Vec::new();
        for _ in 0..10 {
            let cap = b.cap();
            let d = b.next_delay().unwrap();
            assert!(d <= cap, "{d:?} > {cap:?}");
            caps.push(cap.as_millis());
            delays.push(d);
        }
        assert_eq!(caps, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        // Jitter: the delays are not simply the caps.
        assert!(delays.iter().zip(&caps).any(|(d, c)| d.as_millis() != *c));
    }

    #[test]
    fn no_delay_after_the_deadline_and_none_past_it() {
        let options = ClientOptions {
            retry_deadline: Duration::ZERO,
            ..ClientOptions::default()
        };
        assert!(Backoff::new(&options).next_delay().is_none());
        let options = ClientOptions {
            initial_backoff: Duration::from_secs(100),
            max_backoff: Duration::from_secs(100),
            retry_deadline: Duration::from_millis(50),
            ..ClientOptions::default()
        };
        let d = Backoff::new(&options).next_delay().unwrap();
        assert!(d <= Duration::from_millis(50), "{d:?}");
    }

    /// A transport-side failure: a local error whose cause is a status.
    #[derive(Debug)]
    struct Broken(tonic::Status);
    impl std::fmt::Display for Broken {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("connection reset")
        }
    }
    impl std::error::Error for Broken {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn which_failures_are_retried() {
        use Idempotence::*;
        let server = tonic::Status::unavailable("region moving");
        assert!(should_retry(&server, Idempotent));
        assert!(should_retry(&server, NotIdempotent));
        let busy = tonic::Status::resource_exhausted("busy");
        assert!(should_retry(&busy, NotIdempotent));
        for code in [
            tonic::Status::not_found("x"),
            tonic::Status::internal("x"),
            tonic::Status::invalid_argument("x"),
            tonic::Status::deadline_exceeded("x"),
        ] {
            assert!(!should_retry(&code, Idempotent), "{code:?}");
        }
        let broken =
            tonic::Status::from_error(Box::new(Broken(tonic::Status::unavailable("gone"))));
        assert_eq!(broken.code(), tonic::Code::Unavailable);
        assert!(should_retry(&broken, Idempotent));
        assert!(
            !should_retry(&broken, NotIdempotent),
            "may have been applied"
        );
        let refused = tonic::Status::from_error(Box::new(tonic::ConnectError(Box::new(
            std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        ))));
        assert_eq!(refused.code(), tonic::Code::Unavailable);
        assert!(should_retry(&refused, NotIdempotent), "never sent");
    }

    #[tokio::test]
    async fn retries_until_success() {
        let calls = AtomicUsize::new(0);
        let r = retrying(&quick(), Idempotence::Idempotent, || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 3 {
                    Err(tonic::Status::unavailable("moving"))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(r.unwrap(), 3);
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn other_codes_fail_at_once() {
        let calls = AtomicUsize::new(0);
        let r: Result<(), _> = retrying(&quick(), Idempotence::Idempotent, || {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err(tonic::Status::not_found("no table")) }
        })
        .await;
        assert!(r.unwrap_err().is_not_found());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn gives_up_at_the_deadline_with_the_last_error() {
        let options = ClientOptions {
            retry_deadline: Duration::from_millis(30),
            ..quick()
        };
        let start = Instant::now();
        let calls = AtomicUsize::new(0);
        let r: Result<(), _> = retrying(&options, Idempotence::Idempotent, || {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err(tonic::Status::resource_exhausted("busy")) }
        })
        .await;
        assert!(r.unwrap_err().is_resource_exhausted());
        assert!(calls.load(Ordering::SeqCst) > 1);
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}
