//! The filter language and each filter's decisions on small rows.

use super::*;
use crate::cell::Cell;
use bytes::Bytes;

fn cell(row: &str, f: &str, q: &str, ts: i64, v: &str) -> Cell {
    Cell::put(
        row.as_bytes().to_vec(),
        f.as_bytes().to_vec(),
        q.as_bytes().to_vec(),
        ts,
        1,
        v.as_bytes().to_vec(),
    )
}

fn row(key: &str) -> Vec<Cell> {
    vec![
        cell(key, "cf", "a", 20, "apple"),
        cell(key, "cf", "a", 10, "old"),
        cell(key, "cf", "b", 10, "banana"),
        cell(key, "cg", "c", 10, "cherry"),
    ]
}

/// What a filter does with one row, as the old row-level API said it.
#[derive(Debug, PartialEq)]
enum Decision {
    Emit(Vec<Cell>),
    Skip,
    Stop,
}

struct Run(FilterState);

impl Run {
    fn apply(&mut self, row: &[u8], cells: Vec<Cell>) -> Decision {
        let mut stop = false;
        match self.0.apply_to_row(row, cells, &mut stop) {
            Some(cells) if !cells.is_empty() => Decision::Emit(cells),
            _ if stop => Decision::Stop,
            _ => Decision::Skip,
        }
    }

    fn stopped(&self) -> bool {
        self.0.all_remaining()
    }
}

fn run(text: &str) -> Run {
    Run(FilterState::new(&parse(text).unwrap(), false))
}

fn kept(d: Decision) -> Vec<(String, i64, String)> {
    match d {
        Decision::Emit(cells) => cells
            .into_iter()
            .map(|c| {
                (
                    format!(
                        "{}:{}",
                        String::from_utf8_lossy(&c.family),
                        String::from_utf8_lossy(&c.qualifier)
                    ),
                    c.timestamp,
                    String::from_utf8_lossy(&c.value).into_owned(),
                )
            })
            .collect(),
        other => panic!("expected cells, got {other:?}"),
    }
}

#[test]
fn value_comparisons_read_cell_op_operand() {
    let values = ["apple", "banana", "cherry"];
    let cases = [
        ("<", "banana", vec!["apple"]),
        ("<=", "banana", vec!["apple", "banana"]),
        ("=", "banana", vec!["banana"]),
        ("!=", "banana", vec!["apple", "cherry"]),
        (">=", "banana", vec!["banana", "cherry"]),
        (">", "banana", vec!["cherry"]),
    ];
    for (op, operand, want) in cases {
        let cells: Vec<Cell> = values.iter().map(|v| cell("r", "cf", v, 1, v)).collect();
        let got = kept(run(&format!("ValueFilter({op}, 'binary:{operand}')")).apply(b"r", cells));
        let got: Vec<String> = got.into_iter().map(|(_, _, v)| v).collect();
        assert_eq!(got, want, "{op}");
    }
    let cells: Vec<Cell> = values.iter().map(|v| cell("r", "cf", v, 1, v)).collect();
    assert_eq!(
        run("ValueFilter(NO_OP, 'binary:x')").apply(b"r", cells),
        Decision::Skip
    );
}

#[test]
fn comparators_substring_regex_prefix_null_long() {
    let c = |s: &str| match parse(&format!("ValueFilter(=, '{s}')")).unwrap() {
        Filter::Value(_, c) => c,
        _ => unreachable!(),
    };
    assert!(c("substring:NAN").matches(CompareOp::Equal, b"banana"));
    assert!(!c("substring:kiwi").matches(CompareOp::Equal, b"banana"));
    assert!(c("substring:kiwi").matches(CompareOp::NotEqual, b"banana"));
    assert!(c("regexstring:^b.n").matches(CompareOp::Equal, b"banana"));
    assert!(!c("regexstring:^a").matches(CompareOp::Equal, b"banana"));
    assert!(c("binaryprefix:ban").matches(CompareOp::Equal, b"banana"));
    assert!(c("binaryprefix:bam").matches(CompareOp::Greater, b"banana"));
    // As HBase: no stored value is null, an empty one neither.
    assert!(!c("null:").matches(CompareOp::Equal, b""));
    assert!(c("null:").matches(CompareOp::NotEqual, b""));
    // A match is 0, a miss 1, and the operator applies to that: `<` keeps
    // misses, `<=` everything, `>` nothing, `>=` matches.
    assert!(c("regexstring:^b").matches(CompareOp::Less, b"apple"));
    assert!(!c("regexstring:^b").matches(CompareOp::Less, b"banana"));
    assert!(c("regexstring:^b").matches(CompareOp::LessOrEqual, b"apple"));
    assert!(!c("substring:an").matches(CompareOp::Greater, b"banana"));
    assert!(c("substring:an").matches(CompareOp::GreaterOrEqual, b"banana"));
    assert!(!c("substring:an").matches(CompareOp::GreaterOrEqual, b"kiwi"));
    assert!(c("long:5").matches(CompareOp::Greater, &7i64.to_be_bytes()));
    assert!(c("long:5").matches(CompareOp::Less, &(-7i64).to_be_bytes()));
    assert!(!c("long:5").matches(CompareOp::Less, b"short"));
    // The part after the first colon is the value, colons and all.
    assert_eq!(
        c("binary:a:b"),
        Comparator::Binary(Bytes::from_static(b"a:b"))
    );
}

#[test]
fn row_and_cell_filters() {
    assert_eq!(
        run("PrefixFilter('ro')").apply(b"row", row("row")),
        Decision::Emit(row("row"))
    );
    assert_eq!(
        run("PrefixFilter('x')").apply(b"row", row("row")),
        Decision::Skip
    );
    // Forward, a row past the prefix ends the scan.
    assert_eq!(
        run("PrefixFilter('a')").apply(b"b", row("b")),
        Decision::Stop
    );
    let k = kept(run("ColumnPrefixFilter('b')").apply(b"r", row("r")));
    assert_eq!(k, vec![("cf:b".into(), 10, "banana".into())]);
    let k = kept(run("MultipleColumnPrefixFilter('b', 'c')").apply(b"r", row("r")));
    assert_eq!(k.len(), 2);
    let k = kept(run("FamilyFilter(=, 'binary:cg')").apply(b"r", row("r")));
    assert_eq!(k, vec![("cg:c".into(), 10, "cherry".into())]);
    let k = kept(run("QualifierFilter(>=, 'binary:b')").apply(b"r", row("r")));
    assert_eq!(k.len(), 2);
    let k = kept(run("TimestampsFilter(20)").apply(b"r", row("r")));
    assert_eq!(k, vec![("cf:a".into(), 20, "apple".into())]);
    let k = kept(run("ColumnRangeFilter('a', false, 'c', true)").apply(b"r", row("r")));
    assert_eq!(k.len(), 2);
    let k = kept(run("FirstKeyOnlyFilter()").apply(b"r", row("r")));
    assert_eq!(k, vec![("cf:a".into(), 20, "apple".into())]);
    let k = kept(run("KeyOnlyFilter()").apply(b"r", row("r")));
    assert!(k.iter().all(|(_, _, v)| v.is_empty()) && k.len() == 4);
    let k = kept(run("KeyOnlyFilter(true)").apply(b"r", row("r")));
    assert_eq!(k[0].2.as_bytes(), &5u32.to_be_bytes());
    // As HBase: the newest version of each of the first two columns.
    let k = kept(run("ColumnCountGetFilter(2)").apply(b"r", row("r")));
    assert_eq!(
        k,
        vec![
            ("cf:a".into(), 20, "apple".into()),
            ("cf:b".into(), 10, "banana".into())
        ]
    );
    assert_eq!(
        run("RowFilter(<, 'binary:m')").apply(b"z", row("z")),
        Decision::Skip
    );
    let mut r = run("RandomRowFilter(0.0)");
    assert_eq!(r.apply(b"r", row("r")), Decision::Skip);
    let mut r = run("RandomRowFilter(1.0)");
    assert!(matches!(r.apply(b"r", row("r")), Decision::Emit(_)));
}

#[test]
fn single_column_value_filters() {
    let f = "SingleColumnValueFilter('cf', 'a', =, 'binary:apple')";
    assert_eq!(run(f).apply(b"r", row("r")), Decision::Emit(row("r")));
    // Only the newest version counts by default.
    let old = "SingleColumnValueFilter('cf', 'a', =, 'binary:old')";
    assert_eq!(run(old).apply(b"r", row("r")), Decision::Skip);
    let any = "SingleColumnValueFilter('cf', 'a', =, 'binary:old', false, false)";
    assert!(matches!(run(any).apply(b"r", row("r")), Decision::Emit(_)));
    // Missing column: passes unless filterIfMissing.
    let missing = "SingleColumnValueFilter('cf', 'zz', =, 'binary:x')";
    assert!(matches!(
        run(missing).apply(b"r", row("r")),
        Decision::Emit(_)
    ));
    let strict = "SingleColumnValueFilter('cf', 'zz', =, 'binary:x', true, true)";
    assert_eq!(run(strict).apply(b"r", row("r")), Decision::Skip);
    let ex = "SingleColumnValueExcludeFilter('cf', 'a', =, 'binary:apple')";
    let k = kept(run(ex).apply(b"r", row("r")));
    assert!(k.iter().all(|(c, _, _)| c != "cf:a") && k.len() == 2);
}

#[test]
fn pages_while_skip_and_inclusive_stop_end_or_skip() {
    let mut p = run("PageFilter(2)");
    assert!(matches!(p.apply(b"a", row("a")), Decision::Emit(_)));
    assert!(!p.stopped());
    assert!(matches!(p.apply(b"b", row("b")), Decision::Emit(_)));
    assert_eq!(p.apply(b"c", row("c")), Decision::Stop);
    assert!(p.stopped());
    let mut w = run("WHILE RowFilter(<, 'binary:c')");
    assert!(matches!(w.apply(b"a", row("a")), Decision::Emit(_)));
    assert_eq!(w.apply(b"c", row("c")), Decision::Stop);
    assert_eq!(w.apply(b"a", row("a")), Decision::Stop, "stopped for good");
    let mut s = run("SKIP ValueFilter(!=, 'binary:old')");
    assert_eq!(s.apply(b"a", row("a")), Decision::Skip);
    let mut s2 = run("SKIP ValueFilter(!=, 'binary:zzz')");
    assert!(matches!(s2.apply(b"a", row("a")), Decision::Emit(_)));
    let mut i = run("InclusiveStopFilter('b')");
    assert!(matches!(i.apply(b"b", row("b")), Decision::Emit(_)));
    assert_eq!(i.apply(b"c", row("c")), Decision::Stop);
    let mut rev = Run(FilterState::new(
        &parse("InclusiveStopFilter('b')").unwrap(),
        true,
    ));
    assert!(matches!(rev.apply(b"c", row("c")), Decision::Emit(_)));
    assert_eq!(rev.apply(b"a", row("a")), Decision::Stop);
}

#[test]
fn and_binds_tighter_than_or() {
    let f = parse("PrefixFilter('a') AND PrefixFilter('b') OR PrefixFilter('c')").unwrap();
    match &f {
        Filter::List {
            all: false,
            filters,
        } => {
            assert!(matches!(filters[0], Filter::List { all: true, .. }));
            assert!(matches!(filters[1], Filter::Prefix(_)));
        }
        other => panic!("{other:?}"),
    }
    let g = parse("PrefixFilter('a') AND (PrefixFilter('b') OR PrefixFilter('c'))").unwrap();
    assert!(matches!(g, Filter::List { all: true, .. }));
    // OR: cells any member kept; AND: what every member kept.
    let k = kept(run("ColumnPrefixFilter('a') OR ColumnPrefixFilter('c')").apply(b"r", row("r")));
    assert_eq!(k.len(), 3);
    let k = kept(
        run("FamilyFilter(=, 'binary:cf') AND QualifierFilter(=, 'binary:b')")
            .apply(b"r", row("r")),
    );
    assert_eq!(k, vec![("cf:b".into(), 10, "banana".into())]);
}

#[test]
fn the_language_round_trips_through_describe() {
    for text in [
        "PrefixFilter('it''s')",
        "KeyOnlyFilter()",
        "SingleColumnValueFilter('cf1', 'qual1', =, 'binary:val1')",
        "WHILE RowFilter(<=, 'binaryprefix:abc')",
        "SKIP (ValueFilter(!=, 'regexstring:a.*') OR TimestampsFilter(1, 2, 3))",
        "ColumnRangeFilter('a', true, 'z', false) AND PageFilter(10)",
        "RowFilter(GREATER_OR_EQUAL, 'binary:x')",
    ] {
        let f = parse(text).unwrap();
        assert_eq!(
            parse(&f.describe()).unwrap(),
            f,
            "{text} → {}",
            f.describe()
        );
    }
}

#[test]
fn bad_strings_say_what_and_where() {
    let e = parse("NoSuchFilter('x')").unwrap_err();
    assert_eq!(e.to_string(), "filter NoSuchFilter is not supported");
    let e = parse("PrefixFilter('x' 'y')").unwrap_err();
    assert!(e.to_string().contains("at byte 17"), "{e}");
    assert!(
        parse("PrefixFilter('x")
            .unwrap_err()
            .to_string()
            .contains("unterminated")
    );
    assert!(
        parse("ValueFilter(=, 'nope:x')")
            .unwrap_err()
            .to_string()
            .contains("unknown comparator")
    );
    assert!(
        parse("ValueFilter(=, 'regexstring:(')")
            .unwrap_err()
            .to_string()
            .contains("regular expression")
    );
    assert!(
        parse("PageFilter('x')")
            .unwrap_err()
            .to_string()
            .contains("must be a number")
    );
    assert!(parse("PageFilter(1, 2)").is_err());
    assert!(parse("").is_err());
    assert!(parse("PrefixFilter('a') AND").is_err());
    assert!(parse("PrefixFilter('a') PrefixFilter('b')").is_err());
    // Nesting and size are bounded: an error, not a stack overflow.
    let deep = format!(
        "{}PrefixFilter('a'){}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert!(matches!(parse(&deep), Err(FilterError::TooLarge(_))));
    let skips = format!("{}PrefixFilter('a')", "SKIP ".repeat(10_000));
    assert!(matches!(parse(&skips), Err(FilterError::TooLarge(_))));
    let many = vec!["KeyOnlyFilter()"; 1001].join(" AND ");
    assert!(matches!(parse(&many), Err(FilterError::TooLarge(_))));
    assert!(matches!(
        parse(&"x".repeat(70_000)),
        Err(FilterError::TooLarge(_))
    ));
}

/// The cases where HBase's cell-by-cell protocol answers differently from
/// a row-at-a-time evaluation (issue 43's findings 4, 5, 6 and 9).
#[test]
fn hbase_cell_protocol_cases() {
    let v = |cells: Vec<(String, i64, String)>| -> Vec<String> {
        cells
            .into_iter()
            .map(|(c, ts, v)| format!("{c}@{ts}={v}"))
            .collect()
    };
    // A transformation inside an OR applies when its member included the
    // cell, after every member saw the original.
    let one = vec![cell("r", "cf", "q", 1, "v05")];
    let k = kept(run("ValueFilter(=, 'binary:v05') OR KeyOnlyFilter()").apply(b"r", one.clone()));
    assert_eq!(v(k), ["cf:q@1="]);
    let k = kept(run("KeyOnlyFilter(true) OR KeyOnlyFilter(true)").apply(b"r", one.clone()));
    assert_eq!(
        k[0].2.as_bytes(),
        &4u32.to_be_bytes(),
        "length of the length"
    );
    // AND: the value filter sees the original value.
    let ten = vec![cell("r", "cf", "q", 1, "v10")];
    let k = kept(run("KeyOnlyFilter(true) AND ValueFilter(>=, 'binary:v04')").apply(b"r", ten));
    assert_eq!(k.len(), 1);
    // SingleColumnValueFilter in an OR: the other member keeps the row.
    let r10 = vec![
        cell("r10", "a", "q0", 1, "x"),
        cell("r10", "a", "q1", 1, "y"),
        cell("r10", "b", "q0", 1, "v99"),
    ];
    let k = kept(
        run("SingleColumnValueFilter('b', 'q0', =, 'binary:zzz', true, true) OR ColumnPrefixFilter('q9')")
            .apply(b"r10", r10),
    );
    assert_eq!(v(k), ["a:q0@1=x", "a:q1@1=y"]);
    // WhileMatchFilter: the cells before the first rejection, then done.
    let mut w = run("WHILE ValueFilter(=, 'binary:apple')");
    let k = kept(w.apply(b"r", row("r")));
    assert_eq!(v(k), ["cf:a@20=apple"]);
    assert!(w.stopped());
}

#[test]
fn a_seek_hint_hides_the_cells_before_it_from_the_filter() {
    // ColumnPrefixFilter seeks from cf:c0 to cf:q: cf:c1 is never shown to
    // the list, so ColumnCountGetFilter counts cf:c0, cf:q2 and cg:q2 only
    // (HBase answers cf:q2 and cg:q2).
    let cells = vec![
        cell("r", "cf", "c0", 10, "x"),
        cell("r", "cf", "c1", 10, "x"),
        cell("r", "cf", "q2", 10, "x"),
        cell("r", "cg", "q2", 10, "x"),
    ];
    let got = kept(run("ColumnCountGetFilter(3) AND ColumnPrefixFilter('q')").apply(b"r", cells));
    let cols: Vec<&str> = got.iter().map(|(c, _, _)| c.as_str()).collect();
    assert_eq!(cols, ["cf:q2", "cg:q2"]);
}

#[test]
fn regular_expressions_read_values_as_iso_8859_1_as_hbase() {
    let re = |p: &str| java_regex(p, JavaRegexFlags::default()).unwrap();
    // Any byte is a character: an 8-byte counter matches `.`.
    assert!(re(".").is_match(&(-2i64).to_be_bytes()));
    // Java's line terminators are not matched by `.` (unless DOTALL).
    assert!(!re("^.$").is_match(b"\r"));
    assert!(!re("^.$").is_match(&[0x85]));
    let dotall = JavaRegexFlags {
        dot_all: true,
        ..JavaRegexFlags::default()
    };
    assert!(java_regex("^.$", dotall).unwrap().is_match(b"\r"));
    // HBase's default charset, UTF-8: malformed bytes read as U+FFFD,
    // which `.` matches (the language's `regexstring:` is DOTALL).
    let text = java_text_regex(".", dotall).unwrap();
    assert!(text.is_match(&String::from_utf8_lossy(&(-2i64).to_be_bytes())));
    let lang = |p: &str| match parse(&format!("ValueFilter(=, 'regexstring:{p}')")).unwrap() {
        Filter::Value(_, c) => c,
        other => panic!("{other:?}"),
    };
    assert!(lang(".").matches(CompareOp::Equal, &(-2i64).to_be_bytes()));
    assert!(lang("^caf.$").matches(CompareOp::Equal, "café".as_bytes()));
    // A pattern character of ISO-8859-1 stands for its byte.
    assert!(re("caf\u{e9}").is_match(b"caf\xe9"));
    assert!(!re("caf\u{e9}").is_match("café".as_bytes()));
    assert!(re("[\u{e9}x]$").is_match(b"\xe9"));
    // Beyond it, nothing in such a value can match.
    assert!(!re("\u{20ac}").is_match("€".as_bytes()));
    assert!(re("[]a]").is_match(b"]"));
    assert!(re("\\d+").is_match(b"v12"));
}
