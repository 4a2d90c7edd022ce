//! The ownership seam: the one question the request path and region opens
//! ask about the server's right to its regions — may this server serve and
//! acknowledge for the regions open here *now*, and will it still when the
//! work is done? The host names no cluster type: it holds an
//! `Arc<dyn RegionOwnership>` and asks it.
//!
//! Two implementations: [`SingleNode`] (here), where every region open here
//! is this server's for good; and the cluster's lease-backed one
//! (`ClusterState`, in `cluster/`), where ownership lasts while the etcd
//! lease held when the work began is still held by this server's own clock
//! (docs/cluster.md, rule 3: "no answer without the lease").
//!
//! Invariant: a call is answered, or a write acknowledged, only if the term
//! taken before the work ([`Host::lease_now`]) is still held after it
//! ([`Host::check_lease_since`]); a region is fenced and served only while
//! the term its open began under is held ([`Host::ownership_from_now`]).

use super::Host;
use crate::error::ServiceError;

/// Whether this server may serve and acknowledge for the regions open here.
///
/// Ownership runs in terms: a term is taken before a piece of work begins
/// and checked again when it is done. A term that ended (a lease that
/// lapsed, or was replaced by a newer one after the server rejoined) never
/// holds again, even if a newer term is held by then.
pub(crate) trait RegionOwnership: Send + Sync {
    /// The term held now, as a token for [`RegionOwnership::holds`]; `None`
    /// while none is held (the server answers nothing).
    fn term(&self) -> Option<u64>;

    /// True while the term `term` named is still the one held.
    fn holds(&self, term: u64) -> bool;

    /// True while some term is held (the server may answer at all).
    fn held(&self) -> bool;

    /// The address clients reach the server serving `region` at, when this
    /// server knows another one does (for a "not serving" answer).
    fn owner_addr(&self, region: &str) -> Option<String>;
}

/// A single server: every region open here is its own, always, and no
/// other server serves any.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SingleNode;

impl RegionOwnership for SingleNode {
    fn term(&self) -> Option<u64> {
        Some(0)
    }

    fn holds(&self, _term: u64) -> bool {
        true
    }

    fn held(&self) -> bool {
        true
    }

    fn owner_addr(&self, _region: &str) -> Option<String> {
        None
    }
}

impl Host {
    /// The term this server's ownership runs under now, as a token for
    /// [`Host::check_lease_since`]; refuses while none is held (cluster
    /// mode: the lease was lost).
    pub(crate) fn lease_now(&self) -> Result<Option<u64>, ServiceError> {
        self.inner
            .ownership
            .term()
            .map(Some)
            .ok_or(ServiceError::LeaseLost(
                "a write sent now may or may not have been applied; retry",
            ))
    }

    /// Refuses unless the term `token` names (from [`Host::lease_now`]
    /// before the work began) is still held.
    pub(crate) fn check_lease_since(&self, token: Option<u64>) -> Result<(), ServiceError> {
        match token {
            Some(t) if !self.inner.ownership.holds(t) => Err(ServiceError::LeaseLost(
                "a write sent now may or may not have been applied; retry",
            )),
            _ => self.check_lease(),
        }
    }

    /// Refuses while this server holds no term (cluster mode: its lease).
    pub(crate) fn check_lease(&self) -> Result<(), ServiceError> {
        if self.inner.ownership.held() {
            Ok(())
        } else {
            Err(ServiceError::LeaseLost(
                "a write sent now may or may not have been applied; retry",
            ))
        }
    }

    /// Whether this server may still own a region it starts opening now:
    /// always on a single server; in cluster mode, while the lease held now
    /// is held (not after it lapsed, nor under a newer lease taken after
    /// rejoining — the cluster may have given the region to another server
    /// in between).
    pub(crate) fn ownership_from_now(&self) -> impl Fn() -> bool + Send + Sync + use<> {
        let ownership = self.inner.ownership.clone();
        let term = ownership.term();
        move || term.is_some_and(|t| ownership.holds(t))
    }

    /// The answer for a row whose region another server serves.
    pub(crate) fn not_serving(&self, table: &str, region: &str) -> ServiceError {
        let owner = self
            .inner
            .ownership
            .owner_addr(region)
            .filter(|a| !a.is_empty() && a != self.address());
        ServiceError::NotServing {
            table: table.to_string(),
            region: region.to_string(),
            owner,
            resume_at: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_node_always_holds_its_term() {
        let s = SingleNode;
        let term = s.term().expect("held");
        assert!(s.holds(term) && s.held());
        assert_eq!(s.owner_addr("r1"), None);
    }
}
