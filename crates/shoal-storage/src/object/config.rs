//! [`ObjectStoreConfig`]: where the bucket lives and how requests to it behave.
//!
//! The config is plain data, read from TOML (the `[object_store]` section) or built in
//! code. [`ObjectStoreConfig::validate`] checks every value and names the offending key in
//! [`ObjectError::InvalidConfig`]; [`Bucket::open`](super::Bucket::open) calls it first.
//!
//! Durations accept either an integer number of milliseconds (`deadline = 60000`) or a
//! humantime string (`deadline = "60s"`, `base_delay = "50ms"`, `"1m 30s"`).
//!
//! ```toml
//! [object_store]
//! backend = { type = "s3", bucket = "shoal", region = "us-east-1", prefix = "prod" }
//! upload_part_size = 8388608          # bytes; 5 MiB ..= 5 GiB
//! connect_timeout = "3s"
//! request_timeout = "30s"
//!
//! [object_store.retry]
//! max_attempts = 6
//! base_delay = "50ms"
//! max_delay = "5s"
//! deadline = "60s"
//!
//! [object_store.emulate]                # optional: make a laptop behave like S3
//! latency = "30ms"
//! jitter = "10ms"
//! bandwidth_bytes_per_sec = 90000000
//! ```

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use super::error::ObjectError;

/// S3's minimum size for every multipart part but the last.
pub const MIN_PART_SIZE: u64 = 5 * 1024 * 1024;
/// S3's maximum part size.
pub const MAX_PART_SIZE: u64 = 5 * 1024 * 1024 * 1024;
/// Default multipart part size (8 MiB).
pub const DEFAULT_PART_SIZE: u64 = 8 * 1024 * 1024;

/// Everything needed to open a [`Bucket`](super::Bucket).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectStoreConfig {
    /// Which store, and where in it.
    pub backend: BackendConfig,
    /// How transient failures are retried.
    #[serde(default)]
    pub retry: RetryPolicy,
    /// Emulated latency and bandwidth added to every request (benchmarks); off if absent.
    #[serde(default)]
    pub emulate: Option<Emulation>,
    /// Part size of streaming uploads in bytes (default 8 MiB; 5 MiB ..= 5 GiB). Objects
    /// smaller than one part are sent as a single PUT.
    #[serde(default = "default_part_size")]
    pub upload_part_size: u64,
    /// Bound on establishing a connection to a remote store (default 3 s).
    #[serde(default = "default_connect_timeout", deserialize_with = "duration")]
    pub connect_timeout: Duration,
    /// Bound on one whole remote request, including its body (default 30 s). Must
    /// comfortably exceed the transfer time of one upload part.
    #[serde(default = "default_request_timeout", deserialize_with = "duration")]
    pub request_timeout: Duration,
}

fn default_part_size() -> u64 {
    DEFAULT_PART_SIZE
}
fn default_connect_timeout() -> Duration {
    Duration::from_secs(3)
}
fn default_request_timeout() -> Duration {
    Duration::from_secs(30)
}

/// The store behind a bucket. In TOML, `type` selects the variant.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum BackendConfig {
    /// A directory on a local disk; the embedded default. Writes are fsync'd; the
    /// directory is created if missing.
    Local(LocalConfig),
    /// Process memory; for tests. Nothing survives the process.
    Memory,
    /// Amazon S3 or an S3-compatible service (MinIO, moto, R2, ...).
    S3(S3Config),
    /// Google Cloud Storage.
    Gcs(GcsConfig),
    /// Azure Blob Storage.
    Azure(AzureConfig),
}

/// `type = "local"`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalConfig {
    /// Root directory; every object is a file below it.
    pub root: PathBuf,
}

/// `type = "s3"`. Unset credentials and region come from the usual `AWS_*` environment
/// variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// `AWS_REGION`, ...), then from instance metadata / web identity.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    /// Bucket name.
    pub bucket: String,
    /// Region, e.g. `us-east-1`.
    #[serde(default)]
    pub region: Option<String>,
    /// Endpoint of an S3-compatible service, e.g. `http://127.0.0.1:9000`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Key prefix inside the bucket (no leading or trailing `/`); empty for the root.
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub access_key_id: Option<String>,
    #[serde(default)]
    pub secret_access_key: Option<Secret>,
    #[serde(default)]
    pub session_token: Option<Secret>,
    /// Allow plain `http://` endpoints (local test servers only).
    #[serde(default)]
    pub allow_http: bool,
    /// Use `https://<bucket>.<endpoint>` instead of `https://<endpoint>/<bucket>`.
    #[serde(default)]
    pub virtual_hosted_style: bool,
}

/// `type = "gcs"`. Unset credentials come from `GOOGLE_*` environment variables or the
/// metadata server.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcsConfig {
    pub bucket: String,
    /// Key prefix inside the bucket; empty for the root.
    #[serde(default)]
    pub prefix: String,
    /// Path of a service account JSON key file.
    #[serde(default)]
    pub service_account_path: Option<PathBuf>,
}

/// `type = "azure"`. Unset credentials come from `AZURE_*` environment variables.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzureConfig {
    /// Storage account name.
    pub account: String,
    /// Container name (Azure's bucket).
    pub container: String,
    /// Key prefix inside the container; empty for the root.
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub access_key: Option<Secret>,
    /// Blob endpoint, e.g. `http://127.0.0.1:10000/devstoreaccount1` for Azurite;
    /// default `https://<account>.blob.core.windows.net`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Use the local storage emulator (Azurite) with its well-known account and
    /// key; also `AZURE_STORAGE_USE_EMULATOR=true`.
    #[serde(default)]
    pub use_emulator: bool,
}

/// A credential. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for handing to the client library.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::new(value)
    }
}

/// Retries of transient failures: exponential backoff with full jitter, at most
/// `max_attempts` attempts (the first included) and no new attempt once `deadline` has
/// passed since the first. The delay before retry `n` (n ≥ 1) is uniform in
/// `[0, min(max_delay, base_delay * 2^(n-1))]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryPolicy {
    /// Attempts in total, including the first (≥ 1; 1 disables retries). Default 6.
    pub max_attempts: u32,
    /// Backoff of the first retry before jitter. Default 50 ms.
    #[serde(deserialize_with = "duration")]
    pub base_delay: Duration,
    /// Cap on any one backoff. Default 5 s.
    #[serde(deserialize_with = "duration")]
    pub max_delay: Duration,
    /// No retry starts later than this after the first attempt. Default 60 s.
    #[serde(deserialize_with = "duration")]
    pub deadline: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_secs(5),
            deadline: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn no_retries() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    fn validate(&self) -> Result<(), ObjectError> {
        if self.max_attempts == 0 {
            return Err(ObjectError::invalid_config(
                "retry.max_attempts",
                "must be at least 1 (1 disables retries)",
            ));
        }
        if self.base_delay > self.max_delay {
            return Err(ObjectError::invalid_config(
                "retry.base_delay",
                format!(
                    "{:?} is larger than retry.max_delay ({:?})",
                    self.base_delay, self.max_delay
                ),
            ));
        }
        if self.deadline.is_zero() {
            return Err(ObjectError::invalid_config(
                "retry.deadline",
                "must be greater than zero",
            ));
        }
        Ok(())
    }
}

/// Emulated network behaviour added to every request, on any backend: the request waits
/// `latency ± jitter` (uniform) before its first byte, then `bytes / bandwidth` for its
/// payload. The bandwidth is per request, as S3's is per connection.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Emulation {
    /// Time to first byte. Default 30 ms.
    #[serde(deserialize_with = "duration")]
    pub latency: Duration,
    /// Uniform jitter around `latency` (≤ latency). Default 10 ms.
    #[serde(deserialize_with = "duration")]
    pub jitter: Duration,
    /// Payload bandwidth of one request in bytes per second; 0 means unlimited. Default
    /// 90 MB/s.
    pub bandwidth_bytes_per_sec: u64,
}

impl Default for Emulation {
    fn default() -> Self {
        Emulation {
            latency: Duration::from_millis(30),
            jitter: Duration::from_millis(10),
            bandwidth_bytes_per_sec: 90_000_000,
        }
    }
}

impl Emulation {
    fn validate(&self) -> Result<(), ObjectError> {
        if self.jitter > self.latency {
            return Err(ObjectError::invalid_config(
                "emulate.jitter",
                format!(
                    "{:?} is larger than emulate.latency ({:?})",
                    self.jitter, self.latency
                ),
            ));
        }
        Ok(())
    }
}

impl ObjectStoreConfig {
    /// A config for `backend` with every other setting at its default.
    pub fn new(backend: BackendConfig) -> ObjectStoreConfig {
        ObjectStoreConfig {
            backend,
            retry: RetryPolicy::default(),
            emulate: None,
            upload_part_size: DEFAULT_PART_SIZE,
            connect_timeout: default_connect_timeout(),
            request_timeout: default_request_timeout(),
        }
    }

    /// A local directory store.
    pub fn local(root: impl Into<PathBuf>) -> ObjectStoreConfig {
        ObjectStoreConfig::new(BackendConfig::Local(LocalConfig { root: root.into() }))
    }

    /// An in-memory store.
    pub fn memory() -> ObjectStoreConfig {
        ObjectStoreConfig::new(BackendConfig::Memory)
    }

    /// Parses a store URL: `file:///abs/path`, `memory://`, `s3://bucket[/prefix]` or
    /// `gs://bucket[/prefix]`. Everything else about the store is left at its default (S3
    /// region and credentials then come from the environment).
    pub fn from_url(url: &str) -> Result<ObjectStoreConfig, ObjectError> {
        let bad = |message: String| ObjectError::invalid_config("url", message);
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(bad(format!(
                "{url:?} is not a URL; expected file:///abs/path, memory://, \
                 s3://bucket/prefix, gs://bucket/prefix or az://container/prefix"
            )));
        };
        let split_bucket = |rest: &str| -> Result<(String, String), ObjectError> {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad(format!("{url:?} names no bucket")));
            }
            Ok((bucket.to_owned(), prefix.trim_matches('/').to_owned()))
        };
        let backend = match scheme {
            "file" => {
                if !rest.starts_with('/') {
                    return Err(bad(format!(
                        "{url:?}: a file URL needs an absolute path (file:///abs/path)"
                    )));
                }
                BackendConfig::Local(LocalConfig { root: rest.into() })
            }
            "memory" => {
                if !rest.trim_matches('/').is_empty() {
                    return Err(bad(format!("{url:?}: memory:// takes no path")));
                }
                BackendConfig::Memory
            }
            "s3" | "s3a" => {
                let (bucket, prefix) = split_bucket(rest)?;
                BackendConfig::S3(S3Config {
                    bucket,
                    prefix,
                    ..S3Config::default()
                })
            }
            "gs" => {
                let (bucket, prefix) = split_bucket(rest)?;
                BackendConfig::Gcs(GcsConfig {
                    bucket,
                    prefix,
                    service_account_path: None,
                })
            }
            "az" | "azure" => {
                // az://<container>/<prefix>; the account comes from the
                // environment (the URL has no room for it).
                let (container, prefix) = split_bucket(rest)?;
                let emulator = std::env::var("AZURE_STORAGE_USE_EMULATOR")
                    .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1"));
                let account = ["AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"]
                    .iter()
                    .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
                    .or_else(|| emulator.then(|| "devstoreaccount1".to_owned()))
                    .ok_or_else(|| {
                        bad(format!(
                            "{url:?}: an az:// URL names the container; set the storage \
                             account in AZURE_STORAGE_ACCOUNT_NAME"
                        ))
                    })?;
                BackendConfig::Azure(AzureConfig {
                    account,
                    container,
                    prefix,
                    ..AzureConfig::default()
                })
            }
            other => {
                return Err(bad(format!(
                    "unsupported scheme {other:?}; expected file, memory, s3, gs or az"
                )));
            }
        };
        let config = ObjectStoreConfig::new(backend);
        config.validate()?;
        Ok(config)
    }

    /// Checks every value; the error names the offending key.
    pub fn validate(&self) -> Result<(), ObjectError> {
        self.retry.validate()?;
        if let Some(emulate) = &self.emulate {
            emulate.validate()?;
        }
        if !(MIN_PART_SIZE..=MAX_PART_SIZE).contains(&self.upload_part_size) {
            return Err(ObjectError::invalid_config(
                "upload_part_size",
                format!(
                    "{} bytes is outside {MIN_PART_SIZE}..={MAX_PART_SIZE} (S3 needs parts of \
                     at least 5 MiB and at most 5 GiB)",
                    self.upload_part_size
                ),
            ));
        }
        if self.connect_timeout.is_zero() {
            return Err(ObjectError::invalid_config(
                "connect_timeout",
                "must be greater than zero",
            ));
        }
        if self.request_timeout.is_zero() {
            return Err(ObjectError::invalid_config(
                "request_timeout",
                "must be greater than zero",
            ));
        }
        match &self.backend {
            BackendConfig::Memory => Ok(()),
            BackendConfig::Local(local) => {
                if local.root.as_os_str().is_empty() {
                    return Err(ObjectError::invalid_config(
                        "backend.root",
                        "must name a directory",
                    ));
                }
                Ok(())
            }
            BackendConfig::S3(s3) => {
                validate_bucket_name("backend.bucket", &s3.bucket)?;
                validate_prefix(&s3.prefix)?;
                if let Some(endpoint) = &s3.endpoint {
                    let http = endpoint.starts_with("http://");
                    if !http && !endpoint.starts_with("https://") {
                        return Err(ObjectError::invalid_config(
                            "backend.endpoint",
                            format!("{endpoint:?} must start with http:// or https://"),
                        ));
                    }
                    if http && !s3.allow_http {
                        return Err(ObjectError::invalid_config(
                            "backend.allow_http",
                            format!(
                                "endpoint {endpoint:?} is plain http; set allow_http = true \
                                 (only for local test servers) or use https"
                            ),
                        ));
                    }
                }
                if let Some(region) = &s3.region
                    && region.trim().is_empty()
                {
                    return Err(ObjectError::invalid_config(
                        "backend.region",
                        "must not be empty (omit it to use AWS_REGION)",
                    ));
                }
                if s3.access_key_id.is_some() != s3.secret_access_key.is_some() {
                    return Err(ObjectError::invalid_config(
                        "backend.secret_access_key",
                        "access_key_id and secret_access_key must be set together",
                    ));
                }
                if s3.session_token.is_some() && s3.access_key_id.is_none() {
                    return Err(ObjectError::invalid_config(
                        "backend.session_token",
                        "a session token needs access_key_id and secret_access_key",
                    ));
                }
                Ok(())
            }
            BackendConfig::Gcs(gcs) => {
                validate_bucket_name("backend.bucket", &gcs.bucket)?;
                validate_prefix(&gcs.prefix)
            }
            BackendConfig::Azure(azure) => {
                validate_bucket_name("backend.account", &azure.account)?;
                validate_bucket_name("backend.container", &azure.container)?;
                validate_prefix(&azure.prefix)
            }
        }
    }
}

fn validate_bucket_name(key: &str, name: &str) -> Result<(), ObjectError> {
    if name.is_empty() {
        return Err(ObjectError::invalid_config(key, "must not be empty"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
    {
        return Err(ObjectError::invalid_config(
            key,
            format!("{name:?} contains {c:?}; use letters, digits, '-', '.' and '_'"),
        ));
    }
    Ok(())
}

fn validate_prefix(prefix: &str) -> Result<(), ObjectError> {
    if prefix.is_empty() {
        return Ok(());
    }
    super::path::validate(prefix).map_err(|e| match e {
        ObjectError::InvalidPath { reason, .. } => {
            ObjectError::invalid_config("backend.prefix", format!("{prefix:?}: {reason}"))
        }
        other => other,
    })
}

/// Deserializes a duration from integer milliseconds or a humantime string.
fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Millis(u64),
        Text(String),
    }
    match Raw::deserialize(deserializer)? {
        Raw::Millis(ms) => Ok(Duration::from_millis(ms)),
        Raw::Text(text) => humantime::parse_duration(text.trim()).map_err(|e| {
            serde::de::Error::custom(format!(
                "invalid duration {text:?}: {e} (use milliseconds, or e.g. \"50ms\", \"5s\")"
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ObjectStoreConfig {
        match toml::from_str::<ObjectStoreConfig>(text) {
            Ok(config) => config,
            Err(e) => panic!("parse failed: {e}\n{text}"),
        }
    }

    fn invalid_key(config: &ObjectStoreConfig) -> String {
        match config.validate() {
            Err(ObjectError::InvalidConfig { key, .. }) => key,
            other => panic!("expected InvalidConfig, got {other:?}"),
        }
    }

    #[test]
    fn parses_local_with_defaults() {
        let c = parse(
            r#"
            backend = { type = "local", root = "/var/lib/shoal" }
            "#,
        );
        match &c.backend {
            BackendConfig::Local(l) => assert_eq!(l.root, PathBuf::from("/var/lib/shoal")),
            other => panic!("{other:?}"),
        }
        assert_eq!(c.retry, RetryPolicy::default());
        assert!(c.emulate.is_none());
        assert_eq!(c.upload_part_size, DEFAULT_PART_SIZE);
        assert_eq!(c.connect_timeout, Duration::from_secs(3));
        c.validate().expect("valid");
    }

    #[test]
    fn parses_s3_retry_and_emulation() {
        let c = parse(
            r#"
            upload_part_size = 16777216
            request_timeout = "45s"
            [backend]
            type = "s3"
            bucket = "shoal-data"
            region = "eu-west-1"
            endpoint = "http://127.0.0.1:9000"
            prefix = "prod/cluster-1"
            access_key_id = "AKIA"
            secret_access_key = "very-secret"
            allow_http = true
            [retry]
            max_attempts = 3
            base_delay = 20
            max_delay = "2s"
            deadline = "1m 30s"
            [emulate]
            latency = "25ms"
            "#,
        );
        let BackendConfig::S3(s3) = &c.backend else {
            panic!("{:?}", c.backend)
        };
        assert_eq!(s3.bucket, "shoal-data");
        assert_eq!(s3.region.as_deref(), Some("eu-west-1"));
        assert_eq!(s3.prefix, "prod/cluster-1");
        assert!(s3.allow_http);
        assert!(!s3.virtual_hosted_style);
        assert_eq!(
            s3.secret_access_key.as_ref().map(Secret::expose),
            Some("very-secret")
        );
        assert!(!format!("{c:?}").contains("very-secret"), "secret leaked");
        assert_eq!(c.retry.max_attempts, 3);
        assert_eq!(c.retry.base_delay, Duration::from_millis(20));
        assert_eq!(c.retry.max_delay, Duration::from_secs(2));
        assert_eq!(c.retry.deadline, Duration::from_secs(90));
        let e = c.emulate.clone().expect("emulate");
        assert_eq!(e.latency, Duration::from_millis(25));
        assert_eq!(e.jitter, Duration::from_millis(10));
        assert_eq!(e.bandwidth_bytes_per_sec, 90_000_000);
        assert_eq!(c.request_timeout, Duration::from_secs(45));
        c.validate().expect("valid");
    }

    #[test]
    fn parses_gcs_azure_memory() {
        let c = parse(
            r#"backend = { type = "gcs", bucket = "b", prefix = "p", service_account_path = "/k.json" }"#,
        );
        assert!(matches!(c.backend, BackendConfig::Gcs(ref g) if g.bucket == "b"));
        c.validate().expect("valid");
        let c = parse(
            r#"backend = { type = "azure", account = "acct", container = "c", access_key = "k" }"#,
        );
        assert!(matches!(c.backend, BackendConfig::Azure(ref a) if a.container == "c"));
        c.validate().expect("valid");
        let c = parse(r#"backend = { type = "memory" }"#);
        assert!(matches!(c.backend, BackendConfig::Memory));
    }

    #[test]
    fn rejects_unknown_fields_and_bad_durations() {
        for text in [
            r#"backend = { type = "s3", bucket = "b", bukket = "x" }"#,
            r#"backend = { type = "nfs" }"#,
            "backend = { type = \"memory\" }\n[retry]\nbase_delay = \"fast\"",
            "backend = { type = \"memory\" }\nunknown = 1",
        ] {
            assert!(
                toml::from_str::<ObjectStoreConfig>(text).is_err(),
                "accepted {text}"
            );
        }
    }

    #[test]
    fn validation_names_the_key() {
        let mut c = ObjectStoreConfig::memory();
        c.retry.max_attempts = 0;
        assert_eq!(invalid_key(&c), "retry.max_attempts");

        let mut c = ObjectStoreConfig::memory();
        c.retry.base_delay = Duration::from_secs(10);
        assert_eq!(invalid_key(&c), "retry.base_delay");

        let mut c = ObjectStoreConfig::memory();
        c.upload_part_size = 1024;
        assert_eq!(invalid_key(&c), "upload_part_size");

        let mut c = ObjectStoreConfig::memory();
        c.emulate = Some(Emulation {
            latency: Duration::from_millis(1),
            ..Emulation::default()
        });
        assert_eq!(invalid_key(&c), "emulate.jitter");

        let s3 = |f: &dyn Fn(&mut S3Config)| {
            let mut cfg = S3Config {
                bucket: "b".into(),
                ..S3Config::default()
            };
            f(&mut cfg);
            ObjectStoreConfig::new(BackendConfig::S3(cfg))
        };
        assert_eq!(invalid_key(&s3(&|c| c.bucket.clear())), "backend.bucket");
        assert_eq!(
            invalid_key(&s3(&|c| c.bucket = "a/b".into())),
            "backend.bucket"
        );
        assert_eq!(
            invalid_key(&s3(&|c| c.endpoint = Some("127.0.0.1:9000".into()))),
            "backend.endpoint"
        );
        assert_eq!(
            invalid_key(&s3(&|c| c.endpoint = Some("http://127.0.0.1:9000".into()))),
            "backend.allow_http"
        );
        assert_eq!(
            invalid_key(&s3(&|c| c.prefix = "a//b".into())),
            "backend.prefix"
        );
        assert_eq!(
            invalid_key(&s3(&|c| c.access_key_id = Some("k".into()))),
            "backend.secret_access_key"
        );
        assert_eq!(invalid_key(&ObjectStoreConfig::local("")), "backend.root");
    }

    #[test]
    fn from_url() {
        let c = ObjectStoreConfig::from_url("s3://bucket/some/prefix/").expect("s3");
        let BackendConfig::S3(s3) = &c.backend else {
            panic!()
        };
        assert_eq!(
            (s3.bucket.as_str(), s3.prefix.as_str()),
            ("bucket", "some/prefix")
        );

        let c = ObjectStoreConfig::from_url("file:///tmp/shoal").expect("file");
        assert!(
            matches!(&c.backend, BackendConfig::Local(l) if l.root == std::path::Path::new("/tmp/shoal"))
        );

        let c = ObjectStoreConfig::from_url("memory://").expect("memory");
        assert!(matches!(c.backend, BackendConfig::Memory));

        let c = ObjectStoreConfig::from_url("gs://b").expect("gs");
        assert!(matches!(&c.backend, BackendConfig::Gcs(g) if g.prefix.is_empty()));

        for bad in [
            "ftp://x",
            "s3://",
            "file://relative",
            "nonsense",
            "s3://b/../x",
        ] {
            assert!(ObjectStoreConfig::from_url(bad).is_err(), "accepted {bad}");
        }
    }
}
