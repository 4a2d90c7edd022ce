//! Classifying failed attempts, and retrying the transient ones.
//!
//! `object_store`'s own retries are switched off (`RetryConfig::max_retries = 0`), so each
//! HTTP request surfaces here as exactly one attempt, and this layer decides — with one
//! policy, one log line and one metric for every backend — whether to try again.
//!
//! [`classify`] reduces an `object_store::Error` to a [`FailureKind`]. `object_store`
//! 0.14 does not export its `RetryError` type, so an HTTP status is recovered from the
//! error chain in two ways: a transport failure carries a public
//! [`object_store::client::HttpError`] (downcast; its kind says connect / timeout / ...),
//! and a status failure carries the stable text `Server returned non-2xx status code:
//! <code>` (or `Server returned error response:` for S3's "200 with an error body").
//! The crate is pinned to an exact version, and the unit tests below and
//! `tests/s3_object_store.rs` run the classifier against real client errors, so a change
//! in that text fails a test rather than silently disabling retries.
//!
//! Only transient kinds are retried: timeouts, connection errors, interrupted transfers,
//! HTTP 5xx, 429 and S3's 503 SlowDown, and 409 conflicts between concurrent conditional
//! writes. Never not-found, already-exists, precondition, permission or configuration
//! errors. Whether a *write* may be retried blindly is the caller's concern: see
//! [`FailureKind::may_have_applied`] and `Bucket::create_if_absent`.

use std::error::Error as StdError;
use std::time::Duration;

use object_store::client::{HttpError, HttpErrorKind};
use rand::Rng;
use tokio::time::Instant;

use super::config::RetryPolicy;
use super::error::{BoxError, ObjectError};
use super::metrics::{ObjectMetrics, Op};

/// What a failed attempt means for the caller and for the retry loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// 404 / no such key.
    NotFound,
    /// A create-if-absent found the object already there (412, 304, local `create_new`).
    AlreadyExists,
    /// 409: a conflicting conditional request was in flight; the store asks to retry.
    Conflict,
    /// Another precondition failed.
    Precondition,
    /// 401 / 403.
    Permission,
    /// 416: the requested range starts beyond the end of the object.
    RangeNotSatisfiable,
    /// 429, 503 SlowDown.
    Throttled,
    /// Other 5xx, or a 200 whose body reports an error.
    ServerError,
    /// The request or the connection timed out (also 408).
    Timeout,
    /// The connection could not be established; the request was never sent.
    Connect,
    /// The connection broke while sending or receiving.
    Interrupted,
    /// Anything else; not retried.
    Fatal,
}

impl FailureKind {
    /// Worth another attempt.
    pub(crate) fn is_transient(self) -> bool {
        matches!(
            self,
            FailureKind::Conflict
                | FailureKind::Throttled
                | FailureKind::ServerError
                | FailureKind::Timeout
                | FailureKind::Connect
                | FailureKind::Interrupted
        )
    }

    /// The store may have applied the request even though the client saw a failure.
    /// Connect failures, throttling and conflicts are definite rejections; a timeout, a
    /// broken connection or a 5xx after the request was sent are not.
    pub(crate) fn may_have_applied(self) -> bool {
        matches!(
            self,
            FailureKind::ServerError | FailureKind::Timeout | FailureKind::Interrupted
        )
    }

    /// Counted in the `errors` metric (answers like "not found" are not).
    pub(crate) fn is_error(self) -> bool {
        !matches!(self, FailureKind::NotFound | FailureKind::AlreadyExists)
    }
}

/// One failed attempt.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) kind: FailureKind,
    pub(crate) source: BoxError,
}

impl Failure {
    pub(crate) fn new(kind: FailureKind, source: impl Into<BoxError>) -> Failure {
        Failure {
            kind,
            source: source.into(),
        }
    }

    pub(crate) fn from_store(error: object_store::Error) -> Failure {
        Failure {
            kind: classify(&error),
            source: Box::new(error),
        }
    }

    /// The error a caller sees for this failure of `op` on `path` after `attempts`
    /// attempts.
    pub(crate) fn into_error(self, op: Op, path: &str, attempts: u32) -> ObjectError {
        let path = path.to_owned();
        match self.kind {
            FailureKind::NotFound => ObjectError::NotFound { op, path },
            FailureKind::AlreadyExists => ObjectError::AlreadyExists { path },
            FailureKind::RangeNotSatisfiable => ObjectError::RangeOutOfBounds {
                op,
                path,
                requested: 0..0,
                size: None,
            },
            FailureKind::Permission => ObjectError::Permission {
                op,
                path,
                source: self.source,
            },
            kind if kind.is_transient() => ObjectError::Transient {
                op,
                path,
                attempts,
                source: self.source,
            },
            _ => ObjectError::Other {
                op,
                path,
                source: self.source,
            },
        }
    }
}

/// Classifies an `object_store` error (see the module docs).
pub(crate) fn classify(error: &object_store::Error) -> FailureKind {
    use object_store::Error as E;
    match error {
        E::NotFound { .. } => FailureKind::NotFound,
        E::AlreadyExists { .. } => {
            // object_store maps every 409 to AlreadyExists; for S3 a 409 on a conditional
            // PUT is ConditionalRequestConflict ("retry"), not a lost race (412).
            if status_in_chain(error) == Some(409) {
                FailureKind::Conflict
            } else {
                FailureKind::AlreadyExists
            }
        }
        E::Precondition { .. } | E::NotModified { .. } => FailureKind::Precondition,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => FailureKind::Permission,
        E::InvalidPath { .. }
        | E::NotSupported { .. }
        | E::NotImplemented { .. }
        | E::UnknownConfigurationKey { .. }
        | E::JoinError { .. } => FailureKind::Fatal,
        _ => classify_chain(error),
    }
}

/// Classifies by walking the source chain of an error that `object_store` did not map.
fn classify_chain(error: &(dyn StdError + 'static)) -> FailureKind {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<HttpError>() {
            return match http.kind() {
                HttpErrorKind::Connect => FailureKind::Connect,
                HttpErrorKind::Timeout => FailureKind::Timeout,
                HttpErrorKind::Request | HttpErrorKind::Interrupted | HttpErrorKind::Decode => {
                    FailureKind::Interrupted
                }
                // reqwest reports some connection failures (DNS, TLS, resets) as Unknown;
                // `HttpErrorKind` is non-exhaustive, so future kinds are treated alike.
                _ => {
                    if has_transient_io(e) {
                        FailureKind::Interrupted
                    } else {
                        FailureKind::Fatal
                    }
                }
            };
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(kind) = classify_io(io)
        {
            return kind;
        }
        let text = e.to_string();
        if let Some(status) = parse_status(&text) {
            return classify_status(status, &text);
        }
        // object_store's own range check (local disk, memory): `InvalidGetRange`; and an
        // HTTP store answering a range request with the whole object, which S3-compatible
        // stores do for an empty object (it has no satisfiable range).
        if text.contains("Wanted range starting at")
            || text.contains("Received non-partial response when range requested")
        {
            return FailureKind::RangeNotSatisfiable;
        }
        if text.contains(ERROR_BODY_MARKER) {
            return if text.contains("SlowDown") {
                FailureKind::Throttled
            } else {
                FailureKind::ServerError
            };
        }
        current = e.source();
    }
    FailureKind::Fatal
}

fn has_transient_io(error: &(dyn StdError + 'static)) -> bool {
    let mut current = error.source();
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && classify_io(io).is_some()
        {
            return true;
        }
        current = e.source();
    }
    false
}

fn classify_io(io: &std::io::Error) -> Option<FailureKind> {
    use std::io::ErrorKind as K;
    match io.kind() {
        K::TimedOut => Some(FailureKind::Timeout),
        K::ConnectionRefused => Some(FailureKind::Connect),
        K::ConnectionReset
        | K::ConnectionAborted
        | K::BrokenPipe
        | K::UnexpectedEof
        | K::Interrupted => Some(FailureKind::Interrupted),
        _ => None,
    }
}

const STATUS_MARKER: &str = "Server returned non-2xx status code: ";
const ERROR_BODY_MARKER: &str = "Server returned error response:";

/// The HTTP status in `object_store`'s `RequestError::Status` text, if present.
fn parse_status(text: &str) -> Option<u16> {
    let rest = &text[text.find(STATUS_MARKER)? + STATUS_MARKER.len()..];
    let digits = rest.get(..3)?;
    digits.parse().ok()
}

fn status_in_chain(error: &(dyn StdError + 'static)) -> Option<u16> {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(status) = parse_status(&e.to_string()) {
            return Some(status);
        }
        current = e.source();
    }
    None
}

/// Classifies an HTTP status; `text` is the error text (it may carry the S3 error code).
pub(crate) fn classify_status(status: u16, text: &str) -> FailureKind {
    match status {
        404 => FailureKind::NotFound,
        401 | 403 => FailureKind::Permission,
        304 | 412 => FailureKind::Precondition,
        408 => FailureKind::Timeout,
        409 => FailureKind::Conflict,
        416 => FailureKind::RangeNotSatisfiable,
        429 => FailureKind::Throttled,
        503 => FailureKind::Throttled,
        500..=599 if text.contains("SlowDown") => FailureKind::Throttled,
        500..=599 => FailureKind::ServerError,
        _ => FailureKind::Fatal,
    }
}

/// Delay before retry number `retry` (1-based): uniform in
/// `[0, min(max_delay, base_delay * 2^(retry-1))]` ("full jitter").
pub(crate) fn backoff_delay(policy: &RetryPolicy, retry: u32) -> Duration {
    let cap = backoff_cap(policy, retry);
    let cap_us = u64::try_from(cap.as_micros()).unwrap_or(u64::MAX);
    if cap_us == 0 {
        return Duration::ZERO;
    }
    Duration::from_micros(rand::rng().random_range(0..=cap_us))
}

fn backoff_cap(policy: &RetryPolicy, retry: u32) -> Duration {
    let factor = 1u32
        .checked_shl(retry.saturating_sub(1))
        .unwrap_or(u32::MAX);
    policy
        .base_delay
        .checked_mul(factor)
        .unwrap_or(policy.max_delay)
        .min(policy.max_delay)
}

/// The retry state of one operation: attempts made, and the clock of the deadline.
pub(crate) struct Retrier<'a> {
    policy: &'a RetryPolicy,
    metrics: &'a ObjectMetrics,
    op: Op,
    path: &'a str,
    attempts: u32,
    started: Instant,
}

impl<'a> Retrier<'a> {
    pub(crate) fn new(
        policy: &'a RetryPolicy,
        metrics: &'a ObjectMetrics,
        op: Op,
        path: &'a str,
    ) -> Retrier<'a> {
        Retrier {
            policy,
            metrics,
            op,
            path,
            attempts: 0,
            started: Instant::now(),
        }
    }

    /// Attempts made so far (failed ones are counted by [`Retrier::retry_after`]).
    #[cfg(test)]
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Accounts for a failed attempt. If it is worth retrying and the policy allows
    /// another attempt, logs it, sleeps the backoff, counts the retry and returns true.
    pub(crate) async fn retry_after(&mut self, failure: &Failure) -> bool {
        self.attempts += 1;
        if !failure.kind.is_transient() || self.attempts >= self.policy.max_attempts {
            return false;
        }
        let delay = backoff_delay(self.policy, self.attempts);
        if self.started.elapsed() + delay > self.policy.deadline {
            return false;
        }
        tracing::warn!(
            op = self.op.as_str(),
            path = self.path,
            attempt = self.attempts,
            max_attempts = self.policy.max_attempts,
            kind = ?failure.kind,
            delay_ms = delay.as_millis() as u64,
            error = %failure.source,
            "object store request failed; retrying"
        );
        tokio::time::sleep(delay).await;
        self.metrics.record_retry(self.op);
        true
    }

    /// The caller-facing error for the last failure.
    pub(crate) fn into_error(self, failure: Failure) -> ObjectError {
        failure.into_error(self.op, self.path, self.attempts.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(source: BoxError) -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source,
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Text(String);

    #[test]
    fn classifies_transport_errors() {
        for (kind, expected) in [
            (HttpErrorKind::Connect, FailureKind::Connect),
            (HttpErrorKind::Timeout, FailureKind::Timeout),
            (HttpErrorKind::Interrupted, FailureKind::Interrupted),
            (HttpErrorKind::Request, FailureKind::Interrupted),
            (HttpErrorKind::Decode, FailureKind::Interrupted),
            (HttpErrorKind::Unknown, FailureKind::Fatal),
        ] {
            let error = generic(Box::new(HttpError::new(kind, Text("boom".into()))));
            assert_eq!(classify(&error), expected, "{kind:?}");
        }
        // Nested: provider error -> RetryError-like wrapper -> HttpError.
        #[derive(Debug, thiserror::Error)]
        #[error("Error performing PUT http://x in 1s - {0}")]
        struct Wrapper(#[source] HttpError);
        let error = generic(Box::new(Wrapper(HttpError::new(
            HttpErrorKind::Timeout,
            Text("operation timed out".into()),
        ))));
        assert_eq!(classify(&error), FailureKind::Timeout);
    }

    #[test]
    fn classifies_status_text() {
        let status = |code: &str, body: &str| {
            generic(Box::new(Text(format!(
                "Error performing GET http://127.0.0.1/b/k in 2ms - \
                 Server returned non-2xx status code: {code}: {body}"
            ))))
        };
        let slow_down = "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
        assert_eq!(
            classify(&status("503 Service Unavailable", slow_down)),
            FailureKind::Throttled
        );
        assert_eq!(
            classify(&status("429 Too Many Requests", "")),
            FailureKind::Throttled
        );
        assert_eq!(
            classify(&status("500 Internal Server Error", "InternalError")),
            FailureKind::ServerError
        );
        assert_eq!(
            classify(&status("502 Bad Gateway", "")),
            FailureKind::ServerError
        );
        assert_eq!(
            classify(&status("408 Request Timeout", "")),
            FailureKind::Timeout
        );
        assert_eq!(classify(&status("400 Bad Request", "")), FailureKind::Fatal);
        assert_eq!(
            classify(&status("416 Range Not Satisfiable", "")),
            FailureKind::RangeNotSatisfiable
        );
        let body = generic(Box::new(Text(
            "Error performing POST x - Server returned error response: <Code>SlowDown</Code>"
                .into(),
        )));
        assert_eq!(classify(&body), FailureKind::Throttled);
    }

    #[test]
    fn classifies_mapped_variants_and_never_retries_them() {
        let src = || -> BoxError { Box::new(Text("x".into())) };
        let cases = [
            (
                object_store::Error::NotFound {
                    path: "p".into(),
                    source: src(),
                },
                FailureKind::NotFound,
            ),
            (
                object_store::Error::AlreadyExists {
                    path: "p".into(),
                    source: src(),
                },
                FailureKind::AlreadyExists,
            ),
            (
                object_store::Error::Precondition {
                    path: "p".into(),
                    source: src(),
                },
                FailureKind::Precondition,
            ),
            (
                object_store::Error::PermissionDenied {
                    path: "p".into(),
                    source: src(),
                },
                FailureKind::Permission,
            ),
            (
                object_store::Error::Unauthenticated {
                    path: "p".into(),
                    source: src(),
                },
                FailureKind::Permission,
            ),
            (
                object_store::Error::NotImplemented {
                    operation: "x".into(),
                    implementer: "y".into(),
                },
                FailureKind::Fatal,
            ),
        ];
        for (error, expected) in cases {
            let kind = classify(&error);
            assert_eq!(kind, expected, "{error}");
            assert!(!kind.is_transient(), "{error}");
        }
        // A 409 conflict surfaces as AlreadyExists but is a retryable conflict.
        let conflict = object_store::Error::AlreadyExists {
            path: "p".into(),
            source: Box::new(Text(
                "Server returned non-2xx status code: 409 Conflict: ConditionalRequestConflict"
                    .into(),
            )),
        };
        assert_eq!(classify(&conflict), FailureKind::Conflict);
        assert!(FailureKind::Conflict.is_transient());
    }

    #[test]
    fn classifies_io_errors() {
        let io = |kind| generic(Box::new(std::io::Error::new(kind, "io")));
        assert_eq!(
            classify(&io(std::io::ErrorKind::ConnectionReset)),
            FailureKind::Interrupted
        );
        assert_eq!(
            classify(&io(std::io::ErrorKind::TimedOut)),
            FailureKind::Timeout
        );
        assert_eq!(
            classify(&io(std::io::ErrorKind::PermissionDenied)),
            FailureKind::Fatal
        );
        assert_eq!(
            classify(&io(std::io::ErrorKind::StorageFull)),
            FailureKind::Fatal
        );
    }

    #[test]
    fn ambiguity() {
        assert!(FailureKind::Timeout.may_have_applied());
        assert!(FailureKind::ServerError.may_have_applied());
        assert!(FailureKind::Interrupted.may_have_applied());
        assert!(!FailureKind::Connect.may_have_applied());
        assert!(!FailureKind::Throttled.may_have_applied());
        assert!(!FailureKind::Conflict.may_have_applied());
    }

    #[test]
    fn backoff_is_capped_exponential_with_full_jitter() {
        let policy = RetryPolicy::default();
        assert_eq!(backoff_cap(&policy, 1), Duration::from_millis(50));
        assert_eq!(backoff_cap(&policy, 2), Duration::from_millis(100));
        assert_eq!(backoff_cap(&policy, 5), Duration::from_millis(800));
        assert_eq!(backoff_cap(&policy, 8), Duration::from_secs(5));
        assert_eq!(backoff_cap(&policy, 40), Duration::from_secs(5));
        for retry in 1..10 {
            for _ in 0..100 {
                assert!(backoff_delay(&policy, retry) <= backoff_cap(&policy, retry));
            }
        }
        let zero = RetryPolicy {
            base_delay: Duration::ZERO,
            ..RetryPolicy::default()
        };
        assert_eq!(backoff_delay(&zero, 3), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn retrier_honours_attempts_and_deadline() {
        let metrics = ObjectMetrics::default();
        let policy = RetryPolicy::default();
        let mut r = Retrier::new(&policy, &metrics, Op::Get, "a/b");
        let transient = || Failure::new(FailureKind::Throttled, "slow down");
        let mut retries = 0;
        while r.retry_after(&transient()).await {
            retries += 1;
        }
        assert_eq!(retries, 5);
        assert_eq!(r.attempts(), 6);
        assert_eq!(metrics.snapshot().get.retries, 5);
        match r.into_error(transient()) {
            ObjectError::Transient {
                op, path, attempts, ..
            } => {
                assert_eq!((op, path.as_str(), attempts), (Op::Get, "a/b", 6));
            }
            other => panic!("{other:?}"),
        }

        // Non-transient: no retry.
        let mut r = Retrier::new(&policy, &metrics, Op::Head, "x");
        assert!(
            !r.retry_after(&Failure::new(FailureKind::NotFound, "nf"))
                .await
        );
        assert!(matches!(
            r.into_error(Failure::new(FailureKind::NotFound, "nf")),
            ObjectError::NotFound { op: Op::Head, .. }
        ));

        // Deadline: with a huge attempt budget, retries stop once the deadline is near.
        let policy = RetryPolicy {
            max_attempts: 1000,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(1),
            deadline: Duration::from_secs(10),
        };
        let start = Instant::now();
        let mut r = Retrier::new(&policy, &metrics, Op::Put, "x");
        while r.retry_after(&transient()).await {}
        assert!(start.elapsed() <= Duration::from_secs(10));
        assert!(r.attempts() < 1000);
    }
}
