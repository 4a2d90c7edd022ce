//! `/namespaces`, as HBase's gateway serves it (`NamespacesResource`,
//! `NamespacesInstanceResource`): `GET /namespaces` lists them; under
//! `/namespaces/<ns>`, `GET` gives its properties, `POST` makes it (403 if
//! it exists), `PUT` replaces its properties (403 if it does not exist),
//! `DELETE` removes it (404 if it does not exist); `GET
//! /namespaces/<ns>/tables` lists its tables by qualifier. The models
//! (`Namespaces`, `NamespaceProperties`) in each representation live here
//! too.

use super::fault::RestError;
use super::json::ToJson;
use super::model::TableListModel;
use super::protobuf::ToProtobuf;
use super::representation::{INFO, MODELS, Repr};
use super::request::RestRequest;
use super::respond;
use super::xml::ToXml;
use super::xml_tree::{self, escape};
use crate::error::ServiceError;
use crate::host::Access;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use prost::Message;
use serde_json::{Map, Value, json};
use shoal_proto::hbase_rest as pb;
use std::collections::BTreeMap;

const HEADER: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#;

/// The namespaces (`GET /namespaces`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespacesModel {
    /// Their names.
    pub names: Vec<String>,
}

/// A namespace's properties (`/namespaces/<ns>`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespacePropertiesModel {
    /// By key.
    pub properties: BTreeMap<String, String>,
}

impl ToJson for NamespacesModel {
    fn to_json(&self) -> Value {
        json!({ "Namespace": self.names })
    }
}

impl ToXml for NamespacesModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<Namespaces>");
        for n in &self.names {
            out.push_str(&format!("<Namespace>{}</Namespace>", escape(n)));
        }
        out.push_str("</Namespaces>");
        out
    }
}

impl ToProtobuf for NamespacesModel {
    fn to_protobuf(&self) -> Vec<u8> {
        pb::Namespaces {
            namespace: self.names.clone(),
        }
        .encode_to_vec()
    }
}

impl ToJson for NamespacePropertiesModel {
    fn to_json(&self) -> Value {
        // HBase leaves `properties` out (null) when there are none.
        if self.properties.is_empty() {
            return json!({});
        }
        let props: Map<String, Value> = self
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        json!({ "properties": props })
    }
}

impl ToXml for NamespacePropertiesModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<NamespaceProperties>");
        if !self.properties.is_empty() {
            out.push_str("<properties>");
            for (k, v) in &self.properties {
                out.push_str(&format!(
                    "<entry><key>{}</key><value>{}</value></entry>",
                    escape(k),
                    escape(v)
                ));
            }
            out.push_str("</properties>");
        }
        out.push_str("</NamespaceProperties>");
        out
    }
}

impl ToProtobuf for NamespacePropertiesModel {
    fn to_protobuf(&self) -> Vec<u8> {
        pb::NamespaceProperties {
            props: self
                .properties
                .iter()
                .map(|(k, v)| pb::namespace_properties::Property {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        }
        .encode_to_vec()
    }
}

fn bad(repr: &str, why: impl std::fmt::Display) -> RestError {
    RestError::bad(format!("malformed {repr} NamespaceProperties: {why}"))
}

/// The properties a `POST`/`PUT` body gives (none for an empty body).
fn read_properties(req: &RestRequest) -> Result<BTreeMap<String, String>, RestError> {
    if req.body.is_empty() {
        return Ok(BTreeMap::new());
    }
    match req.content(MODELS)? {
        Repr::Json => {
            let v: Value = serde_json::from_slice(&req.body).map_err(|e| bad("JSON", e))?;
            let Some(props) = v.get("properties") else {
                return Ok(BTreeMap::new());
            };
            let Some(map) = props.as_object() else {
                return Err(bad("JSON", "properties is not an object"));
            };
            map.iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(bad(
                        "JSON",
                        format!("property {k} is {other}, not a string"),
                    )),
                })
                .collect()
        }
        Repr::Protobuf => {
            let m =
                pb::NamespaceProperties::decode(&req.body[..]).map_err(|e| bad("protobuf", e))?;
            Ok(m.props.into_iter().map(|p| (p.key, p.value)).collect())
        }
        _ => {
            let e = xml_tree::parse(&req.body)?;
            if e.name != "NamespaceProperties" {
                return Err(bad("XML", format!("the root element is <{}>", e.name)));
            }
            let mut out = BTreeMap::new();
            for props in e.named("properties") {
                for entry in props.named("entry") {
                    let key = entry.named("key").next().map(|k| k.text.clone());
                    let value = entry.named("value").next().map(|v| v.text.clone());
                    match (key, value) {
                        (Some(k), Some(v)) => out.insert(k, v),
                        _ => return Err(bad("XML", "an entry needs a key and a value")),
                    };
                }
            }
            Ok(out)
        }
    }
}

/// `GET /namespaces`.
pub async fn list(h: Access<'_>, req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(INFO)?;
    let model = NamespacesModel {
        names: h
            .list_namespaces()
            .await
            .into_iter()
            .map(|n| n.name)
            .collect(),
    };
    Ok(match repr {
        Repr::Text => respond::text(model.names.iter().map(|n| format!("{n}\n")).collect()),
        r => respond::model(r, &model),
    })
}

/// `GET /namespaces/<ns>`.
pub async fn describe(h: Access<'_>, ns: &str, req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(INFO)?;
    let d = h.describe_namespace(ns).await?;
    let model = NamespacePropertiesModel {
        properties: d.properties,
    };
    Ok(match repr {
        Repr::Text => {
            let mut s = format!("{{NAME => '{ns}'");
            for (k, v) in &model.properties {
                s.push_str(&format!(", {k} => '{v}'"));
            }
            respond::text(s + "}\n")
        }
        r => respond::model(r, &model),
    })
}

/// `GET /namespaces/<ns>/tables`: its tables, by qualifier.
pub async fn tables(h: Access<'_>, ns: &str, req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(INFO)?;
    let mut names: Vec<String> = h
        .list_tables_in(ns)
        .await?
        .into_iter()
        .map(|t| match t.name.split_once(':') {
            Some((_, q)) => q.to_string(),
            None => t.name,
        })
        .collect();
    names.sort();
    let list = TableListModel { names };
    Ok(match repr {
        Repr::Text => respond::text(list.names.iter().map(|n| format!("{n}\n")).collect()),
        r => respond::model(r, &list),
    })
}

fn forbidden(message: String) -> RestError {
    RestError::new(StatusCode::FORBIDDEN, message)
}

/// `POST /namespaces/<ns>` (make it) or `PUT` (replace its properties).
pub async fn update(
    h: Access<'_>,
    ns: &str,
    req: &RestRequest,
    existing: bool,
) -> Result<Response, RestError> {
    let properties = read_properties(req)?;
    if existing {
        return match h.modify_namespace(ns, properties).await {
            Ok(_) => Ok(respond::empty(StatusCode::OK)),
            Err(ServiceError::NoSuchNamespace(_)) => Err(forbidden(format!(
                "Namespace '{ns}' does not exist. Use REST POST to create the namespace."
            ))),
            Err(e) => Err(e.into()),
        };
    }
    match h.create_namespace(ns, properties).await {
        Ok(_) => {
            let mut r = respond::empty(StatusCode::CREATED);
            if let Some(l) = req
                .location
                .as_deref()
                .and_then(|l| HeaderValue::from_str(l).ok())
            {
                r.headers_mut().insert(header::LOCATION, l);
            }
            Ok(r)
        }
        Err(ServiceError::NamespaceExists(_)) => Err(forbidden(format!(
            "Namespace '{ns}' already exists.  Use REST PUT to alter the existing namespace."
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `DELETE /namespaces/<ns>`.
pub async fn delete(h: Access<'_>, ns: &str) -> Result<Response, RestError> {
    match h.delete_namespace(ns).await {
        Ok(()) => Ok(respond::empty(StatusCode::OK)),
        Err(ServiceError::NoSuchNamespace(_)) => Err(RestError::not_found(format!(
            "Namespace '{ns}' does not exists.  Cannot drop namespace."
        ))),
        Err(e @ (ServiceError::NamespaceNotEmpty { .. } | ServiceError::ReservedNamespace(_))) => {
            Err(forbidden(e.to_string()))
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_read_as_hbase_writes_them() {
        let m = NamespacesModel {
            names: vec!["default".into(), "hbase".into()],
        };
        assert_eq!(
            m.to_json().to_string(),
            r#"{"Namespace":["default","hbase"]}"#
        );
        assert!(m.to_xml().ends_with(
            "<Namespaces><Namespace>default</Namespace><Namespace>hbase</Namespace></Namespaces>"
        ));
        let p = NamespacePropertiesModel {
            properties: [("k".to_string(), "v<".to_string())].into(),
        };
        assert_eq!(p.to_json().to_string(), r#"{"properties":{"k":"v<"}}"#);
        assert!(
            p.to_xml()
                .contains("<entry><key>k</key><value>v&lt;</value></entry>")
        );
        let back = pb::NamespaceProperties::decode(&p.to_protobuf()[..]).unwrap_or_default();
        assert_eq!(back.props.len(), 1);
        assert_eq!(
            NamespacePropertiesModel::default().to_json().to_string(),
            "{}"
        );
    }
}
