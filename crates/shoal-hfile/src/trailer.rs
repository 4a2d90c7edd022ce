//! The fixed file trailer at the end of every HFile: version, where the load-on-open
//! section and the data blocks are, counts, comparator and compression.
//!
//! Layout: the last 4 bytes are the version (major in the low 3 bytes, minor in the top
//! byte). The trailer occupies the last 212 bytes of a v2 file and the last 4096 bytes
//! of a v3 file; it starts with the magic `TRABLK"$`. From v2 minor 2 on, the magic is
//! followed by a length-delimited `FileTrailerProto` (no `PBUF` prefix, unlike the file
//! info), then zero padding; older v2 trailers hold fixed big-endian fields.

use crate::compression::Compression;
use crate::cursor::Cursor;
use crate::error::{At, ErrorKind, HFileError};
use crate::order::Comparator;
use crate::protobuf::{self, Field};
use crate::source::ReadAt;

pub(crate) const TRAILER_MAGIC: &[u8; 8] = b"TRABLK\"$";
pub(crate) const PBUF_MAGIC: &[u8; 4] = b"PBUF";
const V2_TRAILER_SIZE: u64 = 212;
const V3_TRAILER_SIZE: u64 = 4096;
/// Highest minor version HBase 2.x writes or reads.
const MAX_MINOR_VERSION: u32 = 3;
/// From this v2 minor version on the trailer is protobuf.
const PBUF_TRAILER_MINOR_VERSION: u32 = 2;
/// From this minor version on blocks carry HBase checksums (and a 33-byte header).
const MINOR_VERSION_WITH_CHECKSUM: u32 = 1;
/// Length of the comparator class name field of the old fixed-field trailer.
const WRITABLE_COMPARATOR_NAME_LEN: usize = 128;

/// What the fixed file trailer says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trailer {
    pub major_version: u32,
    pub minor_version: u32,
    /// Offset of the trailer itself (file length minus trailer size).
    pub trailer_offset: u64,
    pub file_info_offset: u64,
    pub load_on_open_offset: u64,
    pub uncompressed_data_index_size: u64,
    pub total_uncompressed_bytes: u64,
    /// Entries in the root level of the data index.
    pub data_index_count: u32,
    pub meta_index_count: u32,
    /// Number of cells in the file.
    pub entry_count: u64,
    pub num_data_index_levels: u32,
    /// Offset of the first data block; `u64::MAX` (HBase's -1) in a file without cells.
    pub first_data_block_offset: u64,
    pub last_data_block_offset: u64,
    /// As stored; see [`Trailer::comparator`] for what it means.
    pub comparator_class_name: String,
    pub comparator: Comparator,
    pub compression: Compression,
    /// True if the file is encrypted (the trailer holds a wrapped key); such files are
    /// refused at open.
    pub encrypted: bool,
}

impl Trailer {
    /// True if blocks carry HBase checksums and a 33-byte header (minor version ≥ 1).
    pub fn has_checksums(&self) -> bool {
        self.minor_version >= MINOR_VERSION_WITH_CHECKSUM
    }

    /// Size of the trailer in bytes for this major version.
    pub fn size(&self) -> u64 {
        trailer_size(self.major_version)
    }
}

fn trailer_size(major: u32) -> u64 {
    if major == 2 {
        V2_TRAILER_SIZE
    } else {
        V3_TRAILER_SIZE
    }
}

/// Reads and decodes the trailer of `source`.
pub(crate) fn read_trailer<S: ReadAt + ?Sized>(
    source: &S,
    file: &str,
) -> Result<Trailer, HFileError> {
    let file_len = source.len();
    let at_end = At {
        file,
        offset: file_len.saturating_sub(4),
    };
    if file_len < 4 {
        return Err(at_end.err(ErrorKind::NotAnHFile(format!(
            "{file_len} bytes is too short for a trailer"
        ))));
    }
    let version = read(source, file_len - 4, 4, at_end)?;
    let version = u32::from_be_bytes([version[0], version[1], version[2], version[3]]);
    let (major, minor) = (version & 0x00ff_ffff, version >> 24);
    if !(2..=3).contains(&major) {
        return Err(at_end.err(ErrorKind::NotAnHFile(format!(
            "last 4 bytes {version:#010x} are no HFile version (major {major})"
        ))));
    }
    if minor > MAX_MINOR_VERSION {
        return Err(at_end.err(ErrorKind::UnsupportedVersion { major, minor }));
    }
    let size = trailer_size(major);
    if file_len < size {
        return Err(at_end.err(ErrorKind::NotAnHFile(format!(
            "{file_len} bytes is shorter than a v{major} trailer ({size} bytes)"
        ))));
    }
    let trailer_offset = file_len - size;
    let at = At {
        file,
        offset: trailer_offset,
    };
    let bytes = read(source, trailer_offset, size as usize, at)?;
    decode(&bytes, major, minor, trailer_offset, at)
}

fn read<S: ReadAt + ?Sized>(
    source: &S,
    offset: u64,
    len: usize,
    at: At<'_>,
) -> Result<Vec<u8>, HFileError> {
    source.read_at(offset, len).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            at.truncated(format!(
                "{len} bytes at {offset} run past the end of the file"
            ))
        } else {
            at.err(ErrorKind::Io(e))
        }
    })
}

/// Decodes trailer bytes (the whole trailer, magic to version) of a known version.
fn decode(
    bytes: &[u8],
    major: u32,
    minor: u32,
    trailer_offset: u64,
    at: At<'_>,
) -> Result<Trailer, HFileError> {
    if bytes.get(..8) != Some(TRAILER_MAGIC.as_slice()) {
        return Err(at.err(ErrorKind::NotAnHFile(
            "no trailer magic TRABLK\"$ where the trailer should start".into(),
        )));
    }
    let body = &bytes[8..bytes.len() - 4];
    let mut t = Trailer {
        major_version: major,
        minor_version: minor,
        trailer_offset,
        file_info_offset: 0,
        load_on_open_offset: 0,
        uncompressed_data_index_size: 0,
        total_uncompressed_bytes: 0,
        data_index_count: 0,
        meta_index_count: 0,
        entry_count: 0,
        num_data_index_levels: 1,
        first_data_block_offset: 0,
        last_data_block_offset: 0,
        comparator_class_name: String::new(),
        comparator: Comparator::Cell,
        compression: Compression::None,
        encrypted: false,
    };
    if major > 2 || minor >= PBUF_TRAILER_MINOR_VERSION {
        decode_pb(body, &mut t, at)?;
    } else {
        decode_writable(body, &mut t).map_err(|e| at.corrupt(format!("trailer: {e}")))?;
    }
    t.comparator = Comparator::from_class_name(&t.comparator_class_name).ok_or_else(|| {
        at.err(ErrorKind::UnknownComparator(
            t.comparator_class_name.clone(),
        ))
    })?;
    Ok(t)
}

fn decode_pb(body: &[u8], t: &mut Trailer, at: At<'_>) -> Result<(), HFileError> {
    let bad = |e: String| at.corrupt(format!("trailer protobuf: {e}"));
    let (msg, _) = protobuf::delimited(body).map_err(bad)?;
    for field in protobuf::fields(msg).map_err(bad)? {
        match field {
            Field::Varint(n, v) => set_pb_number(t, n, v, at)?,
            Field::Bytes(11, name) => {
                t.comparator_class_name = String::from_utf8_lossy(name).into_owned();
            }
            Field::Bytes(13, _) => t.encrypted = true,
            _ => {}
        }
    }
    Ok(())
}

fn set_pb_number(t: &mut Trailer, number: u32, v: u64, at: At<'_>) -> Result<(), HFileError> {
    let as_u32 = |v: u64| {
        u32::try_from(v).map_err(|_| at.corrupt(format!("trailer field {number} = {v} too big")))
    };
    match number {
        1 => t.file_info_offset = v,
        2 => t.load_on_open_offset = v,
        3 => t.uncompressed_data_index_size = v,
        4 => t.total_uncompressed_bytes = v,
        5 => t.data_index_count = as_u32(v)?,
        6 => t.meta_index_count = as_u32(v)?,
        7 => t.entry_count = v,
        8 => t.num_data_index_levels = as_u32(v)?,
        9 => t.first_data_block_offset = v,
        10 => t.last_data_block_offset = v,
        12 => t.compression = compression_from_ordinal(as_u32(v)?, at)?,
        _ => {}
    }
    Ok(())
}

fn compression_from_ordinal(ordinal: u32, at: At<'_>) -> Result<Compression, HFileError> {
    Compression::from_ordinal(ordinal).ok_or_else(|| at.err(ErrorKind::UnknownCompression(ordinal)))
}

/// The fixed-field trailer of v2 files before minor version 2.
fn decode_writable(body: &[u8], t: &mut Trailer) -> Result<(), String> {
    let mut c = Cursor::new(body);
    t.file_info_offset = c.u64("file info offset")?;
    t.load_on_open_offset = c.u64("load-on-open offset")?;
    t.data_index_count = c.u32("data index count")?;
    t.uncompressed_data_index_size = c.u64("uncompressed data index size")?;
    t.meta_index_count = c.u32("meta index count")?;
    t.total_uncompressed_bytes = c.u64("total uncompressed bytes")?;
    t.entry_count = c.u64("entry count")?;
    let ordinal = c.u32("compression codec")?;
    t.compression = Compression::from_ordinal(ordinal)
        .ok_or_else(|| format!("compression ordinal {ordinal}"))?;
    t.num_data_index_levels = c.u32("index levels")?;
    t.first_data_block_offset = c.u64("first data block offset")?;
    t.last_data_block_offset = c.u64("last data block offset")?;
    let name = c.take(WRITABLE_COMPARATOR_NAME_LEN, "comparator class name")?;
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    t.comparator_class_name = String::from_utf8_lossy(&name[..end]).into_owned();
    Ok(())
}

#[cfg(test)]
pub(crate) mod build {
    //! Trailer bytes for hand-built test files.
    use super::*;
    use crate::protobuf::encode;

    /// A v3 trailer (4096 bytes) with the given fields.
    pub fn v3(t: &Trailer) -> Vec<u8> {
        let mut msg = Vec::new();
        encode::uint_field(&mut msg, 1, t.file_info_offset);
        encode::uint_field(&mut msg, 2, t.load_on_open_offset);
        encode::uint_field(&mut msg, 3, t.uncompressed_data_index_size);
        encode::uint_field(&mut msg, 4, t.total_uncompressed_bytes);
        encode::uint_field(&mut msg, 5, u64::from(t.data_index_count));
        encode::uint_field(&mut msg, 6, u64::from(t.meta_index_count));
        encode::uint_field(&mut msg, 7, t.entry_count);
        encode::uint_field(&mut msg, 8, u64::from(t.num_data_index_levels));
        encode::uint_field(&mut msg, 9, t.first_data_block_offset);
        encode::uint_field(&mut msg, 10, t.last_data_block_offset);
        encode::bytes_field(&mut msg, 11, t.comparator_class_name.as_bytes());
        encode::uint_field(&mut msg, 12, u64::from(t.compression.ordinal()));
        if t.encrypted {
            encode::bytes_field(&mut msg, 13, b"wrapped key");
        }
        let mut out = TRAILER_MAGIC.to_vec();
        encode::varint(&mut out, msg.len() as u64);
        out.extend_from_slice(&msg);
        out.resize(V3_TRAILER_SIZE as usize - 4, 0);
        out.extend_from_slice(&((t.minor_version << 24) | t.major_version).to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trailer {
        Trailer {
            major_version: 3,
            minor_version: 3,
            trailer_offset: 0,
            file_info_offset: 100,
            load_on_open_offset: 90,
            uncompressed_data_index_size: 7,
            total_uncompressed_bytes: 1000,
            data_index_count: 2,
            meta_index_count: 0,
            entry_count: 42,
            num_data_index_levels: 1,
            first_data_block_offset: 0,
            last_data_block_offset: 60,
            comparator_class_name: "org.apache.hadoop.hbase.KeyValue$KVComparator".into(),
            comparator: Comparator::Cell,
            compression: Compression::Snappy,
            encrypted: false,
        }
    }

    #[test]
    fn v3_trailer_round_trips() {
        let t = sample();
        let bytes = build::v3(&t);
        let got = read_trailer(bytes.as_slice(), "t").expect("trailer");
        assert_eq!(got, t);
        assert!(got.has_checksums());
    }

    #[test]
    fn writable_v2_trailer_decodes() {
        let mut body = TRAILER_MAGIC.to_vec();
        for v in [100u64, 90] {
            body.extend_from_slice(&v.to_be_bytes());
        }
        body.extend_from_slice(&2u32.to_be_bytes());
        body.extend_from_slice(&7u64.to_be_bytes());
        body.extend_from_slice(&0u32.to_be_bytes());
        body.extend_from_slice(&1000u64.to_be_bytes());
        body.extend_from_slice(&42u64.to_be_bytes());
        body.extend_from_slice(&2u32.to_be_bytes()); // NONE
        body.extend_from_slice(&1u32.to_be_bytes());
        body.extend_from_slice(&0u64.to_be_bytes());
        body.extend_from_slice(&60u64.to_be_bytes());
        let mut name = b"org.apache.hadoop.hbase.KeyValue$KeyComparator".to_vec();
        name.resize(128, 0);
        body.extend_from_slice(&name);
        body.resize(208, 0);
        body.extend_from_slice(&((1u32 << 24) | 2).to_be_bytes());
        let t = read_trailer(body.as_slice(), "t").expect("trailer");
        assert_eq!((t.major_version, t.minor_version), (2, 1));
        assert_eq!(t.entry_count, 42);
        assert_eq!(t.compression, Compression::None);
        assert_eq!(t.comparator, Comparator::Cell);
    }

    #[test]
    fn garbage_is_not_an_hfile() {
        for bytes in [vec![], vec![0; 3], vec![7; 5000], {
            let mut v = vec![0; 5000];
            v[4996..].copy_from_slice(&3u32.to_be_bytes());
            v
        }] {
            let e = read_trailer(bytes.as_slice(), "g").expect_err("garbage");
            assert!(matches!(e.kind, ErrorKind::NotAnHFile(_)), "{e}");
        }
    }
}
