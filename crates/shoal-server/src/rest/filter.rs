//! HBase REST's filters: the JSON its `ScannerModel.FilterModel` carries
//! (`{"type":"PrefixFilter","value":b64}`, `{"type":"RowFilter","op":"EQUAL",
//! "comparator":{"type":"BinaryComparator","value":b64}}`, `FilterList`s of
//! them...), read into the storage layer's [`Filter`]. A filter Shoal does
//! not evaluate (`DependentColumnFilter`, `FuzzyRowFilter`,
//! `MultiRowRangeFilter`, `ColumnPaginationFilter`, `BitComparator`, custom
//! classes) is refused with 400 naming it. Lists are at most 32 deep and
//! hold at most 1,000 filters in all.

use super::b64;
use super::fault::RestError;
use bytes::Bytes;
use serde_json::{Map, Value};
use shoal_storage::region::filter::{Comparator, CompareOp, Filter, JavaRegexFlags};

/// Deepest nesting of lists and wrappers.
const MAX_DEPTH: usize = 32;
/// Filters in one specification at most.
const MAX_FILTERS: usize = 1000;

fn bad(why: impl std::fmt::Display) -> RestError {
    RestError::bad(format!("filter: {why}"))
}

/// Reads a filter specification (HBase's JSON `FilterModel`).
pub fn parse(text: &str) -> Result<Filter, RestError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| bad(format!("malformed JSON: {e}")))?;
    let mut count = 0;
    read(&value, 0, &mut count)
}

fn read(v: &Value, depth: usize, count: &mut usize) -> Result<Filter, RestError> {
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested deeper than {MAX_DEPTH}")));
    }
    *count += 1;
    if *count > MAX_FILTERS {
        return Err(bad(format!("more than {MAX_FILTERS} filters")));
    }
    let Value::Object(m) = v else {
        return Err(bad("a filter is not an object"));
    };
    let kind = text(m, "type")?;
    let f = match kind.as_str() {
        "PrefixFilter" => Filter::Prefix(b64_field(m, "value")?),
        "ColumnPrefixFilter" => Filter::ColumnPrefix(b64_field(m, "value")?),
        "InclusiveStopFilter" => Filter::InclusiveStop(b64_field(m, "value")?),
        "PageFilter" => Filter::Page(number(m, "value")?),
        "ColumnCountGetFilter" => {
            Filter::ColumnCountGet(usize::try_from(number(m, "limit")?).unwrap_or(usize::MAX))
        }
        "FirstKeyOnlyFilter" => Filter::FirstKeyOnly,
        "KeyOnlyFilter" => Filter::KeyOnly {
            value_length: false,
        },
        "MultipleColumnPrefixFilter" => {
            let prefixes = m.get("prefixes").map(list).unwrap_or_default();
            Filter::MultipleColumnPrefix(
                prefixes
                    .into_iter()
                    .map(|p| b64_value(p, "prefixes"))
                    .collect::<Result<_, _>>()?,
            )
        }
        "RowFilter" => Filter::Row(op(m)?, comparator(m)?),
        "FamilyFilter" => Filter::Family(op(m)?, comparator(m)?),
        "QualifierFilter" => Filter::Qualifier(op(m)?, comparator(m)?),
        "ValueFilter" => Filter::Value(op(m)?, comparator(m)?),
        "SingleColumnValueFilter" | "SingleColumnValueExcludeFilter" => Filter::SingleColumnValue {
            family: b64_field(m, "family")?,
            qualifier: match m.get("qualifier") {
                Some(q) => b64_value(q, "qualifier")?,
                None => Bytes::new(),
            },
            op: op(m)?,
            comparator: comparator(m)?,
            filter_if_missing: flag(m, "ifMissing"),
            latest_version_only: flag(m, "latestVersion"),
            exclude: kind == "SingleColumnValueExcludeFilter",
        },
        "TimestampsFilter" => {
            let ts = m
                .get("timestamps")
                .map(list)
                .unwrap_or_default()
                .into_iter()
                .map(|t| as_i64(t).ok_or_else(|| bad("timestamps must be integers")))
                .collect::<Result<Vec<_>, _>>()?;
            Filter::Timestamps { ts, can_hint: true }
        }
        "RandomRowFilter" => {
            let chance = m
                .get("chance")
                .and_then(Value::as_f64)
                .ok_or_else(|| bad("RandomRowFilter needs a number \"chance\""))?;
            Filter::RandomRow(chance as f32)
        }
        "ColumnRangeFilter" => Filter::ColumnRange {
            min: m
                .get("minColumn")
                .map(|v| b64_value(v, "minColumn"))
                .transpose()?,
            min_inclusive: flag(m, "minColumnInclusive"),
            max: m
                .get("maxColumn")
                .map(|v| b64_value(v, "maxColumn"))
                .transpose()?,
            max_inclusive: flag(m, "maxColumnInclusive"),
        },
        "SkipFilter" | "WhileMatchFilter" => {
            let inner = m
                .get("filters")
                .map(list)
                .and_then(|l| l.into_iter().next())
                .ok_or_else(|| bad(format!("{kind} needs one filter in \"filters\"")))?;
            let inner = Box::new(read(inner, depth + 1, count)?);
            if kind == "SkipFilter" {
                Filter::Skip(inner)
            } else {
                Filter::While(inner)
            }
        }
        "FilterList" => {
            let all = match m
                .get("op")
                .and_then(Value::as_str)
                .unwrap_or("MUST_PASS_ALL")
            {
                "MUST_PASS_ALL" => true,
                "MUST_PASS_ONE" => false,
                other => {
                    return Err(bad(format!(
                        "FilterList op {other:?} is not MUST_PASS_ALL or MUST_PASS_ONE"
                    )));
                }
            };
            let filters = m
                .get("filters")
                .map(list)
                .unwrap_or_default()
                .into_iter()
                .map(|f| read(f, depth + 1, count))
                .collect::<Result<_, _>>()?;
            Filter::List { all, filters }
        }
        other => {
            return Err(bad(format!(
                "{other} is not supported by Shoal's REST gateway (docs/rest.md lists the filters it reads)"
            )));
        }
    };
    Ok(f)
}

fn list(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        Value::Null => Vec::new(),
        other => vec![other],
    }
}

fn text(m: &Map<String, Value>, key: &str) -> Result<String, RestError> {
    m.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| bad(format!("missing string \"{key}\"")))
}

fn b64_value(v: &Value, key: &str) -> Result<Bytes, RestError> {
    let s = v
        .as_str()
        .ok_or_else(|| bad(format!("\"{key}\" must be a base64 string")))?;
    b64::decode(s).map_err(|e| bad(format!("\"{key}\" is not base64: {e}")))
}

fn b64_field(m: &Map<String, Value>, key: &str) -> Result<Bytes, RestError> {
    let v = m
        .get(key)
        .ok_or_else(|| bad(format!("missing \"{key}\"")))?;
    b64_value(v, key)
}

fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn number(m: &Map<String, Value>, key: &str) -> Result<u64, RestError> {
    m.get(key)
        .and_then(as_i64)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| bad(format!("\"{key}\" must be a non-negative integer")))
}

fn flag(m: &Map<String, Value>, key: &str) -> bool {
    match m.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

fn op(m: &Map<String, Value>) -> Result<CompareOp, RestError> {
    Ok(match text(m, "op")?.as_str() {
        "LESS" => CompareOp::Less,
        "LESS_OR_EQUAL" => CompareOp::LessOrEqual,
        "EQUAL" => CompareOp::Equal,
        "NOT_EQUAL" => CompareOp::NotEqual,
        "GREATER_OR_EQUAL" => CompareOp::GreaterOrEqual,
        "GREATER" => CompareOp::Greater,
        "NO_OP" => CompareOp::NoOp,
        other => return Err(bad(format!("unknown compare op {other:?}"))),
    })
}

fn comparator(m: &Map<String, Value>) -> Result<Comparator, RestError> {
    let Some(Value::Object(c)) = m.get("comparator") else {
        return Err(bad("missing \"comparator\""));
    };
    let value = || {
        c.get("value")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| bad("the comparator needs a string \"value\""))
    };
    Ok(match text(c, "type")?.as_str() {
        "BinaryComparator" => Comparator::Binary(b64_field(c, "value")?),
        "BinaryPrefixComparator" => Comparator::BinaryPrefix(b64_field(c, "value")?),
        "NullComparator" => Comparator::Null,
        "SubstringComparator" => Comparator::Substring(value()?.to_ascii_lowercase()),
        "RegexStringComparator" => {
            let pattern = value()?;
            let re =
                shoal_storage::region::filter::java_text_regex(&pattern, JavaRegexFlags::default())
                    .map_err(|e| bad(format!("bad regular expression {pattern:?}: {e}")))?;
            Comparator::RegexText(re)
        }
        other => {
            return Err(bad(format!(
                "comparator {other} is not supported by Shoal's REST gateway"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_page_and_lists() {
        assert_eq!(
            parse(r#"{"type":"PrefixFilter","value":"cm93"}"#).ok(),
            Some(Filter::Prefix(Bytes::from("row")))
        );
        assert_eq!(
            parse(r#"{"type":"PageFilter","value":"2"}"#).ok(),
            Some(Filter::Page(2))
        );
        let list = parse(
            r#"{"type":"FilterList","op":"MUST_PASS_ONE","filters":[
                {"type":"RowFilter","op":"EQUAL","comparator":{"type":"BinaryComparator","value":"YQ=="}},
                {"type":"KeyOnlyFilter"}]}"#,
        );
        assert_eq!(
            list.ok(),
            Some(Filter::List {
                all: false,
                filters: vec![
                    Filter::Row(CompareOp::Equal, Comparator::Binary(Bytes::from("a"))),
                    Filter::KeyOnly {
                        value_length: false
                    },
                ],
            })
        );
    }

    #[test]
    fn single_column_value() {
        let f = parse(
            r#"{"type":"SingleColumnValueFilter","family":"Y2Y=","qualifier":"YQ==","op":"GREATER",
                "comparator":{"type":"SubstringComparator","value":"AbC"},"ifMissing":true}"#,
        );
        assert_eq!(
            f.ok(),
            Some(Filter::SingleColumnValue {
                family: Bytes::from("cf"),
                qualifier: Bytes::from("a"),
                op: CompareOp::Greater,
                comparator: Comparator::Substring("abc".into()),
                filter_if_missing: true,
                latest_version_only: false,
                exclude: false,
            })
        );
    }

    #[test]
    fn unsupported_and_malformed_filters_are_refused_by_name() {
        let e = parse(r#"{"type":"FuzzyRowFilter"}"#)
            .err()
            .map(|e| e.message);
        assert!(e.is_some_and(|m| m.contains("FuzzyRowFilter")));
        let e = parse(r#"{"type":"RowFilter","op":"EQUAL","comparator":{"type":"BitComparator","value":"AA=="}}"#)
            .err()
            .map(|e| e.message);
        assert!(e.is_some_and(|m| m.contains("BitComparator")));
        for bad in [
            "not json",
            r#"{"value":"x"}"#,
            r#"{"type":"PrefixFilter","value":"@@"}"#,
            r#"{"type":"PageFilter","value":"-1"}"#,
            r#"{"type":"RowFilter","op":"SIMILAR","comparator":{"type":"BinaryComparator","value":""}}"#,
            r#"{"type":"ValueFilter","op":"EQUAL","comparator":{"type":"RegexStringComparator","value":"("}}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = format!(
            "{}{{\"type\":\"KeyOnlyFilter\"}}{}",
            r#"{"type":"WhileMatchFilter","filters":["#.repeat(40),
            "]}".repeat(40)
        );
        assert!(parse(&deep).is_err());
    }
}
