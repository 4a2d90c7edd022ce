//! What a REST request can fail with, as HBase's gateway answers it: an
//! HTTP status and a `text/plain` message. `ServiceError`s map as HBase's
//! `ResourceBase.processException` maps exceptions (a missing table or
//! family: 404; bad arguments: 400; refused access: 403; the rest: 503),
//! with Shoal's message after HBase's one-word reason.

use crate::error::ServiceError;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A refused or failed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct RestError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for the client.
    pub message: String,
}

impl RestError {
    /// A refusal with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> RestError {
        RestError {
            status,
            message: message.into(),
        }
    }

    /// 400: the request is malformed.
    pub fn bad(message: impl Into<String>) -> RestError {
        RestError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such table, row or scanner.
    pub fn not_found(message: impl Into<String>) -> RestError {
        RestError::new(StatusCode::NOT_FOUND, message)
    }

    /// 503: the server cannot take it now.
    pub fn unavailable(message: impl Into<String>) -> RestError {
        RestError::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }

    /// HBase's one-word reason for a status.
    fn reason(&self) -> &'static str {
        match self.status {
            StatusCode::BAD_REQUEST => "Bad request",
            StatusCode::UNAUTHORIZED => "Unauthorized",
            StatusCode::FORBIDDEN => "Forbidden",
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::NOT_ACCEPTABLE => "Not acceptable",
            StatusCode::PAYLOAD_TOO_LARGE => "Payload too large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "Unsupported media type",
            StatusCode::METHOD_NOT_ALLOWED => "Method not allowed",
            StatusCode::SERVICE_UNAVAILABLE => "Unavailable",
            _ => "Error",
        }
    }
}

impl From<ServiceError> for RestError {
    fn from(e: ServiceError) -> RestError {
        let status = match &e {
            ServiceError::NoSuchTable(_)
            | ServiceError::NoSuchFamily { .. }
            | ServiceError::NoSuchNamespace(_) => StatusCode::NOT_FOUND,
            ServiceError::NamespaceExists(_)
            | ServiceError::NamespaceNotEmpty { .. }
            | ServiceError::ReservedNamespace(_) => StatusCode::FORBIDDEN,
            ServiceError::InvalidArgument(_)
            | ServiceError::TableExists(_)
            | ServiceError::FailedPrecondition(_) => StatusCode::BAD_REQUEST,
            ServiceError::PermissionDenied { .. } => StatusCode::FORBIDDEN,
            ServiceError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            ServiceError::TableDisabled(_) | ServiceError::TableEnabled(_) => {
                StatusCode::BAD_REQUEST
            }
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        RestError::new(status, e.to_string())
    }
}

impl IntoResponse for RestError {
    fn into_response(self) -> Response {
        let body = format!("{}\r\n{}\r\n", self.reason(), self.message);
        let mut response = (self.status, body).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"shoal\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_map_as_hbase_s_gateway() {
        let e: RestError = ServiceError::NoSuchTable("t".into()).into();
        assert_eq!(e.status, StatusCode::NOT_FOUND);
        let e: RestError = ServiceError::InvalidArgument("x".into()).into();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        let e: RestError = ServiceError::PermissionDenied {
            user: "u".into(),
            action: "READ",
            object: "table \"t\"".into(),
        }
        .into();
        assert_eq!(e.status, StatusCode::FORBIDDEN);
        let e: RestError = ServiceError::Overloaded("busy".into()).into();
        assert_eq!(e.status, StatusCode::SERVICE_UNAVAILABLE);
    }
}
