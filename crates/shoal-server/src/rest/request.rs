//! One REST request as the handlers see it: who sent it, its method, the
//! path after the table, its query parameters (still percent-encoded, as
//! HBase's `RowSpec` reads them), its headers and its body (read up to
//! `rest.max_body_bytes`).

use super::fault::RestError;
use super::representation::Repr;
use super::row_spec::url_decode;
use axum::http::{HeaderMap, Method, StatusCode, header};
use bytes::Bytes;

/// A request, read whole.
pub struct RestRequest {
    /// The method.
    pub method: Method,
    /// Query parameters, raw (percent-encoded), in order.
    pub query: Vec<(String, String)>,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
    /// The request's own address, `scheme://host/path` (None without a
    /// `Host` header): the base of the `Location`s answered.
    pub location: Option<String>,
}

impl RestRequest {
    /// The raw values of query parameter `name`, in order.
    pub fn params<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.query
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, percent-decoded as text.
    pub fn param(&self, name: &str) -> Result<Option<String>, RestError> {
        match self.params(name).next() {
            None => Ok(None),
            Some(v) => Ok(Some(String::from_utf8_lossy(&url_decode(v)?).into_owned())),
        }
    }

    /// The first value of `name` as a number, or `default`.
    pub fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, RestError> {
        match self.param(name)? {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| {
                RestError::bad(format!("query parameter {name}={v:?} is not a number"))
            }),
        }
    }

    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The representation the answer should be in, among `offered` (406
    /// when the `Accept` header lists none of them).
    pub fn accept(&self, offered: &[Repr]) -> Result<Repr, RestError> {
        let accept = self.header(header::ACCEPT.as_str());
        Repr::accepted(accept, offered).ok_or_else(|| {
            RestError::new(
                StatusCode::NOT_ACCEPTABLE,
                format!(
                    "cannot answer in {}; this resource speaks {}",
                    accept.unwrap_or(""),
                    offered
                        .iter()
                        .map(|r| r.media_type())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })
    }

    /// The representation of the body (415 when `Content-Type` is missing
    /// or not among `offered`).
    pub fn content(&self, offered: &[Repr]) -> Result<Repr, RestError> {
        let given = self.header(header::CONTENT_TYPE.as_str()).unwrap_or("");
        Repr::from_media_type(given)
            .filter(|r| offered.contains(r))
            .ok_or_else(|| {
                RestError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!(
                        "Content-Type {given:?} is not one of {}",
                        offered
                            .iter()
                            .map(|r| r.media_type())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
    }
}

/// Splits a raw query string into pairs (values stay encoded).
pub fn split_query(query: Option<&str>) -> Vec<(String, String)> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_keep_order_and_encoding() {
        let q = split_query(Some("row=a%2Fb&row=c&v=3&flag"));
        assert_eq!(q.len(), 4);
        let r = RestRequest {
            method: Method::GET,
            query: q,
            headers: HeaderMap::new(),
            body: Bytes::new(),
            location: None,
        };
        assert_eq!(r.params("row").collect::<Vec<_>>(), vec!["a%2Fb", "c"]);
        assert_eq!(r.number("v", 1u32).ok(), Some(3));
        assert_eq!(r.number("n", 7u32).ok(), Some(7));
        assert!(r.number::<u32>("row", 1).is_err());
        assert!(r.content(super::super::representation::MODELS).is_err());
    }
}
