//! The gateway over a real host (no socket): each test sends requests
//! through [`super::handle`] as a client would, and reads the answers.

use super::*;
use axum::body::Body;
use axum::http::{Method, StatusCode};
use bytes::Bytes;
use prost::Message;

struct Fixture {
    gateway: Arc<RestGateway>,
    _stop: watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

async fn fixture(tune: impl FnOnce(&mut crate::config::ServerConfig)) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = crate::config::ServerConfig::default();
    config.server.data_dir = dir.path().to_path_buf();
    tune(&mut config);
    let host = Host::open(config).await.expect("host");
    host.create_table(
        "t",
        vec![crate::catalog::FamilyPatch {
            name: "cf".into(),
            max_versions: Some(3),
            ..Default::default()
        }],
        vec![],
    )
    .await
    .expect("table");
    let (stop, stopped) = watch::channel(false);
    Fixture {
        gateway: Arc::new(RestGateway::new(host, stopped)),
        _stop: stop,
        _dir: dir,
    }
}

impl Fixture {
    async fn send(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> (StatusCode, axum::http::HeaderMap, Bytes) {
        let mut b = axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "127.0.0.1:8080");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let req = b.body(Body::from(body.into())).expect("request");
        let resp = handle(State(self.gateway.clone()), req).await;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("body");
        (status, headers, body)
    }

    async fn put_json(&self, uri: &str, json: &str) -> StatusCode {
        self.send(
            Method::PUT,
            uri,
            &[("content-type", "application/json")],
            json.to_string(),
        )
        .await
        .0
    }
}

/// `{"Row":[{"key":row,"Cell":[{"column":col,"$":value}]}]}` in base64.
fn cell_json(row: &str, column: &str, value: &str) -> String {
    format!(
        r#"{{"Row":[{{"key":"{}","Cell":[{{"column":"{}","$":"{}"}}]}}]}}"#,
        b64::encode(row.as_bytes()),
        b64::encode(column.as_bytes()),
        b64::encode(value.as_bytes())
    )
}

#[tokio::test]
async fn a_cell_put_as_json_reads_back_in_every_representation() {
    let f = fixture(|_| {}).await;
    assert_eq!(
        f.put_json("/t/r1", &cell_json("r1", "cf:a", "v1")).await,
        StatusCode::OK
    );
    let (s, h, body) = f
        .send(Method::GET, "/t/r1", &[("accept", "application/json")], "")
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        h.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let set = json::cell_set(&body).expect("json cell set");
    assert_eq!(set.rows[0].cells[0].value, "v1");
    let (_, _, body) = f.send(Method::GET, "/t/r1", &[], "").await;
    let set = xml::cell_set(&body).expect("xml by default");
    assert_eq!(set.rows[0].key.as_deref(), Some(&b"r1"[..]));
    let (_, _, body) = f
        .send(
            Method::GET,
            "/t/r1",
            &[("accept", "application/x-protobuf")],
            "",
        )
        .await;
    let set = shoal_proto::hbase_rest::CellSet::decode(&body[..]).expect("protobuf");
    assert_eq!(set.rows[0].values[0].column.as_deref(), Some(&b"cf:a"[..]));
    let (s, h, body) = f
        .send(
            Method::GET,
            "/t/r1/cf:a",
            &[("accept", "application/octet-stream")],
            "",
        )
        .await;
    assert_eq!((s, &body[..]), (StatusCode::OK, &b"v1"[..]));
    assert!(h.contains_key("x-timestamp"));
    let (s, _, _) = f
        .send(
            Method::GET,
            "/t/r1",
            &[("accept", "application/octet-stream")],
            "",
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "a bare value needs one column");
}

#[tokio::test]
async fn versions_time_ranges_and_deletes() {
    let f = fixture(|_| {}).await;
    for (ts, v) in [(10, "a"), (20, "b"), (30, "c")] {
        let (s, _, _) = f
            .send(
                Method::PUT,
                "/t/r/cf:q",
                &[
                    ("content-type", "application/octet-stream"),
                    ("x-timestamp", &ts.to_string()),
                ],
                v,
            )
            .await;
        assert_eq!(s, StatusCode::OK);
    }
    let values = |body: &Bytes| -> Vec<(i64, String)> {
        json::cell_set(body)
            .expect("cell set")
            .rows
            .iter()
            .flat_map(|r| r.cells.iter())
            .map(|c| (c.timestamp, String::from_utf8_lossy(&c.value).into_owned()))
            .collect()
    };
    let json = [("accept", "application/json")];
    let (_, _, b) = f.send(Method::GET, "/t/r/cf:q?v=5", &json, "").await;
    assert_eq!(
        values(&b),
        vec![(30, "c".into()), (20, "b".into()), (10, "a".into())]
    );
    let (_, _, b) = f.send(Method::GET, "/t/r/cf:q/25?v=5", &json, "").await;
    assert_eq!(values(&b), vec![(20, "b".into()), (10, "a".into())]);
    let (_, _, b) = f.send(Method::GET, "/t/r/cf:q/15,31?v=5", &json, "").await;
    assert_eq!(values(&b), vec![(30, "c".into()), (20, "b".into())]);
    let (s, _, _) = f.send(Method::DELETE, "/t/r/cf:q/20", &[], "").await;
    assert_eq!(s, StatusCode::OK);
    let (_, _, b) = f.send(Method::GET, "/t/r?v=5", &json, "").await;
    assert_eq!(values(&b), vec![(30, "c".into())]);
    let (s, _, _) = f.send(Method::DELETE, "/t/r", &[], "").await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, _) = f.send(Method::GET, "/t/r", &json, "").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_input_gets_clear_errors() {
    let f = fixture(|c| c.rest.max_body_bytes = crate::config::ByteSize(4096)).await;
    let (s, _, body) = f.send(Method::GET, "/nosuch/r", &[], "").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(String::from_utf8_lossy(&body).contains("nosuch"));
    assert_eq!(
        f.put_json("/t/r", "{not json").await,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        f.put_json("/t/r", r#"{"Row":[{"key":"@@@","Cell":[]}]}"#)
            .await,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        f.put_json("/t/r", &cell_json("r", "nosuch:q", "v")).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        f.put_json("/t/r", &cell_json("r", "cf", "v")).await,
        StatusCode::BAD_REQUEST
    );
    let (s, _, _) = f
        .send(
            Method::PUT,
            "/t/r",
            &[("content-type", "application/x-protobuf")],
            vec![0xffu8, 0xff, 0xff],
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _, _) = f
        .send(Method::PUT, "/t/r", &[("content-type", "text/csv")], "x")
        .await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let (s, _, _) = f
        .send(
            Method::PUT,
            "/t/r",
            &[("content-type", "application/json")],
            vec![b' '; 5000],
        )
        .await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
    let (s, _, _) = f.send(Method::GET, "/t/r/cf/notatime", &[], "").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _, _) = f
        .send(Method::GET, "/t/r", &[("accept", "image/png")], "")
        .await;
    assert_eq!(s, StatusCode::NOT_ACCEPTABLE);
    let (s, _, _) = f.send(Method::PATCH, "/t/r", &[], "").await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn check_and_put_and_check_and_delete() {
    let f = fixture(|_| {}).await;
    assert_eq!(
        f.put_json("/t/r", &cell_json("r", "cf:a", "1")).await,
        StatusCode::OK
    );
    let check = |put: &str, expect: &str| {
        format!(
            r#"{{"Row":[{{"key":"{}","Cell":[{{"column":"{}","$":"{}"}},{{"column":"{}","$":"{}"}}]}}]}}"#,
            b64::encode(b"r"),
            b64::encode(b"cf:a"),
            b64::encode(put.as_bytes()),
            b64::encode(b"cf:a"),
            b64::encode(expect.as_bytes())
        )
    };
    assert_eq!(
        f.put_json("/t/r?check=put", &check("2", "9")).await,
        StatusCode::NOT_MODIFIED
    );
    assert_eq!(
        f.put_json("/t/r?check=put", &check("2", "1")).await,
        StatusCode::OK
    );
    let one = |v: &str| cell_json("r", "cf:a", v);
    assert_eq!(
        f.put_json("/t/r?check=delete", &one("1")).await,
        StatusCode::NOT_MODIFIED
    );
    let (s, _, _) = f
        .send(
            Method::DELETE,
            "/t/r?check=delete",
            &[("content-type", "application/json")],
            one("2"),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, _) = f.send(Method::GET, "/t/r", &[], "").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(
        f.put_json("/t/r?check=bogus", &one("1")).await,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn scanners_page_then_end_and_are_capped() {
    let f = fixture(|c| c.rest.max_scanners = 2).await;
    for r in ["a1", "a2", "a3", "b1"] {
        assert_eq!(
            f.put_json(&format!("/t/{r}"), &cell_json(r, "cf:q", r))
                .await,
            StatusCode::OK
        );
    }
    let spec = r#"{"filter":"{\"type\":\"PrefixFilter\",\"value\":\"YQ==\"}"}"#;
    let (s, h, _) = f
        .send(
            Method::POST,
            "/t/scanner",
            &[("content-type", "application/json")],
            spec,
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    let location = h
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let path = location
        .trim_start_matches("http://127.0.0.1:8080")
        .to_string();
    assert!(path.starts_with("/t/scanner/"), "{location}");
    let json = [("accept", "application/json")];
    let (s, _, b) = f.send(Method::GET, &format!("{path}?n=2"), &json, "").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(json::cell_set(&b).map(|c| c.rows.len()).ok(), Some(2));
    let (_, _, b) = f.send(Method::GET, &format!("{path}?n=2"), &json, "").await;
    assert_eq!(json::cell_set(&b).map(|c| c.rows.len()).ok(), Some(1));
    let (s, _, _) = f.send(Method::GET, &path, &json, "").await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let open = |body: &'static str| {
        f.send(
            Method::PUT,
            "/t/scanner",
            &[("content-type", "application/json")],
            body,
        )
    };
    assert_eq!(open("{}").await.0, StatusCode::CREATED);
    assert_eq!(
        open("{}").await.0,
        StatusCode::SERVICE_UNAVAILABLE,
        "max_scanners is 2"
    );
    let (s, _, _) = f.send(Method::DELETE, &path, &[], "").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        f.send(Method::DELETE, &path, &[], "").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        open(r#"{"filter":"{\"type\":\"FuzzyRowFilter\"}"}"#)
            .await
            .0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(open("{}").await.0, StatusCode::CREATED);
    let (s, _, _) = f
        .send(
            Method::POST,
            "/nosuch/scanner",
            &[("content-type", "application/json")],
            "{}",
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn schemas_tables_and_globs() {
    let f = fixture(|_| {}).await;
    let schema = r#"{"name":"u","ColumnSchema":[{"name":"f","VERSIONS":"2"}]}"#;
    let (s, h, _) = f
        .send(
            Method::PUT,
            "/u/schema",
            &[("content-type", "application/json")],
            schema,
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    assert!(h.contains_key("location"));
    let (s, _, b) = f.send(Method::GET, "/", &[], "").await;
    assert_eq!((s, &b[..]), (StatusCode::OK, &b"t\nu\n"[..]));
    let (_, _, b) = f
        .send(
            Method::GET,
            "/u/schema",
            &[("accept", "application/json")],
            "",
        )
        .await;
    let t = json::table_schema(&b).expect("schema");
    assert_eq!(t.columns[0].attr("VERSIONS"), Some("2"));
    for r in ["ab1", "ab2", "ac"] {
        assert_eq!(
            f.put_json(&format!("/t/{r}"), &cell_json(r, "cf:q", r))
                .await,
            StatusCode::OK
        );
    }
    let json = [("accept", "application/json")];
    let (_, _, b) = f.send(Method::GET, "/t/ab*", &json, "").await;
    assert_eq!(json::cell_set(&b).map(|c| c.rows.len()).ok(), Some(2));
    let (_, _, b) = f.send(Method::GET, "/t/a*?limit=1", &json, "").await;
    assert_eq!(json::cell_set(&b).map(|c| c.rows.len()).ok(), Some(1));
    let (_, _, b) = f.send(Method::GET, "/t/ab*/cf", &json, "").await;
    assert_eq!(json::cell_set(&b).map(|c| c.rows.len()).ok(), Some(2));
    let (_, _, b) = f
        .send(Method::GET, "/t/multiget?row=ac&row=zz&row=ab1", &json, "")
        .await;
    let keys: Vec<Bytes> = json::cell_set(&b)
        .map(|c| c.rows.into_iter().filter_map(|r| r.key).collect())
        .unwrap_or_default();
    assert_eq!(keys, vec![Bytes::from("ac"), Bytes::from("ab1")]);
    let (s, _, b) = f.send(Method::GET, "/t/regions", &json, "").await;
    assert_eq!(s, StatusCode::OK);
    assert!(String::from_utf8_lossy(&b).contains("\"Region\""));
    assert_eq!(
        f.send(Method::GET, "/u/exists", &[], "").await.0,
        StatusCode::OK
    );
    assert_eq!(
        f.send(Method::DELETE, "/u/schema", &[], "").await.0,
        StatusCode::OK
    );
    assert_eq!(
        f.send(Method::GET, "/u/exists", &[], "").await.0,
        StatusCode::NOT_FOUND
    );
    let (s, _, b) = f.send(Method::GET, "/version/cluster", &[], "").await;
    assert_eq!((s, &b[..]), (StatusCode::OK, &b"2.6.1\n"[..]));
    let (s, _, _) = f
        .send(
            Method::GET,
            "/status/cluster",
            &[("accept", "application/x-protobuf")],
            "",
        )
        .await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn a_stopping_server_answers_503() {
    let f = fixture(|_| {}).await;
    let _ = f._stop.send(true);
    assert_eq!(
        f.send(Method::GET, "/", &[], "").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
}

#[tokio::test]
async fn a_wide_row_pages_by_cells() {
    let f = fixture(|c| c.rest.max_cells_per_response = 3).await;
    let cells: Vec<String> = (0..7)
        .map(|i| {
            format!(
                r#"{{"column":"{}","$":"{}"}}"#,
                b64::encode(format!("cf:q{i}").as_bytes()),
                b64::encode(b"v")
            )
        })
        .collect();
    let body = format!(
        r#"{{"Row":[{{"key":"{}","Cell":[{}]}}]}}"#,
        b64::encode(b"wide"),
        cells.join(",")
    );
    assert_eq!(f.put_json("/t/wide", &body).await, StatusCode::OK);
    let (s, _, _) = f
        .send(
            Method::GET,
            "/t/wide",
            &[("accept", "application/json")],
            "",
        )
        .await;
    assert_eq!(
        s,
        StatusCode::BAD_REQUEST,
        "7 cells > rest.max_cells_per_response"
    );
    let (_, h, _) = f
        .send(
            Method::POST,
            "/t/scanner",
            &[("content-type", "application/json")],
            "{}",
        )
        .await;
    let location = h
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .trim_start_matches("http://127.0.0.1:8080")
        .to_string();
    let mut pages = Vec::new();
    loop {
        let (s, _, b) = f
            .send(
                Method::GET,
                &location,
                &[("accept", "application/json")],
                "",
            )
            .await;
        if s == StatusCode::NO_CONTENT {
            break;
        }
        assert_eq!(s, StatusCode::OK);
        pages.push(json::cell_set(&b).map(|c| c.cell_count()).unwrap_or(0));
    }
    assert_eq!(pages, vec![3, 3, 1]);
}

#[tokio::test]
async fn appends_and_increments() {
    let f = fixture(|_| {}).await;
    assert_eq!(
        f.put_json("/t/c?check=append", &cell_json("c", "cf:s", "ab"))
            .await,
        StatusCode::OK
    );
    let (s, _, b) = f
        .send(
            Method::PUT,
            "/t/c?check=append&rr=true",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json"),
            ],
            cell_json("c", "cf:s", "cd"),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let set = json::cell_set(&b).expect("cell set");
    assert_eq!(set.rows[0].cells[0].value, "abcd");
    assert_eq!(
        f.put_json("/t/c?check=increment", &cell_json("c", "cf:n", "5"))
            .await,
        StatusCode::OK
    );
    assert_eq!(
        f.put_json("/t/c?check=increment", &cell_json("c", "cf:n", "-2"))
            .await,
        StatusCode::OK
    );
    let (_, _, b) = f
        .send(
            Method::GET,
            "/t/c/cf:n",
            &[("accept", "application/octet-stream")],
            "",
        )
        .await;
    assert_eq!(&b[..], &3i64.to_be_bytes()[..]);
    assert_eq!(
        f.put_json("/t/c?check=increment", &cell_json("c", "cf:n", "lots"))
            .await,
        StatusCode::BAD_REQUEST
    );
}
