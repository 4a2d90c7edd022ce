//! HBase's filters and comparators as the Java client serializes them (a
//! Java class name and that class's protobuf), read into Shoal's
//! [`Filter`] — evaluated in the region scan, the same code the gRPC and
//! Thrift front doors use. A class not served is refused by name.

use super::errors::RpcError;
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;
use shoal_storage::region::filter::{Comparator, CompareOp, Filter};

const FILTER_PKG: &str = "org.apache.hadoop.hbase.filter.";

/// Nesting deeper than this is refused (a FilterList of FilterLists…).
const MAX_DEPTH: usize = 32;

fn decode<M: Message + Default>(class: &str, bytes: Option<&Bytes>) -> Result<M, RpcError> {
    M::decode(bytes.cloned().unwrap_or_default())
        .map_err(|e| RpcError::invalid(format!("{class}: malformed serialized form: {e}")))
}

/// HBase's `CompareType` as a filter's operator.
pub fn compare_op(op: i32) -> Result<CompareOp, RpcError> {
    Ok(match pb::CompareType::try_from(op) {
        Ok(pb::CompareType::Less) => CompareOp::Less,
        Ok(pb::CompareType::LessOrEqual) => CompareOp::LessOrEqual,
        Ok(pb::CompareType::Equal) => CompareOp::Equal,
        Ok(pb::CompareType::NotEqual) => CompareOp::NotEqual,
        Ok(pb::CompareType::GreaterOrEqual) => CompareOp::GreaterOrEqual,
        Ok(pb::CompareType::Greater) => CompareOp::Greater,
        Ok(pb::CompareType::NoOp) => CompareOp::NoOp,
        Err(_) => return Err(RpcError::invalid(format!("unknown compare type {op}"))),
    })
}

/// A comparator by its Java class name.
pub fn comparator(c: &pb::Comparator) -> Result<Comparator, RpcError> {
    let class = c.name.as_str();
    let short = class.strip_prefix(FILTER_PKG).unwrap_or(class);
    let bytes = c.serialized_comparator.as_ref();
    let value = |v: pb::ByteArrayComparable| v.value.unwrap_or_default();
    Ok(match short {
        "BinaryComparator" => Comparator::Binary(value(
            decode::<pb::BinaryComparator>(class, bytes)?.comparable,
        )),
        "BinaryPrefixComparator" => Comparator::BinaryPrefix(value(
            decode::<pb::BinaryPrefixComparator>(class, bytes)?.comparable,
        )),
        "SubstringComparator" => Comparator::Substring(
            decode::<pb::SubstringComparator>(class, bytes)?
                .substr
                .to_lowercase(),
        ),
        "RegexStringComparator" => {
            let r = decode::<pb::RegexStringComparator>(class, bytes)?;
            if r.engine.as_deref().is_some_and(|e| e != "JAVA") {
                return Err(RpcError::invalid(format!(
                    "RegexStringComparator engine {:?} is not served (JAVA only)",
                    r.engine
                )));
            }
            // Values read in the comparator's charset (UTF-8 by default,
            // or ISO-8859-1), with java.util.regex.Pattern flags.
            let flags = shoal_storage::region::filter::JavaRegexFlags::from_bits(r.pattern_flags);
            let bad = |e: regex::Error| {
                RpcError::invalid(format!("RegexStringComparator {:?}: {e}", r.pattern))
            };
            if r.charset.eq_ignore_ascii_case("ISO-8859-1") {
                Comparator::Regex(
                    shoal_storage::region::filter::java_regex(&r.pattern, flags).map_err(bad)?,
                )
            } else if r.charset.is_empty() || r.charset.eq_ignore_ascii_case("UTF-8") {
                Comparator::RegexText(
                    shoal_storage::region::filter::java_text_regex(&r.pattern, flags)
                        .map_err(bad)?,
                )
            } else {
                return Err(RpcError::invalid(format!(
                    "RegexStringComparator charset {:?} is not served (UTF-8 or ISO-8859-1)",
                    r.charset
                )));
            }
        }
        "NullComparator" => Comparator::Null,
        "LongComparator" => {
            let v = value(decode::<pb::LongComparator>(class, bytes)?.comparable);
            let n: [u8; 8] = v[..].try_into().map_err(|_| {
                RpcError::invalid(format!(
                    "LongComparator: the operand is {} bytes, not 8",
                    v.len()
                ))
            })?;
            Comparator::Long(i64::from_be_bytes(n))
        }
        _ => {
            return Err(RpcError::invalid(format!(
                "comparator {class} is not supported by Shoal (docs/hbase-client.md lists those that are)"
            )));
        }
    })
}

fn compare_filter(class: &str, c: pb::CompareFilter) -> Result<(CompareOp, Comparator), RpcError> {
    let op = compare_op(c.compare_op)?;
    let cmp = c
        .comparator
        .as_ref()
        .ok_or_else(|| RpcError::invalid(format!("{class} without a comparator")))?;
    Ok((op, comparator(cmp)?))
}

fn non_negative(class: &str, n: i64) -> Result<u64, RpcError> {
    u64::try_from(n).map_err(|_| RpcError::invalid(format!("{class}: {n} is negative")))
}

/// A filter by its Java class name.
pub fn filter(f: &pb::Filter) -> Result<Filter, RpcError> {
    filter_at(f, 0)
}

fn filter_at(f: &pb::Filter, depth: usize) -> Result<Filter, RpcError> {
    if depth > MAX_DEPTH {
        return Err(RpcError::invalid(format!(
            "filters nested more than {MAX_DEPTH} deep"
        )));
    }
    let class = f.name.as_str();
    let short = class.strip_prefix(FILTER_PKG).unwrap_or(class);
    let bytes = f.serialized_filter.as_ref();
    Ok(match short {
        "FilterList" => {
            let l = decode::<pb::FilterList>(class, bytes)?;
            let all = match l.operator {
                1 => true,
                2 => false,
                other => {
                    return Err(RpcError::invalid(format!(
                        "FilterList operator {other} is not MUST_PASS_ALL or MUST_PASS_ONE"
                    )));
                }
            };
            let filters = l
                .filters
                .iter()
                .map(|f| filter_at(f, depth + 1))
                .collect::<Result<_, _>>()?;
            Filter::List { all, filters }
        }
        "PageFilter" => Filter::Page(non_negative(
            class,
            decode::<pb::PageFilter>(class, bytes)?.page_size,
        )?),
        "PrefixFilter" => Filter::Prefix(
            decode::<pb::PrefixFilter>(class, bytes)?
                .prefix
                .unwrap_or_default(),
        ),
        "KeyOnlyFilter" => Filter::KeyOnly {
            value_length: decode::<pb::KeyOnlyFilter>(class, bytes)?.len_as_val,
        },
        "FirstKeyOnlyFilter" => Filter::FirstKeyOnly,
        "ColumnPrefixFilter" => {
            Filter::ColumnPrefix(decode::<pb::ColumnPrefixFilter>(class, bytes)?.prefix)
        }
        "MultipleColumnPrefixFilter" => Filter::MultipleColumnPrefix(
            decode::<pb::MultipleColumnPrefixFilter>(class, bytes)?.sorted_prefixes,
        ),
        "ColumnCountGetFilter" => {
            let n = decode::<pb::ColumnCountGetFilter>(class, bytes)?.limit;
            Filter::ColumnCountGet(non_negative(class, n.into())? as usize)
        }
        "ColumnRangeFilter" => {
            let r = decode::<pb::ColumnRangeFilter>(class, bytes)?;
            Filter::ColumnRange {
                min: r.min_column,
                min_inclusive: r.min_column_inclusive.unwrap_or(true),
                max: r.max_column,
                max_inclusive: r.max_column_inclusive.unwrap_or(false),
            }
        }
        "InclusiveStopFilter" => Filter::InclusiveStop(
            decode::<pb::InclusiveStopFilter>(class, bytes)?
                .stop_row_key
                .unwrap_or_default(),
        ),
        "RowFilter" | "FamilyFilter" | "QualifierFilter" | "ValueFilter" => {
            let cf = match short {
                "RowFilter" => decode::<pb::RowFilter>(class, bytes)?.compare_filter,
                "FamilyFilter" => decode::<pb::FamilyFilter>(class, bytes)?.compare_filter,
                "QualifierFilter" => decode::<pb::QualifierFilter>(class, bytes)?.compare_filter,
                _ => decode::<pb::ValueFilter>(class, bytes)?.compare_filter,
            };
            let (op, cmp) = compare_filter(class, cf)?;
            match short {
                "RowFilter" => Filter::Row(op, cmp),
                "FamilyFilter" => Filter::Family(op, cmp),
                "QualifierFilter" => Filter::Qualifier(op, cmp),
                _ => Filter::Value(op, cmp),
            }
        }
        "SingleColumnValueFilter" | "SingleColumnValueExcludeFilter" => {
            let exclude = short == "SingleColumnValueExcludeFilter";
            let s = if exclude {
                decode::<pb::SingleColumnValueExcludeFilter>(class, bytes)?
                    .single_column_value_filter
            } else {
                decode::<pb::SingleColumnValueFilter>(class, bytes)?
            };
            // NO_OP fails the read where the filter meets its column, as
            // in HBase (the region's filter reports it).
            let op = compare_op(s.compare_op)?;
            Filter::SingleColumnValue {
                family: s.column_family.unwrap_or_default(),
                qualifier: s.column_qualifier.unwrap_or_default(),
                op,
                comparator: comparator(&s.comparator)?,
                filter_if_missing: s.filter_if_missing.unwrap_or(false),
                latest_version_only: s.latest_version_only.unwrap_or(true),
                exclude,
            }
        }
        "TimestampsFilter" => {
            let t = decode::<pb::TimestampsFilter>(class, bytes)?;
            Filter::Timestamps {
                ts: t.timestamps,
                can_hint: t.can_hint.unwrap_or(false),
            }
        }
        "RandomRowFilter" => {
            let chance = decode::<pb::RandomRowFilter>(class, bytes)?.chance;
            if !chance.is_finite() {
                return Err(RpcError::invalid("RandomRowFilter: chance is not a number"));
            }
            Filter::RandomRow(chance)
        }
        "WhileMatchFilter" => {
            let inner = decode::<pb::WhileMatchFilter>(class, bytes)?.filter;
            Filter::While(Box::new(filter_at(&inner, depth + 1)?))
        }
        "SkipFilter" => {
            let inner = decode::<pb::SkipFilter>(class, bytes)?.filter;
            Filter::Skip(Box::new(filter_at(&inner, depth + 1)?))
        }
        _ => {
            return Err(RpcError::invalid(format!(
                "filter {class} is not supported by Shoal (docs/hbase-client.md lists those that are)"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str, m: impl Message) -> pb::Filter {
        pb::Filter {
            name: format!("{FILTER_PKG}{name}"),
            serialized_filter: Some(Bytes::from(m.encode_to_vec())),
        }
    }

    fn binary(v: &[u8]) -> pb::Comparator {
        pb::Comparator {
            name: format!("{FILTER_PKG}BinaryComparator"),
            serialized_comparator: Some(Bytes::from(
                pb::BinaryComparator {
                    comparable: pb::ByteArrayComparable {
                        value: Some(Bytes::copy_from_slice(v)),
                    },
                }
                .encode_to_vec(),
            )),
        }
    }

    #[test]
    fn ycsb_filter_list() {
        let page = named("PageFilter", pb::PageFilter { page_size: 100 });
        let value = named(
            "ValueFilter",
            pb::ValueFilter {
                compare_filter: pb::CompareFilter {
                    compare_op: pb::CompareType::Less as i32,
                    comparator: Some(binary(b"m")),
                },
            },
        );
        let list = named(
            "FilterList",
            pb::FilterList {
                operator: 1,
                filters: vec![page, value],
            },
        );
        let f = filter(&list).unwrap();
        assert_eq!(
            f,
            Filter::List {
                all: true,
                filters: vec![
                    Filter::Page(100),
                    Filter::Value(
                        CompareOp::Less,
                        Comparator::Binary(Bytes::from_static(b"m"))
                    )
                ]
            }
        );
        let w = named("WhileMatchFilter", pb::WhileMatchFilter { filter: list });
        assert!(matches!(filter(&w).unwrap(), Filter::While(_)));
    }

    #[test]
    fn unknown_and_malformed_are_refused_by_name() {
        let e = filter(&pb::Filter {
            name: "org.apache.hadoop.hbase.filter.FuzzyRowFilter".into(),
            serialized_filter: None,
        })
        .unwrap_err();
        assert!(e.do_not_retry && e.message.contains("FuzzyRowFilter"));
        let e = filter(&pb::Filter {
            name: format!("{FILTER_PKG}PageFilter"),
            serialized_filter: Some(Bytes::from_static(&[0xff, 0xff])),
        })
        .unwrap_err();
        assert!(e.message.contains("PageFilter"));
        let e = comparator(&pb::Comparator {
            name: format!("{FILTER_PKG}LongComparator"),
            serialized_comparator: Some(Bytes::from(
                pb::LongComparator {
                    comparable: pb::ByteArrayComparable {
                        value: Some(Bytes::from_static(b"abc")),
                    },
                }
                .encode_to_vec(),
            )),
        })
        .unwrap_err();
        assert!(e.message.contains("not 8"));
    }
}
