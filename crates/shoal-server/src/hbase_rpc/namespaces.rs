//! MasterService's namespace calls: list, describe, create, modify and
//! delete namespaces through the host API (`host/namespaces.rs`), with
//! HBase's descriptors (a name and string properties) and its errors
//! (`NamespaceNotFoundException`, `NamespaceExistException`, a
//! `ConstraintException` for a namespace that still holds tables).

use super::NativeRpc;
use super::errors::{self, RpcError};
use super::master::not_served;
use crate::catalog::NamespaceRecord;
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;
use std::collections::BTreeMap;

/// HBase's descriptor of a namespace.
fn descriptor(ns: &NamespaceRecord) -> pb::NamespaceDescriptor {
    pb::NamespaceDescriptor {
        name: Bytes::copy_from_slice(ns.name.as_bytes()),
        configuration: ns
            .properties
            .iter()
            .map(|(k, v)| pb::NameStringPair {
                name: k.clone(),
                value: v.clone(),
            })
            .collect(),
    }
}

/// A descriptor's name and properties, checked for UTF-8.
fn from_descriptor(
    d: &pb::NamespaceDescriptor,
) -> Result<(String, BTreeMap<String, String>), RpcError> {
    let name = std::str::from_utf8(&d.name)
        .map_err(|_| RpcError::invalid("a namespace name must be UTF-8"))?
        .to_string();
    let properties = d
        .configuration
        .iter()
        .map(|p| (p.name.clone(), p.value.clone()))
        .collect();
    Ok((name, properties))
}

impl NativeRpc {
    /// One namespace call: the encoded answer.
    pub(super) async fn namespace_call(
        &self,
        method: &str,
        param: Bytes,
    ) -> Result<Vec<u8>, RpcError> {
        let access = self.access();
        Ok(match method {
            "ListNamespaceDescriptors" => pb::ListNamespaceDescriptorsResponse {
                namespace_descriptor: access
                    .list_namespaces()
                    .await
                    .iter()
                    .map(descriptor)
                    .collect(),
            }
            .encode_to_vec(),
            "ListNamespaces" => pb::ListNamespacesResponse {
                namespace_name: access
                    .list_namespaces()
                    .await
                    .into_iter()
                    .map(|n| n.name)
                    .collect(),
            }
            .encode_to_vec(),
            "GetNamespaceDescriptor" => {
                let r: pb::GetNamespaceDescriptorRequest = errors::request(method, param)?;
                pb::GetNamespaceDescriptorResponse {
                    namespace_descriptor: descriptor(
                        &access.describe_namespace(&r.namespace_name).await?,
                    ),
                }
                .encode_to_vec()
            }
            "CreateNamespace" => {
                let r: pb::CreateNamespaceRequest = errors::request(method, param)?;
                let (name, properties) = from_descriptor(&r.namespace_descriptor)?;
                access.create_namespace(&name, properties).await?;
                pb::CreateNamespaceResponse {
                    proc_id: Some(self.procedure()),
                }
                .encode_to_vec()
            }
            "ModifyNamespace" => {
                let r: pb::ModifyNamespaceRequest = errors::request(method, param)?;
                let (name, properties) = from_descriptor(&r.namespace_descriptor)?;
                access.modify_namespace(&name, properties).await?;
                pb::ModifyNamespaceResponse {
                    proc_id: Some(self.procedure()),
                }
                .encode_to_vec()
            }
            "DeleteNamespace" => {
                let r: pb::DeleteNamespaceRequest = errors::request(method, param)?;
                access.delete_namespace(&r.namespace_name).await?;
                pb::DeleteNamespaceResponse {
                    proc_id: Some(self.procedure()),
                }
                .encode_to_vec()
            }
            _ => return Err(not_served(method)),
        })
    }
}
