//! Sending each call to the server that serves its row.
//!
//! A single server serves every region, and the router stays out of the
//! way: calls go to the connection that answered first. In a cluster a
//! server asked for a row of a region it does not serve answers
//! "not serving" (UNAVAILABLE with the `shoal-not-serving` header, or the
//! same words in a per-row status); the router then fetches the table's
//! region map (from any server that answers), caches it, and sends each
//! call to the owner of its row, connecting on first use. A call that meets
//! a dead server, a region in motion or a server that lost its lease
//! invalidates the table's map and is retried (re-routed) with jittered
//! backoff within [`ClientOptions::retry_deadline`]. Table changes go to
//! the master; a server that is not the master says who is.
//!
//! The lower layers (a single RPC, the write combiner, a MultiMutate) make
//! one attempt each; retrying lives here, so a retry can go elsewhere.

use crate::Transport;
use crate::combine::Combiner;
use crate::retry::{Backoff, Idempotence, should_retry};
use crate::{ClientError, ClientOptions};
use shoal_proto::v1 as pb;
use shoal_proto::v1::admin_client::AdminClient;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// One server's connection.
#[derive(Debug, Clone)]
pub(crate) struct Conn {
    pub(crate) addr: String,
    pub(crate) data: crate::data_stub::DataStub,
    pub(crate) admin: AdminClient<Transport>,
    pub(crate) combiner: Option<Combiner>,
}

/// One region's place in a cached map.
#[derive(Debug, Clone)]
struct Loc {
    start: Vec<u8>,
    end: Vec<u8>,
    server: String,
}

/// Connections by address and region maps by table.
#[derive(Debug)]
pub(crate) struct Router {
    /// The addresses the client was given.
    seeds: Vec<String>,
    /// The connection calls go to when no map says otherwise.
    default: Mutex<Conn>,
    conns: Mutex<HashMap<String, Conn>>,
    /// Tables whose calls are routed: `None` = map to be fetched.
    maps: RwLock<HashMap<String, Option<Arc<Vec<Loc>>>>>,
    master: Mutex<Option<String>>,
    /// Options of the single attempts (no retries of their own).
    pub(crate) attempt_options: ClientOptions,
}

/// The options of one attempt: no retries below the router.
pub(crate) fn single_attempt(options: &ClientOptions) -> ClientOptions {
    ClientOptions {
        retry_deadline: std::time::Duration::ZERO,
        ..options.clone()
    }
}

/// True if the status says the row's region is not served by that server.
pub(crate) fn is_not_serving(status: &tonic::Status) -> bool {
    status
        .metadata()
        .contains_key(shoal_proto::NOT_SERVING_HEADER)
        || (status.code() == tonic::Code::Unavailable
            && status.message().contains(shoal_proto::NOT_SERVING_TEXT))
}

fn is_lease_lost(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Aborted && status.message().contains(shoal_proto::LEASE_LOST_TEXT)
}

fn is_not_master(status: &tonic::Status) -> bool {
    status
        .metadata()
        .contains_key(shoal_proto::NOT_MASTER_HEADER)
        || status.message().contains(shoal_proto::NOT_MASTER_TEXT)
}

/// A failure of the connection itself (the server may be gone).
fn is_transport(status: &tonic::Status) -> bool {
    std::error::Error::source(status).is_some()
}

/// Worth another attempt, possibly at another server.
pub(crate) fn retryable(status: &tonic::Status, kind: Idempotence) -> bool {
    // Not serving / not master: refused before anything was applied.
    is_not_serving(status)
        || is_not_master(status)
        || (is_lease_lost(status) && kind == Idempotence::Idempotent)
        || should_retry(status, kind)
}

impl Router {
    pub(crate) fn new(seeds: Vec<String>, default: Conn, options: &ClientOptions) -> Router {
        let mut conns = HashMap::new();
        conns.insert(default.addr.clone(), default.clone());
        Router {
            seeds,
            default: Mutex::new(default),
            conns: Mutex::new(conns),
            maps: RwLock::default(),
            master: Mutex::new(None),
            attempt_options: single_attempt(options),
        }
    }

    fn default_conn(&self) -> Conn {
        self.default
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The connection to `addr`, made on first use.
    async fn conn(&self, addr: &str) -> Result<Conn, ClientError> {
        if let Some(c) = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(addr)
        {
            return Ok(c.clone());
        }
        let c = crate::Client::connect_conn(addr, &self.attempt_options).await?;
        self.conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(addr.to_owned(), c.clone());
        Ok(c)
    }

    /// Every address worth asking for a map: the default first, then the
    /// seeds, then every server seen.
    fn candidates(&self) -> Vec<String> {
        let mut out = vec![self.default_conn().addr];
        for a in &self.seeds {
            if !out.contains(a) {
                out.push(a.clone());
            }
        }
        for a in self.conns.lock().unwrap_or_else(|e| e.into_inner()).keys() {
            if !out.contains(a) {
                out.push(a.clone());
            }
        }
        out
    }

    /// Fetches `table`'s region map from the first server that answers;
    /// that server becomes the default.
    async fn refresh(&self, table: &str) {
        for addr in self.candidates() {
            let Ok(mut conn) = self.conn(&addr).await else {
                continue;
            };
            let req = pb::RegionMapRequest {
                table: table.to_owned(),
            };
            match conn.data.region_map(req).await {
                Ok(resp) => {
                    let locs: Vec<Loc> = resp
                        .into_inner()
                        .regions
                        .into_iter()
                        .map(|r| Loc {
                            start: r.start_row,
                            end: r.end_row,
                            server: r.server,
                        })
                        .collect();
                    self.maps
                        .write()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(table.to_owned(), Some(Arc::new(locs)));
                    *self.default.lock().unwrap_or_else(|e| e.into_inner()) = conn;
                    return;
                }
                Err(s) if is_transport(&s) => {
                    self.conns
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&addr);
                }
                Err(_) => {
                    // The table may not exist (yet); the call itself says so.
                    *self.default.lock().unwrap_or_else(|e| e.into_inner()) = conn;
                    return;
                }
            }
        }
    }

    /// The connection for `row` of `table` (`reverse`: the row just below
    /// `row`; an empty `row` then means the table's last row).
    pub(crate) async fn conn_for(&self, table: &str, row: &[u8], reverse: bool) -> Conn {
        let entry = self
            .maps
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(table)
            .cloned();
        let map = match entry {
            None => return self.default_conn(),
            Some(Some(map)) => map,
            Some(None) => {
                self.refresh(table).await;
                match self
                    .maps
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(table)
                {
                    Some(Some(m)) => m.clone(),
                    _ => return self.default_conn(),
                }
            }
        };
        let found = map.iter().find(|l| {
            if reverse {
                (l.start.is_empty() || row.is_empty() || l.start.as_slice() < row)
                    && (l.end.is_empty() || (!row.is_empty() && row <= l.end.as_slice()))
            } else {
                l.start.as_slice() <= row && (l.end.is_empty() || row < l.end.as_slice())
            }
        });
        match found {
            Some(l) => match self.conn(&l.server).await {
                Ok(c) => c,
                Err(_) => {
                    self.invalidate(table);
                    self.default_conn()
                }
            },
            None => self.default_conn(),
        }
    }

    /// The table's map is stale: fetch it again before the next call.
    pub(crate) fn invalidate(&self, table: &str) {
        self.maps
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(table.to_owned(), None);
    }

    /// As [`Router::note_failure`], for a call of `row`: a not-serving
    /// answer that names the region's owner now (as HBase's
    /// RegionMovedException does) re-points that region in the cached map
    /// instead of dropping the whole map, so the next attempt goes straight
    /// to the new owner without fetching the map. True when the map now
    /// names that owner (re-pointed here, or already by a concurrent call
    /// that met the same move): the call may be retried there at once.
    pub(crate) fn note_failure_at(&self, table: &str, row: &[u8], status: &tonic::Status) -> bool {
        let owner = status
            .metadata()
            .get(shoal_proto::OWNER_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|_| is_not_serving(status));
        if let Some(owner) = owner {
            let mut maps = self.maps.write().unwrap_or_else(|e| e.into_inner());
            let next = match maps.get(table) {
                Some(Some(map)) => repointed(map, row, owner),
                _ => Repoint::Unknown,
            };
            match next {
                Repoint::To(next) => {
                    maps.insert(table.to_owned(), Some(Arc::new(next)));
                    return true;
                }
                Repoint::Already => return true,
                Repoint::Unknown => {}
            }
        }
        self.note_failure(table, status);
        false
    }

    /// Learns from a failed call: a not-serving answer or a dead server
    /// makes the table's map stale (and routed from now on); a dead
    /// default server is replaced by the next that answers.
    pub(crate) fn note_failure(&self, table: &str, status: &tonic::Status) {
        if is_not_serving(status) || is_lease_lost(status) {
            self.invalidate(table);
        } else if is_transport(status) || status.code() == tonic::Code::Unavailable {
            let routed = self
                .maps
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(table);
            if routed || self.seeds.len() > 1 {
                self.invalidate(table);
            }
        }
    }

    /// The connection table changes go to: the master if known.
    pub(crate) async fn admin_conn(&self) -> Conn {
        let master = self
            .master
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(m) = master
            && let Ok(c) = self.conn(&m).await
        {
            return c;
        }
        self.default_conn()
    }

    /// Learns from a failed admin call: a named master, or a dead server.
    pub(crate) async fn note_admin_failure(&self, status: &tonic::Status) {
        if let Some(m) = status
            .metadata()
            .get(shoal_proto::MASTER_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            *self.master.lock().unwrap_or_else(|e| e.into_inner()) = Some(m.to_owned());
            return;
        }
        if is_transport(status) || is_not_master(status) {
            *self.master.lock().unwrap_or_else(|e| e.into_inner()) = None;
            // Move the default to a server that answers.
            for addr in self.candidates().into_iter().skip(1) {
                if let Ok(c) = self.conn(&addr).await {
                    *self.default.lock().unwrap_or_else(|e| e.into_inner()) = c;
                    return;
                }
            }
        }
    }
}

/// What a not-serving answer naming a region's owner does to the map.
#[derive(Debug)]
enum Repoint {
    /// The map with the region holding the row served by the owner.
    To(Vec<Loc>),
    /// The map already says so: another call met the same move first (a
    /// server never names itself, so the answer came from another).
    Already,
    /// No region of the map holds the row: the map is fetched again.
    Unknown,
}

/// `map` re-pointed for the region holding `row` to `owner`.
fn repointed(map: &[Loc], row: &[u8], owner: &str) -> Repoint {
    let Some(i) = map
        .iter()
        .position(|l| l.start.as_slice() <= row && (l.end.is_empty() || row < l.end.as_slice()))
    else {
        return Repoint::Unknown;
    };
    if map[i].server == owner {
        return Repoint::Already;
    }
    let mut next = map.to_vec();
    next[i].server = owner.to_owned();
    Repoint::To(next)
}

/// Runs `call` on the connection for `row` of `table`, re-routing and
/// retrying per the module comment.
pub(crate) async fn routed<T, F, Fut>(
    client: &crate::Client,
    table: &str,
    row: &[u8],
    kind: Idempotence,
    call: F,
) -> Result<T, ClientError>
where
    F: Fn(Conn) -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    let router = &client.router;
    retry_with(
        &client.options,
        kind,
        || router.conn_for(table, row, false),
        call,
        |status| std::future::ready(router.note_failure_at(table, row, &status)),
    )
    .await
}

/// Runs an admin `call` at the master (or any server when there is no
/// cluster), retrying per the module comment.
pub(crate) async fn at_master<T, F, Fut>(
    client: &crate::Client,
    kind: Idempotence,
    call: F,
) -> Result<T, ClientError>
where
    F: Fn(Conn) -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    let router = &client.router;
    retry_with(
        &client.options,
        kind,
        || router.admin_conn(),
        call,
        |status| async move {
            router.note_admin_failure(&status).await;
            false
        },
    )
    .await
}

/// Retries at once (no backoff) per call when the failure named where to
/// go instead (a region that moved): at most this many, then backoff.
const REDIRECTS_AT_ONCE: u32 = 3;

/// The one retry loop: picks a connection with `pick`, runs `call`, lets
/// `learn` see each failure, retries what is retryable with backoff (or at
/// once when `learn` says the failure pointed at a new place to ask, up to
/// [`REDIRECTS_AT_ONCE`] times).
async fn retry_with<T, C, P, PF, F, Fut, L, LF>(
    options: &crate::ClientOptions,
    kind: Idempotence,
    pick: P,
    call: F,
    learn: L,
) -> Result<T, ClientError>
where
    P: Fn() -> PF,
    PF: std::future::Future<Output = C>,
    F: Fn(C) -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
    L: Fn(tonic::Status) -> LF,
    LF: std::future::Future<Output = bool>,
{
    let mut backoff = Backoff::new(options);
    let mut redirects = 0;
    loop {
        match call(pick().await).await {
            Ok(v) => return Ok(v),
            Err(status) => {
                let redirected = learn(status.clone()).await;
                if !retryable(&status, kind) {
                    return Err(status.into());
                }
                if redirected && redirects < REDIRECTS_AT_ONCE {
                    redirects += 1;
                    tracing::debug!(
                        message = status.message(),
                        "retrying at once where the answer pointed"
                    );
                    continue;
                }
                match backoff.next_delay() {
                    Some(d) => {
                        tracing::debug!(code = ?status.code(), message = status.message(), delay = ?d, "retrying");
                        tokio::time::sleep(d).await;
                    }
                    None => return Err(status.into()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(start: &str, end: &str, server: &str) -> Loc {
        Loc {
            start: start.as_bytes().to_vec(),
            end: end.as_bytes().to_vec(),
            server: server.to_owned(),
        }
    }

    /// A call failing `fails` times, each time pointed elsewhere.
    async fn redirected(fails: u32) -> std::time::Duration {
        let options = crate::ClientOptions {
            initial_backoff: std::time::Duration::from_secs(1),
            max_backoff: std::time::Duration::from_secs(1),
            retry_deadline: std::time::Duration::from_secs(60),
            ..crate::ClientOptions::default()
        };
        let calls = std::sync::atomic::AtomicU32::new(0);
        let start = tokio::time::Instant::now();
        let answer = retry_with(
            &options,
            Idempotence::Idempotent,
            || std::future::ready(()),
            |()| {
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                std::future::ready(if n < fails {
                    Err(tonic::Status::unavailable("moved"))
                } else {
                    Ok(n)
                })
            },
            |_| std::future::ready(true),
        )
        .await;
        assert_eq!(answer.expect("answered"), fails);
        start.elapsed()
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_pointed_elsewhere_is_retried_at_once_a_few_times() {
        assert!(redirected(REDIRECTS_AT_ONCE).await.is_zero());
        // One more: the backoff applies again (a loop of stale answers).
        assert!(!redirected(REDIRECTS_AT_ONCE + 1).await.is_zero());
    }

    #[test]
    fn a_moved_region_is_repointed_and_nothing_else() {
        let map = vec![
            loc("", "g", "a:1"),
            loc("g", "p", "b:1"),
            loc("p", "", "c:1"),
        ];
        let to = |r: Repoint| match r {
            Repoint::To(next) => next,
            other => panic!("not re-pointed: {other:?}"),
        };
        let next = to(repointed(&map, b"k", "c:1"));
        let servers: Vec<&str> = next.iter().map(|l| l.server.as_str()).collect();
        assert_eq!(servers, ["a:1", "c:1", "c:1"]);
        // The last region (empty end) and the first (empty start).
        assert_eq!(to(repointed(&map, b"z", "a:1"))[2].server, "a:1");
        assert_eq!(to(repointed(&map, b"", "b:1"))[0].server, "b:1");
        // Already there (a concurrent call met the move first): kept.
        assert!(matches!(repointed(&map, b"k", "b:1"), Repoint::Already));
        // No region holds the row (a map with a gap): fetched again.
        assert!(matches!(
            repointed(&[loc("a", "b", "a:1")], b"c", "b:1"),
            Repoint::Unknown
        ));
    }
}
