//! Tokens on the HTTP surface (auth on): every route but `/healthz` (and
//! `/metrics` when `auth.metrics_open`) needs `Authorization: Bearer TOKEN`
//! or the cookie `/login` sets. A browser without one gets the status
//! page's login form; a script gets 401 with `WWW-Authenticate: Bearer`.

use crate::security::{Security, Via};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use std::sync::Arc;

/// The cookie `/login` sets.
const COOKIE: &str = "shoal_token";
/// Largest login form read.
const MAX_FORM_BYTES: usize = 4096;

/// What the middleware needs.
#[derive(Clone)]
pub struct AuthState {
    /// Tokens and settings.
    pub security: Arc<Security>,
    /// True if the HTTP port has TLS (the cookie is then `Secure`).
    pub tls: bool,
}

/// The middleware: passes a request with a valid token, answers the rest.
pub async fn require_token(State(s): State<AuthState>, mut req: Request, next: Next) -> Response {
    if !s.security.auth_enabled() {
        return next.run(req).await;
    }
    let path = req.uri().path();
    if path == "/healthz" || (path == "/metrics" && s.security.auth().metrics_open) {
        return next.run(req).await;
    }
    if path == "/login" {
        return login(&s, req).await;
    }
    let header_value = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes().to_vec());
    let presented =
        header_value.or_else(|| cookie_token(&req).map(|t| format!("Bearer {t}").into_bytes()));
    let peer = req
        .extensions()
        .get::<crate::security::PeerAddr>()
        .map(|p| p.0);
    match s
        .security
        .authenticate_from(presented.as_deref(), Via::Http, peer)
    {
        Ok(caller) => {
            // The handlers show this caller only what it may see.
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(failure) => {
            let wants_html = req
                .headers()
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|a| a.contains("text/html"));
            let mut response = if wants_html {
                (
                    StatusCode::UNAUTHORIZED,
                    Html(login_page(Some(failure.message()))),
                )
                    .into_response()
            } else {
                (StatusCode::UNAUTHORIZED, format!("{}\n", failure.message())).into_response()
            };
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"shoal\""),
            );
            response
        }
    }
}

/// The token in the request's `shoal_token` cookie.
fn cookie_token(req: &Request) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            let (name, value) = c.trim().split_once('=')?;
            (name == COOKIE && !value.is_empty()).then(|| value.to_string())
        })
}

/// `GET /login`: the form. `POST /login` (form field `token`): a valid
/// token sets the cookie and goes to `/`.
async fn login(s: &AuthState, req: Request) -> Response {
    if req.method() != axum::http::Method::POST {
        return Html(login_page(None)).into_response();
    }
    let body = match axum::body::to_bytes(req.into_body(), MAX_FORM_BYTES).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "form too large\n").into_response(),
    };
    let token = form_field(&body, "token").unwrap_or_default();
    let cookie_safe = !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'));
    if !cookie_safe {
        return (
            StatusCode::UNAUTHORIZED,
            Html(login_page(Some(
                "this token cannot be kept in a cookie; send it as `Authorization: Bearer`",
            ))),
        )
            .into_response();
    }
    let header_value = format!("Bearer {token}");
    if let Err(failure) = s
        .security
        .authenticate(Some(header_value.as_bytes()), Via::Http)
    {
        return (
            StatusCode::UNAUTHORIZED,
            Html(login_page(Some(failure.message()))),
        )
            .into_response();
    }
    let secure = if s.tls { "; Secure" } else { "" };
    let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{secure}");
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    response
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/"));
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

/// The value of `name` in an `application/x-www-form-urlencoded` body.
fn form_field(body: &[u8], name: &str) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    text.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn login_page(error: Option<&str>) -> String {
    let error = error
        .map(|e| format!("<p class=\"error\">{}</p>", super::format::esc(e)))
        .unwrap_or_default();
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Shoal: token needed</title>\
         <style>body{{font-family:sans-serif;margin:3em}}.error{{color:#b00}}</style></head>\
         <body><h1>Shoal</h1><p>This server needs a token.</p>{error}\
         <form method=\"post\" action=\"/login\"><input type=\"password\" name=\"token\" \
         size=\"70\" autofocus> <button>Sign in</button></form></body></html>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_fields_are_decoded() {
        assert_eq!(
            form_field(b"token=ab%2Fc+d", "token").as_deref(),
            Some("ab/c d")
        );
        assert_eq!(form_field(b"x=1&token=t", "token").as_deref(), Some("t"));
        assert_eq!(form_field(b"x=1", "token"), None);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
