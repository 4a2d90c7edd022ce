//! Permission grants in the catalog: granting, revoking and listing, each a
//! catalog commit (by the master in cluster mode, so every server reads the
//! same grants with the catalog), and the permissions in force refreshed
//! from the committed catalog.

use super::Host;
use crate::catalog::{Catalog, CatalogStore, GrantRecord};
use crate::error::ServiceError;
use crate::security::permissions::{Actions, Scope};

/// A grant request checked: the scope and the actions.
#[derive(Debug, Clone)]
pub struct GrantSpec {
    /// The user.
    pub user: String,
    /// Where.
    pub scope: Scope,
    /// What (empty for a revoke).
    pub actions: Actions,
}

impl GrantSpec {
    /// Checks a request's fields; `actions` is ignored when `revoke`. A
    /// `table` of `@ns` names namespace `ns` (as in HBase's shell).
    pub fn parse(
        user: &str,
        table: &str,
        family: &str,
        actions: &str,
        revoke: bool,
    ) -> Result<GrantSpec, ServiceError> {
        if !crate::security::tokens::valid_user(user) {
            return Err(ServiceError::InvalidArgument(format!(
                "user {}: 1 to 128 letters, digits and `_ - . @`",
                crate::error::shown(user)
            )));
        }
        let scope = match (table, family) {
            ("", "") => Scope::Global,
            ("", _) => {
                return Err(ServiceError::InvalidArgument(
                    "a family grant needs its table".into(),
                ));
            }
            (t, "") if t.starts_with('@') => {
                let ns = &t[1..];
                crate::catalog::validate_namespace_name(ns)
                    .map_err(ServiceError::InvalidArgument)?;
                Scope::Namespace(ns.to_string())
            }
            (t, _) if t.starts_with('@') => {
                return Err(ServiceError::InvalidArgument(
                    "a namespace grant (@ns) takes no family".into(),
                ));
            }
            (t, "") => Scope::Table(crate::catalog::names::canonical(t).to_string()),
            (t, f) => Scope::Family(
                crate::catalog::names::canonical(t).to_string(),
                f.to_string(),
            ),
        };
        let actions = if revoke {
            Actions::NONE
        } else {
            Actions::parse(actions).map_err(ServiceError::InvalidArgument)?
        };
        Ok(GrantSpec {
            user: user.to_string(),
            scope,
            actions,
        })
    }

    fn matches(&self, g: &GrantRecord) -> bool {
        g.user == self.user && Scope::of(g) == self.scope
    }

    fn record(&self) -> GrantRecord {
        let (table, family, namespace) = match &self.scope {
            Scope::Global => (None, None, None),
            Scope::Namespace(ns) => (None, None, Some(ns.clone())),
            Scope::Table(t) => (Some(t.clone()), None, None),
            Scope::Family(t, f) => (Some(t.clone()), Some(f.clone()), None),
        };
        GrantRecord {
            user: self.user.clone(),
            table,
            family,
            namespace,
            actions: self.actions.letters(),
        }
    }
}

/// `grants` with `spec` applied: the user's actions at the scope replaced
/// (a grant) or removed (a revoke, `spec.actions` empty). Sorted by user,
/// then scope, so the catalog's bytes do not depend on the order of calls.
fn apply(grants: &mut Vec<GrantRecord>, spec: &GrantSpec) -> bool {
    let before = grants.len();
    grants.retain(|g| !spec.matches(g));
    let removed = grants.len() != before;
    if !spec.actions.is_empty() {
        grants.push(spec.record());
    }
    grants.sort_by(|a, b| {
        (&a.user, &a.namespace, &a.table, &a.family).cmp(&(
            &b.user,
            &b.namespace,
            &b.table,
            &b.family,
        ))
    });
    removed || !spec.actions.is_empty()
}

impl Host {
    /// Applies a grant or revoke to the catalog. The table (and family)
    /// must exist. Returns false for a revoke of nothing.
    pub(crate) async fn change_grant(&self, spec: &GrantSpec) -> Result<bool, ServiceError> {
        let check = |next: &Catalog| -> Result<(), ServiceError> {
            if let Scope::Namespace(ns) = &spec.scope
                && !spec.actions.is_empty()
                && !next.has_namespace(ns)
            {
                return Err(ServiceError::NoSuchNamespace(ns.clone()));
            }
            if let Some(t) = spec.scope.table() {
                let record = next
                    .table(t)
                    .ok_or_else(|| ServiceError::NoSuchTable(t.to_string()))?;
                if let Scope::Family(_, f) = &spec.scope
                    && !spec.actions.is_empty()
                    && !record.families.iter().any(|x| &x.name == f)
                {
                    return Err(ServiceError::NoSuchFamily {
                        table: t.to_string(),
                        family: f.clone(),
                    });
                }
            }
            Ok(())
        };
        let mut changed = false;
        if self.inner.cluster.is_some() {
            self.commit_as_master(|next| {
                check(next)?;
                changed = apply(&mut next.grants, spec);
                Ok(())
            })
            .await?;
            return Ok(changed);
        }
        let mut catalog = self.inner.catalog.lock().await;
        let mut next = catalog.current().clone();
        check(&next)?;
        changed = apply(&mut next.grants, spec);
        if changed {
            catalog.commit(next).await?;
            self.refresh_grants(&catalog);
        }
        Ok(changed)
    }

    /// The grants now in the catalog.
    pub(crate) async fn grants(&self) -> Vec<GrantRecord> {
        self.inner.catalog.lock().await.current().grants.clone()
    }

    /// Takes the committed catalog's grants as the permissions in force.
    pub(crate) fn refresh_grants(&self, catalog: &CatalogStore) {
        self.inner.security.set_grants(catalog.current());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_replaces_the_scope_and_a_revoke_removes_it() {
        let mut g = Vec::new();
        let spec = |u: &str, t: &str, a: &str, revoke| {
            GrantSpec::parse(u, t, "", a, revoke).expect("spec")
        };
        assert!(apply(&mut g, &spec("bob", "t", "RW", false)));
        assert!(apply(&mut g, &spec("alice", "", "A", false)));
        assert!(apply(&mut g, &spec("bob", "t", "R", false)));
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].user, "alice");
        assert_eq!(g[1].actions, "R", "replaced, not merged");
        assert!(apply(&mut g, &spec("bob", "t", "", true)));
        assert!(!apply(&mut g, &spec("bob", "t", "", true)), "nothing left");
        assert_eq!(g.len(), 1);
        assert!(GrantSpec::parse("bob", "", "cf", "R", false).is_err());
        assert!(GrantSpec::parse("b b", "t", "", "R", false).is_err());
        assert!(GrantSpec::parse("bob", "t", "", "Q", false).is_err());
        let ns = GrantSpec::parse("bob", "@ns1", "", "RW", false).expect("ns");
        assert_eq!(ns.scope, Scope::Namespace("ns1".into()));
        assert_eq!(ns.record().namespace.as_deref(), Some("ns1"));
        assert!(GrantSpec::parse("bob", "@ns1", "cf", "R", false).is_err());
        assert!(GrantSpec::parse("bob", "@bad-ns", "", "R", false).is_err());
        let d = GrantSpec::parse("bob", "default:t", "", "R", false).expect("default");
        assert_eq!(d.scope, Scope::Table("t".into()));
    }
}
