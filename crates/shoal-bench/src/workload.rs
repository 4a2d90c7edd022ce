//! YCSB property files and the CoreWorkload they describe: every property
//! with its Java default, the operation mix, key choice and values.

use crate::generators::{AcknowledgedCounter, Hotspot, ScrambledZipfian, SkewedLatest, uniform};
use crate::keys::build_key_name;
use rand::Rng;
use std::collections::BTreeMap;

/// Why a workload could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// A property file could not be read.
    #[error("cannot read property file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A `-p key=value` without `=`.
    #[error("property {0:?} is not key=value")]
    Malformed(String),
    /// A property has a bad value.
    #[error("property {key}={value:?}: {reason}")]
    Invalid {
        /// The property.
        key: String,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: String,
    },
}

/// Properties in Java `.properties` form: later settings win.
#[derive(Debug, Clone, Default)]
pub struct Properties(pub BTreeMap<String, String>);

impl Properties {
    /// Parses property text: `key=value` (or `key: value`, `key value`),
    /// `#`/`!` comments, blank lines.
    pub fn parse(&mut self, text: &str) {
        for line in text.lines() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') || l.starts_with('!') {
                continue;
            }
            let split = l.find(['=', ':']).or_else(|| l.find(char::is_whitespace));
            let (k, v) = match split {
                Some(i) => (&l[..i], &l[i + 1..]),
                None => (l, ""),
            };
            self.0.insert(k.trim().to_string(), v.trim().to_string());
        }
    }

    /// Reads a property file (`-P`).
    pub fn load_file(&mut self, path: &str) -> Result<(), WorkloadError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Read {
            path: path.to_string(),
            source,
        })?;
        self.parse(&text);
        Ok(())
    }

    /// Sets one `key=value` (`-p`).
    pub fn set(&mut self, kv: &str) -> Result<(), WorkloadError> {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| WorkloadError::Malformed(kv.to_string()))?;
        self.0.insert(k.trim().to_string(), v.trim().to_string());
        Ok(())
    }

    /// A value, or `default`.
    pub fn get<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.0.get(key).map_or(default, String::as_str)
    }

    fn num<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, WorkloadError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| WorkloadError::Invalid {
                key: key.into(),
                value: v.clone(),
                reason: "not a number".into(),
            }),
        }
    }

    fn boolean(&self, key: &str, default: bool) -> Result<bool, WorkloadError> {
        match self.0.get(key).map(|v| v.to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) if v == "true" => Ok(true),
            Some(v) if v == "false" => Ok(false),
            Some(v) => Err(WorkloadError::Invalid {
                key: key.into(),
                value: v,
                reason: "expected true or false".into(),
            }),
        }
    }
}

/// A workload operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// Read one record.
    Read,
    /// Overwrite one field.
    Update,
    /// Insert a new record.
    Insert,
    /// Scan a run of records.
    Scan,
    /// Read a record, then write one field.
    ReadModifyWrite,
}

impl Op {
    /// YCSB's measurement name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

#[derive(Debug)]
enum KeyChooser {
    Uniform(u64, u64),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Sequential(std::sync::atomic::AtomicU64, u64, u64),
}

/// YCSB's CoreWorkload.
#[derive(Debug)]
pub struct CoreWorkload {
    /// Table name (`table`, default usertable).
    pub table: String,
    /// Column family (`columnfamily`, default `family`).
    pub family: String,
    /// Records loaded (`recordcount`).
    pub record_count: u64,
    /// Operations in the run phase (`operationcount`).
    pub operation_count: u64,
    /// First key number of the load (`insertstart`).
    pub insert_start: u64,
    /// Keys this client loads (`insertcount`, default recordcount − insertstart).
    pub insert_count: u64,
    /// Fields per record (`fieldcount`, default 10).
    pub field_count: usize,
    /// Bytes per field (`fieldlength`, default 100; constant distribution).
    pub field_length: usize,
    /// Reads return every field (`readallfields`, default true).
    pub read_all_fields: bool,
    /// Updates write every field (`writeallfields`, default false).
    pub write_all_fields: bool,
    /// Hash key numbers (`insertorder=hashed`, default).
    pub hashed: bool,
    /// `zeropadding` (default 1).
    pub zero_padding: usize,
    /// Scan lengths: uniform in [min, max] (`minscanlength`, `maxscanlength`).
    pub scan_length: (u64, u64),
    /// (op, cumulative probability) in YCSB's order.
    mix: Vec<(Op, f64)>,
    chooser: KeyChooser,
    /// Key numbers handed to inserts of the run phase.
    pub insert_sequence: AcknowledgedCounter,
    /// Key numbers of the load phase.
    pub load_sequence: std::sync::atomic::AtomicU64,
    /// The distribution's name, for reports.
    pub request_distribution: String,
}

impl CoreWorkload {
    /// Builds the workload; every property error names the property.
    pub fn from_properties(p: &Properties) -> Result<CoreWorkload, WorkloadError> {
        let invalid = |key: &str, reason: &str| WorkloadError::Invalid {
            key: key.into(),
            value: p.get(key, "").to_string(),
            reason: reason.into(),
        };
        let record_count: u64 = p.num("recordcount", 0)?;
        let record_count = if record_count == 0 {
            i32::MAX as u64
        } else {
            record_count
        };
        let operation_count: u64 = p.num("operationcount", 0)?;
        let insert_start: u64 = p.num("insertstart", 0)?;
        let insert_count: u64 = p.num("insertcount", record_count.saturating_sub(insert_start))?;
        if insert_count == 0 {
            return Err(invalid("insertcount", "must be positive"));
        }
        let field_count: usize = p.num("fieldcount", 10)?;
        let field_length: usize = p.num("fieldlength", 100)?;
        if field_count == 0 {
            return Err(invalid("fieldcount", "must be positive"));
        }
        match p.get("fieldlengthdistribution", "constant") {
            "constant" => {}
            _ => {
                return Err(invalid(
                    "fieldlengthdistribution",
                    "only constant is supported",
                ));
            }
        }
        let props = [
            (Op::Read, p.num("readproportion", 0.95)?),
            (Op::Update, p.num("updateproportion", 0.05)?),
            (Op::Insert, p.num("insertproportion", 0.0)?),
            (Op::Scan, p.num("scanproportion", 0.0)?),
            (
                Op::ReadModifyWrite,
                p.num("readmodifywriteproportion", 0.0)?,
            ),
        ];
        let total: f64 = props.iter().map(|(_, w)| w).sum();
        if props.iter().any(|(_, w)| *w < 0.0) || total <= 0.0 {
            return Err(invalid(
                "readproportion",
                "proportions must be non-negative and not all zero",
            ));
        }
        let mut acc = 0.0;
        let mix = props
            .iter()
            .filter(|(_, w)| *w > 0.0)
            .map(|(op, w)| {
                acc += w / total;
                (*op, acc)
            })
            .collect();
        let hashed = match p.get("insertorder", "hashed") {
            "hashed" => true,
            "ordered" => false,
            _ => return Err(invalid("insertorder", "expected hashed or ordered")),
        };
        let insert_proportion = props[2].1;
        let expected_new = (operation_count as f64 * insert_proportion * 2.0) as u64;
        let insert_sequence = AcknowledgedCounter::new(record_count);
        let dist = p.get("requestdistribution", "uniform").to_string();
        let last = insert_start + insert_count - 1;
        let chooser = match dist.as_str() {
            "uniform" => KeyChooser::Uniform(insert_start, last),
            "zipfian" => KeyChooser::Zipfian(ScrambledZipfian::new(
                insert_start,
                insert_start + insert_count + expected_new,
            )),
            "latest" => KeyChooser::Latest(SkewedLatest::new(&insert_sequence)),
            "hotspot" => KeyChooser::Hotspot(Hotspot::new(
                insert_start,
                last,
                p.num("hotspotdatafraction", 0.2)?,
                p.num("hotspotopnfraction", 0.8)?,
            )),
            "sequential" => KeyChooser::Sequential(
                std::sync::atomic::AtomicU64::new(insert_start),
                insert_start,
                last,
            ),
            _ => {
                return Err(invalid(
                    "requestdistribution",
                    "expected uniform, zipfian, latest, hotspot or sequential",
                ));
            }
        };
        let min_scan: u64 = p.num("minscanlength", 1)?;
        let max_scan: u64 = p.num("maxscanlength", 1000)?;
        if min_scan == 0 || max_scan < min_scan {
            return Err(invalid(
                "maxscanlength",
                "need 1 <= minscanlength <= maxscanlength",
            ));
        }
        match p.get("scanlengthdistribution", "uniform") {
            "uniform" => {}
            _ => {
                return Err(invalid(
                    "scanlengthdistribution",
                    "only uniform is supported",
                ));
            }
        }
        Ok(CoreWorkload {
            table: p.get("table", "usertable").to_string(),
            family: p.get("columnfamily", "family").to_string(),
            record_count,
            operation_count,
            insert_start,
            insert_count,
            field_count,
            field_length,
            read_all_fields: p.boolean("readallfields", true)?,
            write_all_fields: p.boolean("writeallfields", false)?,
            hashed,
            zero_padding: p.num("zeropadding", 1)?,
            scan_length: (min_scan, max_scan),
            mix,
            chooser,
            insert_sequence,
            load_sequence: std::sync::atomic::AtomicU64::new(insert_start),
            request_distribution: dist,
        })
    }

    /// The operation mix (cumulative), for reports and tests.
    pub fn mix(&self) -> &[(Op, f64)] {
        &self.mix
    }

    /// The next operation (one uniform draw over the cumulative weights).
    pub fn next_op(&self, rng: &mut impl Rng) -> Op {
        let u: f64 = rng.random();
        self.mix
            .iter()
            .find(|(_, c)| u < *c)
            .or(self.mix.last())
            .map_or(Op::Read, |(op, _)| *op)
    }

    /// A key number for a read, update, scan or RMW: drawn from the request
    /// distribution, resampled while above the acknowledged inserts.
    pub fn next_keynum(&self, rng: &mut impl Rng) -> u64 {
        let limit = self.insert_sequence.last();
        loop {
            let k = match &self.chooser {
                KeyChooser::Uniform(lb, ub) => uniform(rng, *lb, *ub),
                KeyChooser::Zipfian(z) => z.next(rng),
                KeyChooser::Latest(l) => l.next(rng, &self.insert_sequence),
                KeyChooser::Hotspot(h) => h.next(rng),
                KeyChooser::Sequential(c, lb, ub) => {
                    let n = c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    lb + (n - lb) % (ub - lb + 1)
                }
            };
            if k <= limit {
                return k;
            }
        }
    }

    /// The key for a key number.
    pub fn key(&self, keynum: u64) -> String {
        build_key_name(keynum, self.zero_padding, self.hashed)
    }

    /// Field name `i` (`field0` …).
    pub fn field(&self, i: usize) -> String {
        format!("field{i}")
    }

    /// A random field index (what an update writes).
    pub fn random_field(&self, rng: &mut impl Rng) -> usize {
        rng.random_range(0..self.field_count)
    }

    /// A value of printable ASCII like YCSB's `RandomByteIterator`.
    pub fn value(&self, rng: &mut impl Rng) -> Vec<u8> {
        (0..self.field_length)
            .map(|_| b' ' + rng.random_range(0..95u8))
            .collect()
    }

    /// A scan length.
    pub fn scan_len(&self, rng: &mut impl Rng) -> u64 {
        uniform(rng, self.scan_length.0, self.scan_length.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(name: &str) -> CoreWorkload {
        let mut p = Properties::default();
        let path = format!("{}/../../workloads/{name}", env!("CARGO_MANIFEST_DIR"));
        p.load_file(&path).unwrap();
        CoreWorkload::from_properties(&p).unwrap()
    }

    #[test]
    fn the_standard_workloads_parse_with_their_mixes() {
        let mix = |w: &CoreWorkload| -> Vec<(Op, f64)> {
            let mut prev = 0.0;
            w.mix()
                .iter()
                .map(|(op, c)| {
                    let p = c - prev;
                    prev = *c;
                    (*op, (p * 100.0).round() / 100.0)
                })
                .collect()
        };
        assert_eq!(
            mix(&workload("workloada")),
            [(Op::Read, 0.5), (Op::Update, 0.5)]
        );
        assert_eq!(
            mix(&workload("workloadb")),
            [(Op::Read, 0.95), (Op::Update, 0.05)]
        );
        assert_eq!(mix(&workload("workloadc")), [(Op::Read, 1.0)]);
        let d = workload("workloadd");
        assert_eq!(mix(&d), [(Op::Read, 0.95), (Op::Insert, 0.05)]);
        assert_eq!(d.request_distribution, "latest");
        let e = workload("workloade");
        assert_eq!(mix(&e), [(Op::Insert, 0.05), (Op::Scan, 0.95)]);
        assert_eq!(e.scan_length, (1, 100));
        assert_eq!(
            mix(&workload("workloadf")),
            [(Op::Read, 0.5), (Op::ReadModifyWrite, 0.5)]
        );
        let a = workload("workloada");
        assert_eq!(
            (a.record_count, a.field_count, a.field_length),
            (1000, 10, 100)
        );
        assert!(a.read_all_fields && !a.write_all_fields);
    }

    #[test]
    fn bad_properties_name_the_property() {
        let mut p = Properties::default();
        p.set("requestdistribution=pareto").unwrap();
        p.set("recordcount=10").unwrap();
        let e = CoreWorkload::from_properties(&p).unwrap_err().to_string();
        assert!(e.contains("requestdistribution"), "{e}");
        let mut p = Properties::default();
        p.set("recordcount=ten").unwrap();
        assert!(
            CoreWorkload::from_properties(&p)
                .unwrap_err()
                .to_string()
                .contains("recordcount")
        );
        assert!(Properties::default().set("nokey").is_err());
    }

    #[test]
    fn reads_never_pick_unacknowledged_keys_and_values_are_printable() {
        let mut p = Properties::default();
        p.parse("recordcount=100\noperationcount=1000\nrequestdistribution=zipfian\ninsertproportion=0.5\nreadproportion=0.5");
        let w = CoreWorkload::from_properties(&p).unwrap();
        let mut rng = rand::rng();
        for _ in 0..10_000 {
            assert!(w.next_keynum(&mut rng) < 100);
        }
        assert!(w.value(&mut rng).iter().all(|b| (0x20..=0x7e).contains(b)));
    }
}
