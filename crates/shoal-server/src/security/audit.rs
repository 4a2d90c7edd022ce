//! The audit log: one JSON line for every admin operation (allowed or not,
//! with its outcome), every permission change, every denial and every
//! refused token. Lines go to the server's log (target `shoal::audit`) and,
//! when `auth.audit_log` names a file, are appended to it.

use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// How an audited call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Allowed and done.
    Ok,
    /// Allowed, and failed for another reason.
    Failed,
    /// Refused: the user lacks a permission.
    Denied,
    /// Refused: no token, or one nobody holds.
    Unauthenticated,
}

/// One audited event.
#[derive(Debug, Serialize)]
pub struct Event<'a> {
    /// RFC 3339, milliseconds, UTC.
    pub time: String,
    /// The user (empty when unauthenticated).
    pub user: &'a str,
    /// The operation, e.g. `create_table`, `grant`, `get`.
    pub op: &'a str,
    /// What it acted on, e.g. `table "t"`, `global`.
    pub object: &'a str,
    /// How it ended.
    pub outcome: Outcome,
    /// The denial's missing permission, the error, or the change made.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub detail: &'a str,
    /// The front door: grpc, frames, http, thrift or hbase_rpc.
    pub via: &'a str,
    /// The client's address (`ip:port`), when the door knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
}

/// Where audit lines go.
#[derive(Debug)]
pub struct Audit {
    file: Option<Mutex<std::fs::File>>,
}

impl Audit {
    /// Audit lines to the log, and appended to `path` unless it is empty.
    pub fn open(path: &Path) -> std::io::Result<Audit> {
        let file = if path.as_os_str().is_empty() {
            None
        } else {
            Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            ))
        };
        Ok(Audit { file })
    }

    /// Audit lines to the log only.
    pub fn log_only() -> Audit {
        Audit { file: None }
    }

    /// Records one event.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        caller: &super::Caller,
        op: &str,
        object: &str,
        outcome: Outcome,
        detail: &str,
    ) {
        let event = Event {
            time: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            user: caller.user(),
            op,
            object,
            outcome,
            detail,
            via: caller.via().as_str(),
            peer: caller.peer().map(|p| p.to_string()),
        };
        let Ok(mut line) = serde_json::to_string(&event) else {
            return;
        };
        tracing::info!(target: "shoal::audit", "{line}");
        if let Some(file) = &self.file {
            line.push('\n');
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            // One write per line with O_APPEND: lines never interleave.
            if let Err(e) = f.write_all(line.as_bytes()) {
                tracing::error!(error = %e, "writing the audit log failed");
            }
        }
    }
}
