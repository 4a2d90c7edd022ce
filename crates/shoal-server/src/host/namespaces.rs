//! Namespaces (`docs/namespaces.md`): made, altered, listed and removed as
//! catalog commits (by the master in cluster mode), and the permission
//! each needs when a front door asks — HBase's rules: making, altering and
//! removing one needs ADMIN globally; a caller lists and describes the
//! namespaces it holds anything in.

use super::Host;
use super::access::Access;
use crate::catalog::names::{DEFAULT_NAMESPACE, SYSTEM_NAMESPACE, namespace_of};
use crate::catalog::{NamespaceRecord, validate_namespace_name};
use crate::error::ServiceError;
use crate::security::permissions::Action;
use std::collections::BTreeMap;

/// Most properties one namespace holds, and the longest key or value.
const MAX_PROPERTIES: usize = 64;
const MAX_PROPERTY_BYTES: usize = 4096;

fn check_properties(properties: &BTreeMap<String, String>) -> Result<(), ServiceError> {
    if properties.len() > MAX_PROPERTIES {
        return Err(ServiceError::InvalidArgument(format!(
            "a namespace holds at most {MAX_PROPERTIES} properties ({} given)",
            properties.len()
        )));
    }
    for (k, v) in properties {
        if k.is_empty() || k.len() > MAX_PROPERTY_BYTES || v.len() > MAX_PROPERTY_BYTES {
            return Err(ServiceError::InvalidArgument(format!(
                "namespace property {}: keys are 1 to {MAX_PROPERTY_BYTES} bytes, values at most {MAX_PROPERTY_BYTES}",
                crate::error::shown(k)
            )));
        }
    }
    Ok(())
}

fn built_in(name: &str) -> bool {
    name == DEFAULT_NAMESPACE || name == SYSTEM_NAMESPACE
}

impl Host {
    /// Makes namespace `name` with `properties`.
    pub async fn create_namespace(
        &self,
        name: &str,
        properties: BTreeMap<String, String>,
    ) -> Result<NamespaceRecord, ServiceError> {
        validate_namespace_name(name).map_err(ServiceError::InvalidArgument)?;
        check_properties(&properties)?;
        let record = NamespaceRecord {
            name: name.to_string(),
            properties,
        };
        let added = record.clone();
        self.change_catalog(|next| {
            if next.has_namespace(name) {
                return Err(ServiceError::NamespaceExists(name.to_string()));
            }
            next.namespaces.push(added);
            next.namespaces.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(())
        })
        .await?;
        tracing::info!(namespace = name, "namespace created");
        Ok(record)
    }

    /// Replaces namespace `name`'s properties.
    pub async fn modify_namespace(
        &self,
        name: &str,
        properties: BTreeMap<String, String>,
    ) -> Result<NamespaceRecord, ServiceError> {
        check_properties(&properties)?;
        if built_in(name) {
            return Err(ServiceError::InvalidArgument(format!(
                "namespace {name:?} is built in; its properties cannot be changed"
            )));
        }
        let mut changed = None;
        self.change_catalog(|next| {
            let ns = next
                .namespaces
                .iter_mut()
                .find(|n| n.name == name)
                .ok_or_else(|| ServiceError::NoSuchNamespace(name.to_string()))?;
            ns.properties = properties;
            changed = Some(ns.clone());
            Ok(())
        })
        .await?;
        changed.ok_or_else(|| ServiceError::NoSuchNamespace(name.to_string()))
    }

    /// Removes namespace `name`, which must hold no table; grants on it go
    /// with it (as HBase's do).
    pub async fn delete_namespace(&self, name: &str) -> Result<(), ServiceError> {
        if built_in(name) {
            return Err(ServiceError::ReservedNamespace(name.to_string()));
        }
        let catalog = self
            .change_catalog(|next| {
                if !next.namespaces.iter().any(|n| n.name == name) {
                    return Err(ServiceError::NoSuchNamespace(name.to_string()));
                }
                let tables = next.tables_in(name).count();
                if tables > 0 {
                    return Err(ServiceError::NamespaceNotEmpty {
                        namespace: name.to_string(),
                        tables,
                    });
                }
                next.namespaces.retain(|n| n.name != name);
                next.grants.retain(|g| g.namespace.as_deref() != Some(name));
                Ok(())
            })
            .await?;
        self.inner.security.set_grants(&catalog);
        tracing::info!(namespace = name, "namespace removed");
        Ok(())
    }

    /// Every namespace, `default` and `hbase` included, by name.
    pub async fn namespaces(&self) -> Vec<NamespaceRecord> {
        self.inner.catalog.lock().await.current().all_namespaces()
    }

    /// Namespace `name`.
    pub async fn namespace(&self, name: &str) -> Result<NamespaceRecord, ServiceError> {
        self.namespaces()
            .await
            .into_iter()
            .find(|n| n.name == name)
            .ok_or_else(|| ServiceError::NoSuchNamespace(name.to_string()))
    }
}

fn namespace_object(name: &str) -> String {
    format!("namespace {}", crate::error::shown(name))
}

impl Access<'_> {
    /// [`Host::create_namespace`]: ADMIN globally.
    pub async fn create_namespace(
        &self,
        name: &str,
        properties: BTreeMap<String, String>,
    ) -> Result<NamespaceRecord, ServiceError> {
        self.need_global("create_namespace", Action::Admin)?;
        let result = self.host().create_namespace(name, properties).await;
        self.audited("create_namespace", &namespace_object(name), result)
    }

    /// [`Host::modify_namespace`]: ADMIN globally.
    pub async fn modify_namespace(
        &self,
        name: &str,
        properties: BTreeMap<String, String>,
    ) -> Result<NamespaceRecord, ServiceError> {
        self.need_global("modify_namespace", Action::Admin)?;
        let result = self.host().modify_namespace(name, properties).await;
        self.audited("modify_namespace", &namespace_object(name), result)
    }

    /// [`Host::delete_namespace`]: ADMIN globally.
    pub async fn delete_namespace(&self, name: &str) -> Result<(), ServiceError> {
        self.need_global("delete_namespace", Action::Admin)?;
        let result = self.host().delete_namespace(name).await;
        self.audited("delete_namespace", &namespace_object(name), result)
    }

    /// [`Host::namespaces`]: those the caller holds anything in.
    pub async fn list_namespaces(&self) -> Vec<NamespaceRecord> {
        let all = self.host().namespaces().await;
        if self.unrestricted() {
            return all;
        }
        let acl = self.host().security().acl();
        all.into_iter()
            .filter(|n| acl.sees_namespace(self.caller().user(), &n.name))
            .collect()
    }

    /// [`Host::namespace`]: a namespace the caller holds anything in.
    pub async fn describe_namespace(&self, name: &str) -> Result<NamespaceRecord, ServiceError> {
        if !self.unrestricted()
            && !self
                .host()
                .security()
                .acl()
                .sees_namespace(self.caller().user(), name)
        {
            return Err(self.host().security().deny(
                self.caller(),
                "describe_namespace",
                "a permission",
                &namespace_object(name),
            ));
        }
        self.host().namespace(name).await
    }

    /// The tables of namespace `ns` the caller may see.
    pub async fn list_tables_in(
        &self,
        ns: &str,
    ) -> Result<Vec<crate::catalog::TableRecord>, ServiceError> {
        self.describe_namespace(ns).await?;
        Ok(self
            .list_tables()
            .await
            .into_iter()
            .filter(|t| namespace_of(&t.name) == ns)
            .collect())
    }
}
