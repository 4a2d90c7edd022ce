//! HBase's permission model: actions READ, WRITE, CREATE and ADMIN granted
//! to a user globally, on a namespace (HBase's `@ns`), on a table, or on
//! one family of a table; the grants live in the catalog
//! (`catalog::GrantRecord`), and [`Acl`] answers "may this user do this to
//! that" from them. A grant at a wider scope covers every narrower one: a
//! global READ reads every table, a namespace's READ every table in it, a
//! table's WRITE writes every family of it.

use crate::catalog::GrantRecord;
use crate::catalog::names::{canonical, namespace_of};
use std::collections::HashMap;
use std::fmt;

/// One permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Read rows (get, scan).
    Read,
    /// Write rows (put, delete, increment, append).
    Write,
    /// Create, alter and drop tables.
    Create,
    /// Administer: enable, disable, flush, compact, split, move, grant.
    Admin,
}

impl Action {
    /// Every action, in HBase's letter order.
    pub const ALL: [Action; 4] = [Action::Read, Action::Write, Action::Create, Action::Admin];

    fn bit(self) -> u8 {
        match self {
            Action::Read => 1,
            Action::Write => 2,
            Action::Create => 4,
            Action::Admin => 8,
        }
    }

    /// HBase's letter: R, W, C or A.
    pub fn letter(self) -> char {
        match self {
            Action::Read => 'R',
            Action::Write => 'W',
            Action::Create => 'C',
            Action::Admin => 'A',
        }
    }

    /// HBase's name: READ, WRITE, CREATE or ADMIN.
    pub fn name(self) -> &'static str {
        match self {
            Action::Read => "READ",
            Action::Write => "WRITE",
            Action::Create => "CREATE",
            Action::Admin => "ADMIN",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Actions(u8);

impl Actions {
    /// No action.
    pub const NONE: Actions = Actions(0);

    /// Parses HBase's letters (`"RW"`, `"RWCA"`; case-insensitive). `X`
    /// (EXEC, coprocessor endpoints) is refused: Shoal has none.
    pub fn parse(letters: &str) -> Result<Actions, String> {
        let mut set = Actions::NONE;
        for c in letters.chars() {
            let a = match c.to_ascii_uppercase() {
                'R' => Action::Read,
                'W' => Action::Write,
                'C' => Action::Create,
                'A' => Action::Admin,
                'X' => {
                    return Err(
                        "EXEC (X) is not a Shoal permission: it has no coprocessor endpoints"
                            .into(),
                    );
                }
                other => {
                    return Err(format!(
                        "{other:?} is not a permission; use the letters R (READ), W (WRITE), \
                         C (CREATE) and A (ADMIN)"
                    ));
                }
            };
            set = set.with(a);
        }
        if set.is_empty() {
            return Err("no permission given; use the letters R, W, C and A".into());
        }
        Ok(set)
    }

    /// This set and `a`.
    pub fn with(self, a: Action) -> Actions {
        Actions(self.0 | a.bit())
    }

    /// The union.
    pub fn union(self, other: Actions) -> Actions {
        Actions(self.0 | other.0)
    }

    /// True if `a` is in the set.
    pub fn has(self, a: Action) -> bool {
        self.0 & a.bit() != 0
    }

    /// True if the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The letters, in `RWCA` order.
    pub fn letters(self) -> String {
        Action::ALL
            .iter()
            .filter(|a| self.has(**a))
            .map(|a| a.letter())
            .collect()
    }
}

/// Where a grant applies.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Everything.
    Global,
    /// Every table of one namespace.
    Namespace(String),
    /// One table.
    Table(String),
    /// One family of one table.
    Family(String, String),
}

impl Scope {
    /// The scope of a grant record.
    pub fn of(g: &GrantRecord) -> Scope {
        if let Some(ns) = &g.namespace {
            return Scope::Namespace(ns.clone());
        }
        match (&g.table, &g.family) {
            (None, _) => Scope::Global,
            (Some(t), None) => Scope::Table(t.clone()),
            (Some(t), Some(f)) => Scope::Family(t.clone(), f.clone()),
        }
    }

    /// The table it names, if any.
    pub fn table(&self) -> Option<&str> {
        match self {
            Scope::Global | Scope::Namespace(_) => None,
            Scope::Table(t) | Scope::Family(t, _) => Some(t),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Global => f.write_str("global"),
            Scope::Namespace(ns) => write!(f, "namespace {ns:?}"),
            Scope::Table(t) => write!(f, "table {t:?}"),
            Scope::Family(t, fam) => write!(f, "family {fam:?} of table {t:?}"),
        }
    }
}

/// One user's grants, by scope.
#[derive(Debug, Default)]
struct UserGrants {
    global: Actions,
    namespaces: HashMap<String, Actions>,
    tables: HashMap<String, Actions>,
    families: HashMap<String, HashMap<String, Actions>>,
}

impl UserGrants {
    fn in_namespace(&self, ns: &str, action: Action) -> bool {
        self.global.has(action) || self.namespaces.get(ns).is_some_and(|a| a.has(action))
    }

    fn sees_namespace(&self, ns: &str) -> bool {
        !self.global.is_empty()
            || self.namespaces.get(ns).is_some_and(|a| !a.is_empty())
            || self
                .tables
                .keys()
                .chain(self.families.keys())
                .any(|t| namespace_of(t) == ns)
    }
}

/// The grants of one catalog version, indexed by user and scope so that a
/// check is a few hash lookups with no allocation.
#[derive(Debug, Default)]
pub struct Acl {
    by_user: HashMap<String, UserGrants>,
}

impl Acl {
    /// The ACL the catalog's grants make.
    pub fn from_grants(grants: &[GrantRecord]) -> Acl {
        let mut by_user: HashMap<String, UserGrants> = HashMap::new();
        for g in grants {
            let Ok(actions) = Actions::parse(&g.actions) else {
                // Written by this code only; an unreadable one grants nothing.
                tracing::warn!(user = %g.user, actions = %g.actions, "a grant in the catalog has unknown actions; it grants nothing");
                continue;
            };
            let u = by_user.entry(g.user.clone()).or_default();
            match Scope::of(g) {
                Scope::Global => u.global = u.global.union(actions),
                Scope::Namespace(ns) => {
                    let e = u.namespaces.entry(ns).or_default();
                    *e = e.union(actions);
                }
                Scope::Table(t) => {
                    let e = u.tables.entry(t).or_default();
                    *e = e.union(actions);
                }
                Scope::Family(t, f) => {
                    let e = u.families.entry(t).or_default().entry(f).or_default();
                    *e = e.union(actions);
                }
            }
        }
        Acl { by_user }
    }

    /// True if `user` may do `action` globally.
    pub fn global(&self, user: &str, action: Action) -> bool {
        self.by_user.get(user).is_some_and(|u| u.global.has(action))
    }

    /// True if `user` may do `action` to every table of namespace `ns` (a
    /// global or namespace grant).
    pub fn namespace(&self, user: &str, ns: &str, action: Action) -> bool {
        self.by_user
            .get(user)
            .is_some_and(|u| u.in_namespace(ns, action))
    }

    /// True if `user` may do `action` to the whole of `table` (a global,
    /// namespace or table grant).
    pub fn table(&self, user: &str, table: &str, action: Action) -> bool {
        let table = canonical(table);
        self.by_user.get(user).is_some_and(|u| {
            u.in_namespace(namespace_of(table), action)
                || u.tables.get(table).is_some_and(|a| a.has(action))
        })
    }

    /// True if `user` may do `action` to `family` of `table` (a global,
    /// namespace, table or family grant).
    pub fn family(&self, user: &str, table: &str, family: &str, action: Action) -> bool {
        let table = canonical(table);
        self.by_user.get(user).is_some_and(|u| {
            u.in_namespace(namespace_of(table), action)
                || u.tables.get(table).is_some_and(|a| a.has(action))
                || u.families
                    .get(table)
                    .and_then(|f| f.get(family))
                    .is_some_and(|a| a.has(action))
        })
    }

    /// True if `user` holds any action on namespace `ns` or a table in it
    /// (or globally): the namespace is visible to them.
    pub fn sees_namespace(&self, user: &str, ns: &str) -> bool {
        self.by_user.get(user).is_some_and(|u| u.sees_namespace(ns))
    }

    /// True if `user` holds any action at any scope naming `table` (or
    /// globally): the table is visible to them.
    pub fn sees_table(&self, user: &str, table: &str) -> bool {
        let table = canonical(table);
        self.by_user.get(user).is_some_and(|u| {
            !u.global.is_empty()
                || u.namespaces
                    .get(namespace_of(table))
                    .is_some_and(|a| !a.is_empty())
                || u.tables.get(table).is_some_and(|a| !a.is_empty())
                || u.families
                    .get(table)
                    .is_some_and(|f| f.values().any(|a| !a.is_empty()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(user: &str, table: Option<&str>, family: Option<&str>, a: &str) -> GrantRecord {
        GrantRecord {
            user: user.into(),
            table: table.map(Into::into),
            family: family.map(Into::into),
            namespace: None,
            actions: a.into(),
        }
    }

    #[test]
    fn a_namespace_grant_covers_its_tables_only() {
        let mut g = grant("n", None, None, "RW");
        g.namespace = Some("ns1".into());
        let acl = Acl::from_grants(&[g]);
        assert!(acl.table("n", "ns1:t", Action::Write));
        assert!(acl.family("n", "ns1:t", "cf", Action::Read));
        assert!(!acl.table("n", "ns2:t", Action::Read));
        assert!(
            !acl.table("n", "t", Action::Read),
            "default is another namespace"
        );
        assert!(!acl.global("n", Action::Read));
        assert!(acl.namespace("n", "ns1", Action::Read));
        assert!(!acl.namespace("n", "ns1", Action::Create));
        assert!(acl.sees_table("n", "ns1:x") && !acl.sees_table("n", "x"));
        assert!(acl.sees_namespace("n", "ns1") && !acl.sees_namespace("n", "default"));
        let acl = Acl::from_grants(&[grant("t", Some("ns2:t"), None, "R")]);
        assert!(
            acl.sees_namespace("t", "ns2"),
            "a table in it shows the namespace"
        );
        assert!(acl.table("t", "ns2:t", Action::Read));
        let acl = Acl::from_grants(&[grant("d", Some("t"), None, "R")]);
        assert!(acl.table("d", "default:t", Action::Read), "default:t is t");
    }

    #[test]
    fn letters_parse_and_print_in_hbase_order() {
        assert_eq!(Actions::parse("awrc").expect("parse").letters(), "RWCA");
        assert_eq!(Actions::parse("R").expect("parse").letters(), "R");
        assert!(Actions::parse("").is_err());
        assert!(Actions::parse("RX").expect_err("exec").contains("EXEC"));
        assert!(Actions::parse("RZ").expect_err("bad").contains("'Z'"));
    }

    #[test]
    fn wider_scopes_cover_narrower_ones_and_not_the_reverse() {
        let acl = Acl::from_grants(&[
            grant("g", None, None, "R"),
            grant("t", Some("t1"), None, "RW"),
            grant("f", Some("t1"), Some("cf"), "W"),
        ]);
        assert!(acl.family("g", "any", "cf", Action::Read));
        assert!(!acl.family("g", "any", "cf", Action::Write));
        assert!(acl.table("t", "t1", Action::Write));
        assert!(acl.family("t", "t1", "x", Action::Read));
        assert!(!acl.table("t", "t2", Action::Read));
        assert!(!acl.global("t", Action::Read));
        assert!(acl.family("f", "t1", "cf", Action::Write));
        assert!(!acl.family("f", "t1", "other", Action::Write));
        assert!(
            !acl.table("f", "t1", Action::Write),
            "a family grant is not the table"
        );
        assert!(acl.sees_table("f", "t1") && !acl.sees_table("f", "t2"));
        assert!(acl.sees_table("g", "t2"));
        assert!(!acl.sees_table("nobody", "t1"));
    }
}
