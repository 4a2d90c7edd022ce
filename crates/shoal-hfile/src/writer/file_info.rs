//! The file info block the writer emits: `PBUF` and a length-delimited `FileInfoProto`
//! (repeated `BytesBytesPair`, in byte order of the keys as HBase's `TreeMap` keeps
//! them). Keys are those of a flushed store file: `StoreFileWriter`'s (`MAX_SEQ_ID_KEY`,
//! `MAJOR_COMPACTION_KEY`, `COMPACTION_EVENT_KEY`, `HISTORICAL`, `TIMERANGE`,
//! `EARLIEST_PUT_TS`, `DELETE_FAMILY_COUNT`, `BLOOM_FILTER_TYPE`) and `HFileWriterImpl`'s
//! (`MAX_MEMSTORE_TS_KEY`, `KEY_VALUE_VERSION`, `hfile.LASTKEY`, `hfile.AVG_KEY_LEN`,
//! `hfile.AVG_VALUE_LEN`, `hfile.CREATE_TIME_TS`, `hfile.KEY_OF_BIGGEST_CELL`,
//! `hfile.LEN_OF_BIGGEST_CELL`, `hfile.MAX_TAGS_LEN`, `hfile.TAGS_COMPRESSED`), plus
//! `BULKLOAD_TIMESTAMP` when asked. `DATA_BLOCK_ENCODING` is absent, as HBase leaves it
//! for encoding NONE.

use super::HFileWriterOptions;
use super::cell::CellRef;
use super::encode;
use crate::kv::CellKind;
use crate::trailer::PBUF_MAGIC;
use std::collections::BTreeMap;

/// `TimeRangeTracker`'s initial bounds (an empty tracker).
const INITIAL_MIN_TIMESTAMP: i64 = i64::MAX;
const INITIAL_MAX_TIMESTAMP: i64 = -1;

/// What the writer tracks about the cells for the file info.
pub(crate) struct Stats {
    pub cells: u64,
    total_key_len: u64,
    total_value_len: u64,
    biggest_len: u64,
    biggest_key: Option<Vec<u8>>,
    max_seq_id: u64,
    min_ts: i64,
    max_ts: i64,
    earliest_put_ts: i64,
    delete_family_count: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            cells: 0,
            total_key_len: 0,
            total_value_len: 0,
            biggest_len: 0,
            biggest_key: None,
            max_seq_id: 0,
            min_ts: INITIAL_MIN_TIMESTAMP,
            max_ts: INITIAL_MAX_TIMESTAMP,
            earliest_put_ts: i64::MAX,
            delete_family_count: 0,
        }
    }
}

impl Stats {
    pub fn add(&mut self, c: &CellRef<'_>, key_len: usize) {
        self.cells += 1;
        self.total_key_len += key_len as u64;
        self.total_value_len += c.value.len() as u64;
        // `PrivateCellUtil.estimatedSerializedSizeOf`: the KeyValue and an int.
        let size = (4 + 4 + key_len + c.value.len() + 4) as u64;
        if size > self.biggest_len {
            self.biggest_len = size;
            self.biggest_key = Some(c.key());
        }
        self.max_seq_id = self.max_seq_id.max(c.seq_id);
        // `TimeRangeTracker.includeTimestamp(Cell)`: column and family delete markers
        // reach back to time 0.
        self.include_ts(c.timestamp);
        if matches!(c.kind, CellKind::DeleteColumn | CellKind::DeleteFamily) {
            self.include_ts(0);
        }
        match c.kind {
            CellKind::Put => self.earliest_put_ts = self.earliest_put_ts.min(c.timestamp),
            CellKind::DeleteFamily | CellKind::DeleteFamilyVersion => {
                self.delete_family_count += 1;
            }
            _ => {}
        }
    }

    fn include_ts(&mut self, ts: i64) {
        self.min_ts = self.min_ts.min(ts);
        self.max_ts = self.max_ts.max(ts);
    }
}

/// The file info block's payload.
pub(crate) fn encode(s: &Stats, o: &HFileWriterOptions, last_key: Option<&[u8]>) -> Vec<u8> {
    let mut map: BTreeMap<&[u8], Vec<u8>> = BTreeMap::new();
    let long = |v: i64| v.to_be_bytes().to_vec();
    let int = |v: i32| v.to_be_bytes().to_vec();
    let avg = |total: u64| {
        total
            .checked_div(s.cells)
            .map_or(0, |a| i32::try_from(a).unwrap_or(i32::MAX))
    };
    map.insert(b"MAX_SEQ_ID_KEY", long(o.max_seq_id as i64));
    map.insert(b"MAJOR_COMPACTION_KEY", vec![u8::from(o.major_compaction)]);
    // An empty `CompactionEventTracker`: PBUF and no fields.
    map.insert(b"COMPACTION_EVENT_KEY", PBUF_MAGIC.to_vec());
    map.insert(b"HISTORICAL", vec![0]);
    // `TimeRangeTracker.toByteArray`: two longs, no protobuf (HBASE-21012).
    let mut range = long(s.min_ts);
    range.extend_from_slice(&long(s.max_ts));
    map.insert(b"TIMERANGE", range);
    map.insert(b"EARLIEST_PUT_TS", long(s.earliest_put_ts));
    map.insert(b"DELETE_FAMILY_COUNT", long(s.delete_family_count as i64));
    map.insert(b"BLOOM_FILTER_TYPE", b"NONE".to_vec());
    if let Some(t) = o.bulkload_time_ms {
        map.insert(b"BULKLOAD_TIMESTAMP", long(t));
    }
    map.insert(b"MAX_MEMSTORE_TS_KEY", long(s.max_seq_id as i64));
    map.insert(b"KEY_VALUE_VERSION", int(1));
    if let Some(k) = last_key {
        map.insert(b"hfile.LASTKEY", k.to_vec());
    }
    map.insert(b"hfile.AVG_KEY_LEN", int(avg(s.total_key_len)));
    map.insert(b"hfile.AVG_VALUE_LEN", int(avg(s.total_value_len)));
    map.insert(b"hfile.CREATE_TIME_TS", long(o.create_time_ms));
    if let Some(k) = &s.biggest_key {
        map.insert(b"hfile.KEY_OF_BIGGEST_CELL", k.clone());
        map.insert(b"hfile.LEN_OF_BIGGEST_CELL", long(s.biggest_len as i64));
    }
    map.insert(b"hfile.MAX_TAGS_LEN", int(0));
    map.insert(b"hfile.TAGS_COMPRESSED", vec![0]);
    let mut msg = Vec::new();
    for (k, v) in &map {
        let mut pair = Vec::with_capacity(k.len() + v.len() + 8);
        encode::bytes_field(&mut pair, 1, k);
        encode::bytes_field(&mut pair, 2, v);
        encode::bytes_field(&mut msg, 1, &pair);
    }
    let mut out = PBUF_MAGIC.to_vec();
    encode::varint(&mut out, msg.len() as u64);
    out.extend_from_slice(&msg);
    out
}
