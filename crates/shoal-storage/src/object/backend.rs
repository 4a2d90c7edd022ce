//! Building the `object_store` client for a [`BackendConfig`], and the bounded probe that
//! checks it is usable before [`Bucket::open`](super::Bucket::open) returns.
//!
//! Remote clients are built with `object_store`'s retries off (`max_retries = 0`) — the
//! retry layer above owns retries — and with connect and request timeouts, so no request
//! can hang. S3 is built with conditional put (`If-None-Match: *`) enabled, which
//! `create_if_absent` relies on.

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, S3ConditionalPut};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::list::PaginatedListStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::multipart::MultipartStore;
use object_store::{ClientOptions, ObjectStore, RetryConfig};

use super::config::{BackendConfig, ObjectStoreConfig};
use super::error::ObjectError;
use super::path::KeySpace;

/// The built client(s) of one store.
pub(crate) struct Backend {
    pub(crate) store: Arc<dyn ObjectStore>,
    /// Low-level multipart API (lets one part be retried); `None` for the local disk.
    pub(crate) multipart: Option<Arc<dyn MultipartStore>>,
    /// The local-disk store, whose multipart uploads we write ourselves (see
    /// `local_upload`); `None` for every other backend.
    pub(crate) local: Option<Arc<LocalFileSystem>>,
    /// Paginated listing, used by the probe; `None` for local and memory.
    pub(crate) lister: Option<Arc<dyn PaginatedListStore>>,
    pub(crate) keys: KeySpace,
    /// Human-readable location, e.g. `s3://bucket/prefix`.
    pub(crate) location: String,
    /// Bucket or container name, for `BucketNotFound`.
    pub(crate) bucket: String,
    /// Endpoint, for `Unreachable`.
    pub(crate) endpoint: String,
    /// Whether the store serves suffix ranges (`bytes=-n`); Azure does not.
    pub(crate) suffix_ranges: bool,
}

impl Backend {
    pub(crate) fn memory() -> Backend {
        let store = Arc::new(InMemory::new());
        Backend {
            store: store.clone(),
            multipart: Some(store),
            local: None,
            lister: None,
            keys: KeySpace::new(""),
            location: "memory://".to_owned(),
            bucket: "memory".to_owned(),
            endpoint: "memory".to_owned(),
            suffix_ranges: true,
        }
    }

    /// Builds the client; `config` must be validated.
    pub(crate) async fn build(config: &ObjectStoreConfig) -> Result<Backend, ObjectError> {
        let retry = RetryConfig {
            max_retries: 0,
            retry_timeout: config.request_timeout,
            ..RetryConfig::default()
        };
        let client_options = |allow_http: bool| {
            ClientOptions::new()
                .with_connect_timeout(config.connect_timeout)
                .with_timeout(config.request_timeout)
                .with_allow_http(allow_http)
        };
        let built = |key: &str, e: object_store::Error| {
            ObjectError::invalid_config(key, format!("cannot build the client: {e}"))
        };
        match &config.backend {
            BackendConfig::Memory => Ok(Backend::memory()),
            BackendConfig::Local(local) => {
                let root = &local.root;
                tokio::fs::create_dir_all(root).await.map_err(|e| {
                    ObjectError::invalid_config(
                        "backend.root",
                        format!("cannot create directory {}: {e}", root.display()),
                    )
                })?;
                let store = LocalFileSystem::new_with_prefix(root)
                    .map_err(|e| built("backend.root", e))?
                    .with_fsync(true);
                let store = Arc::new(store);
                Ok(Backend {
                    store: store.clone(),
                    multipart: None,
                    local: Some(store),
                    lister: None,
                    keys: KeySpace::new(""),
                    location: format!("file://{}", root.display()),
                    bucket: root.display().to_string(),
                    endpoint: root.display().to_string(),
                    suffix_ranges: true,
                })
            }
            BackendConfig::S3(s3) => {
                // `with_client_options` replaces every client option `from_env`
                // read, so the ones the environment may set are carried over
                // here: the config turns them on, the environment too.
                let allow_http = s3.allow_http || env_flag("AWS_ALLOW_HTTP");
                let endpoint = s3
                    .endpoint
                    .clone()
                    .or_else(|| env_value(&["AWS_ENDPOINT", "AWS_ENDPOINT_URL"]));
                if let Some(e) = &endpoint
                    && e.starts_with("http://")
                    && !allow_http
                {
                    return Err(ObjectError::invalid_config(
                        "allow_http",
                        format!(
                            "the endpoint {e} is plain http: allow it with \
                             object_store.allow_http = true or AWS_ALLOW_HTTP=true \
                             (local test servers only)"
                        ),
                    ));
                }
                let mut builder = AmazonS3Builder::from_env()
                    .with_bucket_name(&s3.bucket)
                    .with_client_options(client_options(allow_http))
                    .with_retry(retry)
                    .with_conditional_put(S3ConditionalPut::ETagMatch);
                if s3.virtual_hosted_style {
                    builder = builder.with_virtual_hosted_style_request(true);
                }
                if let Some(region) = &s3.region {
                    builder = builder.with_region(region);
                }
                if let Some(endpoint) = &s3.endpoint {
                    builder = builder.with_endpoint(endpoint);
                }
                if let (Some(id), Some(secret)) = (&s3.access_key_id, &s3.secret_access_key) {
                    builder = builder
                        .with_access_key_id(id)
                        .with_secret_access_key(secret.expose());
                    if let Some(token) = &s3.session_token {
                        builder = builder.with_token(token.expose());
                    }
                }
                let store = Arc::new(builder.build().map_err(|e| built("backend", e))?);
                let endpoint = endpoint.unwrap_or_else(|| {
                    format!(
                        "https://s3.{}.amazonaws.com",
                        s3.region.as_deref().unwrap_or("<AWS_REGION>")
                    )
                });
                Ok(Backend {
                    store: store.clone(),
                    multipart: Some(store.clone()),
                    local: None,
                    lister: Some(store),
                    keys: KeySpace::new(&s3.prefix),
                    location: location("s3", &s3.bucket, &s3.prefix),
                    bucket: s3.bucket.clone(),
                    endpoint,
                    suffix_ranges: true,
                })
            }
            BackendConfig::Gcs(gcs) => {
                let mut builder = GoogleCloudStorageBuilder::from_env()
                    .with_bucket_name(&gcs.bucket)
                    .with_client_options(client_options(false))
                    .with_retry(retry);
                if let Some(path) = &gcs.service_account_path {
                    builder = builder.with_service_account_path(path.display().to_string());
                }
                let store = Arc::new(builder.build().map_err(|e| built("backend", e))?);
                Ok(Backend {
                    store: store.clone(),
                    multipart: Some(store.clone()),
                    local: None,
                    lister: Some(store),
                    keys: KeySpace::new(&gcs.prefix),
                    location: location("gs", &gcs.bucket, &gcs.prefix),
                    bucket: gcs.bucket.clone(),
                    endpoint: "https://storage.googleapis.com".to_owned(),
                    suffix_ranges: true,
                })
            }
            BackendConfig::Azure(azure) => {
                // As for S3: the client options replace what `from_env` read.
                // An emulator (Azurite) is reached over plain http.
                let emulator = azure.use_emulator || env_flag("AZURE_STORAGE_USE_EMULATOR");
                let allow_http = emulator
                    || azure
                        .endpoint
                        .as_deref()
                        .is_some_and(|e| e.starts_with("http://"))
                    || env_flag("AZURE_ALLOW_HTTP");
                let mut builder = MicrosoftAzureBuilder::from_env()
                    .with_account(&azure.account)
                    .with_container_name(&azure.container)
                    .with_client_options(client_options(allow_http))
                    .with_retry(retry);
                if emulator {
                    builder = builder.with_use_emulator(true);
                }
                if let Some(endpoint) = &azure.endpoint {
                    builder = builder.with_endpoint(endpoint.clone());
                }
                if let Some(key) = &azure.access_key {
                    builder = builder.with_access_key(key.expose());
                }
                let store = Arc::new(builder.build().map_err(|e| built("backend", e))?);
                Ok(Backend {
                    store: store.clone(),
                    multipart: Some(store.clone()),
                    local: None,
                    lister: Some(store),
                    keys: KeySpace::new(&azure.prefix),
                    location: location(
                        "az",
                        &format!("{}/{}", azure.account, azure.container),
                        &azure.prefix,
                    ),
                    bucket: azure.container.clone(),
                    endpoint: azure.endpoint.clone().unwrap_or_else(|| {
                        if emulator {
                            "http://127.0.0.1:10000".to_owned()
                        } else {
                            format!("https://{}.blob.core.windows.net", azure.account)
                        }
                    }),
                    suffix_ranges: false,
                })
            }
        }
    }
}

/// True if environment variable `name` is set to a true value (`true`, `1`,
/// `yes`, `on`; any case), as `object_store` reads its own flags.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "true" | "1" | "yes" | "on"
        )
    })
}

/// The first of `names` set in the environment, if any.
fn env_value(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
}

fn location(scheme: &str, bucket: &str, prefix: &str) -> String {
    if prefix.is_empty() {
        format!("{scheme}://{bucket}")
    } else {
        format!("{scheme}://{bucket}/{prefix}")
    }
}

/// Upper bound on the whole probe, whatever the configured request timeout.
pub(crate) fn probe_timeout(config: &ObjectStoreConfig) -> Duration {
    (config.connect_timeout + Duration::from_secs(5))
        .min(config.request_timeout + config.connect_timeout)
}
