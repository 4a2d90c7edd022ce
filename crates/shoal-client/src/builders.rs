//! Request builders: plain values that turn into the protobuf messages
//! ([`Get`], [`Scan`], [`RowMutation`]).

use shoal_proto::v1 as pb;

/// Adds HBase-style column specs: `family` (the whole family) or
/// `family:qualifier` (split at the first `:`; families have no `:`).
fn add_specs<I, S>(columns: &mut Vec<pb::ColumnSelector>, specs: I)
where
    I: IntoIterator<Item = S>,
    S: AsRef<[u8]>,
{
    for spec in specs {
        let spec = spec.as_ref();
        match spec.iter().position(|&b| b == b':') {
            Some(i) => add_column(columns, &spec[..i], Some(&spec[i + 1..])),
            None => add_column(columns, spec, None),
        }
    }
}

/// Adds a column (or a whole family when `qualifier` is `None`) to a
/// selection; a whole family absorbs any column of it, in either order.
fn add_column(columns: &mut Vec<pb::ColumnSelector>, family: &[u8], qualifier: Option<&[u8]>) {
    match columns.iter_mut().find(|c| c.family == family) {
        Some(sel) => match qualifier {
            // Already the whole family.
            _ if sel.qualifiers.is_empty() => {}
            Some(q) => {
                if !sel.qualifiers.iter().any(|x| x == q) {
                    sel.qualifiers.push(q.to_vec());
                }
            }
            None => sel.qualifiers.clear(),
        },
        None => columns.push(pb::ColumnSelector {
            family: family.to_vec(),
            qualifiers: qualifier.map(<[u8]>::to_vec).into_iter().collect(),
        }),
    }
}

/// A read of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Get {
    pub(crate) spec: pb::GetSpec,
}

impl Get {
    /// The newest version of every column of `row`.
    pub fn new(row: impl AsRef<[u8]>) -> Get {
        Get {
            spec: pb::GetSpec {
                row: bytes::Bytes::copy_from_slice(row.as_ref()),
                ..Default::default()
            },
        }
    }

    /// Adds a whole family.
    pub fn family(mut self, family: impl AsRef<[u8]>) -> Get {
        add_column(&mut self.spec.columns, family.as_ref(), None);
        self
    }

    /// Adds one column.
    pub fn column(mut self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Get {
        add_column(
            &mut self.spec.columns,
            family.as_ref(),
            Some(qualifier.as_ref()),
        );
        self
    }

    /// Adds columns written `family` or `family:qualifier`.
    pub fn columns<I, S>(mut self, specs: I) -> Get
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        add_specs(&mut self.spec.columns, specs);
        self
    }

    /// Versions per column (default 1).
    pub fn versions(mut self, n: u32) -> Get {
        self.spec.max_versions = n;
        self
    }

    /// Only versions with `min <= timestamp < max`.
    pub fn time_range(mut self, min: i64, max: i64) -> Get {
        self.spec.time_range = Some(pb::TimeRange { min, max });
        self
    }

    /// Only the version at exactly `timestamp`.
    pub fn timestamp(self, timestamp: i64) -> Get {
        self.time_range(timestamp, timestamp.saturating_add(1))
    }

    /// The wire form.
    pub fn into_proto(self) -> pb::GetSpec {
        self.spec
    }
}

/// A scan of a row range.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scan {
    pub(crate) req: pb::ScanRequest,
}

impl Scan {
    /// Every row of the table.
    pub fn new() -> Scan {
        Scan::default()
    }

    /// First row (inclusive).
    pub fn start(mut self, row: impl AsRef<[u8]>) -> Scan {
        self.req.start_row = row.as_ref().to_vec();
        self
    }

    /// Row to stop before (exclusive).
    pub fn stop(mut self, row: impl AsRef<[u8]>) -> Scan {
        self.req.stop_row = row.as_ref().to_vec();
        self
    }

    /// Rows starting with `prefix`.
    pub fn prefix(mut self, prefix: impl AsRef<[u8]>) -> Scan {
        let p = prefix.as_ref().to_vec();
        let mut stop = p.clone();
        while let Some(last) = stop.pop() {
            if last < 0xff {
                stop.push(last + 1);
                break;
            }
        }
        self.req.start_row = p;
        self.req.stop_row = stop;
        self
    }

    /// Adds a whole family.
    pub fn family(mut self, family: impl AsRef<[u8]>) -> Scan {
        add_column(&mut self.req.columns, family.as_ref(), None);
        self
    }

    /// Adds one column.
    pub fn column(mut self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Scan {
        add_column(
            &mut self.req.columns,
            family.as_ref(),
            Some(qualifier.as_ref()),
        );
        self
    }

    /// Adds columns written `family` or `family:qualifier`.
    pub fn columns<I, S>(mut self, specs: I) -> Scan
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        add_specs(&mut self.req.columns, specs);
        self
    }

    /// Most rows returned (0 = no limit).
    pub fn limit(mut self, n: u64) -> Scan {
        self.req.limit = n;
        self
    }

    /// Most cells per returned row chunk (0 = whole rows).
    pub fn batch(mut self, n: u32) -> Scan {
        self.req.batch = n;
        self
    }

    /// Versions per column.
    pub fn versions(mut self, n: u32) -> Scan {
        self.req.max_versions = n;
        self
    }

    /// Only versions with `min <= timestamp < max`.
    pub fn time_range(mut self, min: i64, max: i64) -> Scan {
        self.req.time_range = Some(pb::TimeRange { min, max });
        self
    }

    /// Rows of the range `[start, stop)` in descending order.
    pub fn reverse(mut self) -> Scan {
        self.req.reverse = true;
        self
    }

    /// Do not let this scan's blocks enter the block cache.
    pub fn skip_cache(mut self) -> Scan {
        self.req.skip_cache = true;
        self
    }

    /// Only rows that pass `filter`, in HBase's filter language, e.g.
    /// `"PrefixFilter('user1') AND KeyOnlyFilter()"` (docs/filters.md). The
    /// server refuses a string it cannot parse, naming what is wrong.
    pub fn filter(mut self, filter: impl Into<String>) -> Scan {
        self.req.filter = filter.into();
        self
    }

    /// Rows per streamed message.
    pub fn rows_per_message(mut self, n: u32) -> Scan {
        self.req.rows_per_message = n;
        self
    }

    /// The wire form (without the table name).
    pub fn into_proto(self) -> pb::ScanRequest {
        self.req
    }
}

/// Changes to one row, applied atomically.
#[derive(Debug, Clone, PartialEq)]
pub struct RowMutation {
    pub(crate) m: pb::RowMutation,
}

impl RowMutation {
    /// A mutation of `row` with no changes yet.
    pub fn new(row: impl AsRef<[u8]>) -> RowMutation {
        RowMutation {
            m: pb::RowMutation {
                row: bytes::Bytes::copy_from_slice(row.as_ref()),
                mutations: Vec::new(),
            },
        }
    }

    fn push(mut self, kind: pb::mutation::Kind) -> RowMutation {
        self.m.mutations.push(pb::Mutation { kind: Some(kind) });
        self
    }

    /// Puts a value at the server's current time.
    pub fn put(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> RowMutation {
        self.push(pb::mutation::Kind::Put(pb::Put {
            family: bytes::Bytes::copy_from_slice(family.as_ref()),
            qualifier: bytes::Bytes::copy_from_slice(qualifier.as_ref()),
            timestamp: None,
            value: bytes::Bytes::copy_from_slice(value.as_ref()),
        }))
    }

    /// Puts a value at an explicit timestamp.
    pub fn put_at(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
        value: impl AsRef<[u8]>,
    ) -> RowMutation {
        self.push(pb::mutation::Kind::Put(pb::Put {
            family: bytes::Bytes::copy_from_slice(family.as_ref()),
            qualifier: bytes::Bytes::copy_from_slice(qualifier.as_ref()),
            timestamp: Some(timestamp),
            value: bytes::Bytes::copy_from_slice(value.as_ref()),
        }))
    }

    fn delete(
        self,
        kind: pb::DeleteKind,
        family: &[u8],
        qualifier: &[u8],
        timestamp: Option<i64>,
    ) -> RowMutation {
        self.push(pb::mutation::Kind::Delete(pb::Delete {
            kind: kind as i32,
            family: family.to_vec(),
            qualifier: qualifier.to_vec(),
            timestamp,
        }))
    }

    /// Deletes the newest version of a column (or the one at `timestamp`).
    pub fn delete_version(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: Option<i64>,
    ) -> RowMutation {
        self.delete(
            pb::DeleteKind::Version,
            family.as_ref(),
            qualifier.as_ref(),
            timestamp,
        )
    }

    /// Deletes every version of a column (at or below `timestamp`).
    pub fn delete_column(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: Option<i64>,
    ) -> RowMutation {
        self.delete(
            pb::DeleteKind::Column,
            family.as_ref(),
            qualifier.as_ref(),
            timestamp,
        )
    }

    /// Deletes every column of a family (at or below `timestamp`).
    pub fn delete_family(self, family: impl AsRef<[u8]>, timestamp: Option<i64>) -> RowMutation {
        self.delete(pb::DeleteKind::Family, family.as_ref(), b"", timestamp)
    }

    /// Deletes every column of a family at exactly `timestamp`.
    pub fn delete_family_version(self, family: impl AsRef<[u8]>, timestamp: i64) -> RowMutation {
        self.delete(
            pb::DeleteKind::FamilyVersion,
            family.as_ref(),
            b"",
            Some(timestamp),
        )
    }

    /// Deletes the whole row (at or below `timestamp`).
    pub fn delete_row(self, timestamp: Option<i64>) -> RowMutation {
        self.delete(pb::DeleteKind::Row, b"", b"", timestamp)
    }

    /// The row.
    pub fn row(&self) -> &[u8] {
        &self.m.row
    }

    /// The number of changes.
    pub fn len(&self) -> usize {
        self.m.mutations.len()
    }

    /// True if there are no changes yet.
    pub fn is_empty(&self) -> bool {
        self.m.mutations.is_empty()
    }

    /// The wire form.
    pub fn into_proto(self) -> pb::RowMutation {
        self.m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_columns_merge_by_family() {
        let g = Get::new("r")
            .column("cf", "a")
            .column("cf", "b")
            .column("cf", "a");
        assert_eq!(g.spec.columns.len(), 1);
        assert_eq!(
            g.spec.columns[0].qualifiers,
            vec![b"a".to_vec(), b"b".to_vec()]
        );
        let g = g.family("cf");
        assert!(g.spec.columns[0].qualifiers.is_empty(), "whole family wins");
        let g = g.column("cf", "c");
        assert!(g.spec.columns[0].qualifiers.is_empty(), "in either order");
    }

    #[test]
    fn get_options_fill_the_spec() {
        let g = Get::new("r")
            .columns(["cf:a", "meta", "cf:b:c"])
            .versions(3)
            .time_range(10, 20)
            .into_proto();
        assert_eq!(g.row, &b"r"[..]);
        assert_eq!(g.max_versions, 3);
        assert_eq!(g.time_range, Some(pb::TimeRange { min: 10, max: 20 }));
        assert_eq!(g.columns.len(), 2);
        assert_eq!(g.columns[0].family, b"cf");
        assert_eq!(
            g.columns[0].qualifiers,
            vec![b"a".to_vec(), b"b:c".to_vec()]
        );
        assert_eq!(g.columns[1].family, b"meta");
        assert!(g.columns[1].qualifiers.is_empty());
        let t = Get::new("r").timestamp(7).into_proto();
        assert_eq!(t.time_range, Some(pb::TimeRange { min: 7, max: 8 }));
    }

    #[test]
    fn scan_options_fill_the_request() {
        let s = Scan::new()
            .start("a")
            .stop("m")
            .limit(10)
            .batch(4)
            .versions(2)
            .reverse()
            .skip_cache()
            .rows_per_message(50)
            .time_range(1, 2)
            .columns(["cf"])
            .column("cf2", "q")
            .into_proto();
        assert_eq!(s.start_row, b"a");
        assert_eq!(s.stop_row, b"m");
        assert_eq!((s.limit, s.batch, s.max_versions), (10, 4, 2));
        assert!(s.reverse && s.skip_cache);
        assert_eq!(s.rows_per_message, 50);
        assert_eq!(s.time_range, Some(pb::TimeRange { min: 1, max: 2 }));
        assert_eq!(s.columns.len(), 2);
        assert!(s.table.is_empty(), "the table is set by Table::scan");
        assert_eq!(Scan::new().into_proto(), pb::ScanRequest::default());
    }

    #[test]
    fn prefix_scans_stop_at_the_successor() {
        let s = Scan::new().prefix("ab");
        assert_eq!(
            (s.req.start_row.as_slice(), s.req.stop_row.as_slice()),
            (&b"ab"[..], &b"ac"[..])
        );
        let s = Scan::new().prefix([0x61, 0xff]);
        assert_eq!(s.req.stop_row, b"b");
        let s = Scan::new().prefix([0xff]);
        assert!(s.req.stop_row.is_empty());
    }

    #[test]
    fn deletes_carry_their_kind_and_timestamp() {
        let m = RowMutation::new("r")
            .delete_version("f", "q", Some(5))
            .delete_column("f", "q", None)
            .delete_family("f", Some(9))
            .delete_family_version("f", 3)
            .delete_row(None);
        assert_eq!(m.len(), 5);
        let kinds: Vec<(i32, Option<i64>)> = m
            .into_proto()
            .mutations
            .into_iter()
            .map(|x| match x.kind {
                Some(pb::mutation::Kind::Delete(d)) => (d.kind, d.timestamp),
                other => panic!("{other:?}"),
            })
            .collect();
        use pb::DeleteKind as K;
        assert_eq!(
            kinds,
            vec![
                (K::Version as i32, Some(5)),
                (K::Column as i32, None),
                (K::Family as i32, Some(9)),
                (K::FamilyVersion as i32, Some(3)),
                (K::Row as i32, None),
            ]
        );
    }

    #[test]
    fn mutations_keep_their_order() {
        let m = RowMutation::new("r")
            .put("cf", "q", "v")
            .delete_column("cf", "old", None)
            .put_at("cf", "t", 5, "w");
        assert_eq!(m.row(), b"r");
        assert!(!m.is_empty() && RowMutation::new("x").is_empty());
        let m = m.into_proto();
        assert_eq!(m.mutations.len(), 3);
        assert!(matches!(
            m.mutations[2].kind,
            Some(pb::mutation::Kind::Put(ref p)) if p.timestamp == Some(5) && p.value == b"w"[..]
        ));
        assert!(matches!(
            m.mutations[1].kind,
            Some(pb::mutation::Kind::Delete(ref d)) if d.kind == pb::DeleteKind::Column as i32
        ));
    }
}
