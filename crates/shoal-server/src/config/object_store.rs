//! `[object_store]`: where durable data lives, as a URL plus the settings a
//! URL has no room for (endpoint, region, credentials, plain http, emulator).
//! Each setting given here wins over the environment (`AWS_*`, `AZURE_*`);
//! one that does not apply to the URL's store is refused, naming the key.

use serde::Deserialize;
use shoal_storage::object::{
    AzureConfig, BackendConfig, Emulation, ObjectStoreConfig, S3Config, Secret,
};
use std::path::Path;

/// `[object_store]`
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ObjectStoreSection {
    /// `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix`,
    /// `file:///path`, or empty for `<data_dir>/objects` (default).
    pub url: String,
    /// S3 or Azure: the service's endpoint, e.g. `http://127.0.0.1:9000`
    /// (MinIO, Ceph RGW, moto) or Azurite's `http://127.0.0.1:10000/devstoreaccount1`.
    pub endpoint: Option<String>,
    /// S3: the region (else `AWS_REGION`).
    pub region: Option<String>,
    /// S3 or Azure: allow a plain `http://` endpoint (else `AWS_ALLOW_HTTP`).
    pub allow_http: bool,
    /// S3: `https://<bucket>.<endpoint>` instead of `https://<endpoint>/<bucket>`.
    pub virtual_hosted_style: bool,
    /// S3: access key id (else `AWS_ACCESS_KEY_ID`, then instance credentials).
    pub access_key_id: Option<String>,
    /// S3: secret access key (else `AWS_SECRET_ACCESS_KEY`). Never logged.
    pub secret_access_key: Option<Secret>,
    /// S3: session token of temporary credentials.
    pub session_token: Option<Secret>,
    /// Azure: the storage account (else `AZURE_STORAGE_ACCOUNT_NAME`).
    pub account: Option<String>,
    /// Azure: the account key (else `AZURE_STORAGE_ACCOUNT_KEY`). Never logged.
    pub access_key: Option<Secret>,
    /// Azure: use the local emulator (Azurite) and its well-known account.
    pub use_emulator: bool,
    /// Make the store behave like S3 (first-byte latency, jitter, per-request
    /// bandwidth), for experiments on a laptop. Absent = no emulation.
    pub emulate: Option<Emulation>,
}

impl ObjectStoreSection {
    /// The store's full configuration; `objects_dir` is the embedded default
    /// used when `url` is empty. `Err((key, message))` names the key at fault.
    pub fn resolve(&self, objects_dir: &Path) -> Result<ObjectStoreConfig, (&'static str, String)> {
        let mut config = if self.url.is_empty() {
            ObjectStoreConfig::local(objects_dir)
        } else {
            self.with_account_for_url()?
        };
        match &mut config.backend {
            BackendConfig::S3(s3) => self.apply_s3(s3)?,
            BackendConfig::Azure(az) => self.apply_azure(az)?,
            BackendConfig::Gcs(_) | BackendConfig::Local(_) | BackendConfig::Memory => {
                self.refuse_any_setting()?
            }
        }
        config.emulate = self.emulate.clone();
        config
            .validate()
            .map_err(|e| ("object_store", e.to_string()))?;
        Ok(config)
    }

    /// `key` was given but does not apply to `store`.
    fn refused(&self, key: &'static str, store: &str) -> (&'static str, String) {
        (
            key,
            format!(
                "does not apply to {store} (object_store.url = {:?})",
                self.url
            ),
        )
    }

    /// The S3 settings given here, over the URL's and the environment's.
    fn apply_s3(&self, s3: &mut S3Config) -> Result<(), (&'static str, String)> {
        if self.account.is_some() {
            return Err(self.refused("object_store.account", "S3"));
        }
        if self.access_key.is_some() {
            return Err(self.refused(
                "object_store.access_key",
                "S3 (use access_key_id and secret_access_key)",
            ));
        }
        if self.use_emulator {
            return Err(self.refused("object_store.use_emulator", "S3"));
        }
        if let Some(e) = &self.endpoint {
            s3.endpoint = Some(e.clone());
        }
        if let Some(r) = &self.region {
            s3.region = Some(r.clone());
        }
        s3.allow_http |= self.allow_http;
        s3.virtual_hosted_style |= self.virtual_hosted_style;
        match (&self.access_key_id, &self.secret_access_key) {
            (Some(id), Some(secret)) => {
                s3.access_key_id = Some(id.clone());
                s3.secret_access_key = Some(secret.clone());
                s3.session_token = self.session_token.clone();
            }
            (None, None) => {
                if self.session_token.is_some() {
                    return Err((
                        "object_store.session_token",
                        "needs access_key_id and secret_access_key".into(),
                    ));
                }
            }
            (Some(_), None) => {
                return Err((
                    "object_store.secret_access_key",
                    "is needed with access_key_id".into(),
                ));
            }
            (None, Some(_)) => {
                return Err((
                    "object_store.access_key_id",
                    "is needed with secret_access_key".into(),
                ));
            }
        }
        Ok(())
    }

    /// The Azure settings given here, over the URL's and the environment's.
    fn apply_azure(&self, az: &mut AzureConfig) -> Result<(), (&'static str, String)> {
        for (key, set) in [
            ("object_store.region", self.region.is_some()),
            (
                "object_store.virtual_hosted_style",
                self.virtual_hosted_style,
            ),
            ("object_store.access_key_id", self.access_key_id.is_some()),
            (
                "object_store.secret_access_key",
                self.secret_access_key.is_some(),
            ),
            ("object_store.session_token", self.session_token.is_some()),
        ] {
            if set {
                return Err(self.refused(key, "Azure"));
            }
        }
        if let Some(e) = &self.endpoint {
            az.endpoint = Some(e.clone());
        }
        if let Some(k) = &self.access_key {
            az.access_key = Some(k.clone());
        }
        az.use_emulator |= self.use_emulator;
        if self.allow_http && az.endpoint.is_none() && !az.use_emulator {
            return Err((
                "object_store.allow_http",
                "needs an http:// object_store.endpoint (or use_emulator) for Azure".into(),
            ));
        }
        Ok(())
    }

    /// GCS and local stores take no setting beyond the URL.
    fn refuse_any_setting(&self) -> Result<(), (&'static str, String)> {
        let store = if self.url.starts_with("gs://") {
            "GCS"
        } else {
            "a local directory"
        };
        for (key, set) in [
            ("object_store.endpoint", self.endpoint.is_some()),
            ("object_store.region", self.region.is_some()),
            ("object_store.allow_http", self.allow_http),
            (
                "object_store.virtual_hosted_style",
                self.virtual_hosted_style,
            ),
            ("object_store.access_key_id", self.access_key_id.is_some()),
            (
                "object_store.secret_access_key",
                self.secret_access_key.is_some(),
            ),
            ("object_store.session_token", self.session_token.is_some()),
            ("object_store.account", self.account.is_some()),
            ("object_store.access_key", self.access_key.is_some()),
            ("object_store.use_emulator", self.use_emulator),
        ] {
            if set {
                return Err(self.refused(key, store));
            }
        }
        Ok(())
    }

    /// The URL's config; an `az://` URL takes its account from `account`
    /// (or the emulator's) before the environment.
    fn with_account_for_url(&self) -> Result<ObjectStoreConfig, (&'static str, String)> {
        let is_azure = self.url.starts_with("az://") || self.url.starts_with("azure://");
        if is_azure
            && let Some(account) = self
                .account
                .clone()
                .or_else(|| self.use_emulator.then(|| "devstoreaccount1".to_owned()))
        {
            let rest = self.url.split_once("://").map_or("", |(_, r)| r);
            let (container, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if container.is_empty() {
                return Err((
                    "object_store.url",
                    format!("{:?} names no container", self.url),
                ));
            }
            return Ok(ObjectStoreConfig::new(BackendConfig::Azure(
                shoal_storage::object::AzureConfig {
                    account,
                    container: container.to_owned(),
                    prefix: prefix.trim_matches('/').to_owned(),
                    ..Default::default()
                },
            )));
        }
        ObjectStoreConfig::from_url(&self.url).map_err(|e| ("object_store.url", e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(toml_text: &str) -> ObjectStoreSection {
        toml::from_str(toml_text).expect("parses")
    }

    #[test]
    fn s3_settings_in_the_config_reach_the_store_config() {
        let s = section(
            "url = \"s3://b/p\"\nendpoint = \"http://127.0.0.1:9000\"\nallow_http = true\n\
             region = \"eu-west-1\"\naccess_key_id = \"id\"\nsecret_access_key = \"secret\"",
        );
        let c = s.resolve(Path::new("/unused")).expect("valid");
        let BackendConfig::S3(s3) = c.backend else {
            panic!("not S3")
        };
        assert_eq!(s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert!(s3.allow_http);
        assert_eq!(s3.region.as_deref(), Some("eu-west-1"));
        assert_eq!(s3.access_key_id.as_deref(), Some("id"));
        assert!(
            !format!("{s:?}").contains("secret\""),
            "secrets are not printed"
        );
    }

    #[test]
    fn settings_that_do_not_apply_are_refused_by_name() {
        let key = |t: &str| section(t).resolve(Path::new("/x")).expect_err("refused").0;
        assert_eq!(
            key("url = \"s3://b\"\naccount = \"a\""),
            "object_store.account"
        );
        assert_eq!(
            key("url = \"az://c\"\naccount = \"a\"\nregion = \"r\""),
            "object_store.region"
        );
        assert_eq!(key("endpoint = \"http://x:1\""), "object_store.endpoint");
        assert_eq!(
            key("url = \"s3://b\"\naccess_key_id = \"id\""),
            "object_store.secret_access_key"
        );
        assert_eq!(
            key("url = \"gs://b\"\nallow_http = true"),
            "object_store.allow_http"
        );
    }

    #[test]
    fn azure_urls_take_the_account_from_the_config_or_the_emulator() {
        let c = section("url = \"az://box/pre/fix\"\naccount = \"acct\"")
            .resolve(Path::new("/x"))
            .expect("valid");
        let BackendConfig::Azure(az) = c.backend else {
            panic!("not Azure")
        };
        assert_eq!(
            (
                az.account.as_str(),
                az.container.as_str(),
                az.prefix.as_str()
            ),
            ("acct", "box", "pre/fix")
        );
        let c = section("url = \"az://box\"\nuse_emulator = true")
            .resolve(Path::new("/x"))
            .expect("valid");
        let BackendConfig::Azure(az) = c.backend else {
            panic!("not Azure")
        };
        assert!(az.use_emulator);
        assert_eq!(az.account, "devstoreaccount1");
    }
}
