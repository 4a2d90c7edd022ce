//! Answers in the representation asked for: a model as XML, JSON or
//! protobuf with its `Content-Type`, a bare value, or an empty status.

use super::json::ToJson;
use super::protobuf::ToProtobuf;
use super::representation::Repr;
use super::xml::ToXml;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

/// A response with `status`, `body` and `media` as its `Content-Type`.
pub fn with_body(status: StatusCode, media: &'static str, body: impl Into<Body>) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    r
}

/// An empty response with `status`.
pub fn empty(status: StatusCode) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = status;
    r
}

/// `m` in `repr` (XML, JSON or protobuf; anything else is XML), 200.
pub fn model<M: ToJson + ToXml + ToProtobuf>(repr: Repr, m: &M) -> Response {
    match repr {
        Repr::Json => with_body(
            StatusCode::OK,
            Repr::Json.media_type(),
            m.to_json().to_string(),
        ),
        Repr::Protobuf => with_body(StatusCode::OK, Repr::Protobuf.media_type(), m.to_protobuf()),
        Repr::Xml | Repr::Binary | Repr::Text => {
            with_body(StatusCode::OK, Repr::Xml.media_type(), m.to_xml())
        }
    }
}

/// `text` as `text/plain`, 200.
pub fn text(text: String) -> Response {
    with_body(StatusCode::OK, Repr::Text.media_type(), text)
}
