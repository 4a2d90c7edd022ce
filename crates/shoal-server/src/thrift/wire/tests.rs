//! The codec against known bytes, round trips, every prefix of a message,
//! and garbage.

use super::*;

fn sample() -> Struct {
    Struct::new()
        .with(1, Value::Binary(Bytes::from_static(b"table")))
        .with(2, Value::Bool(true))
        .with(3, Value::Bool(false))
        .with(4, Value::Byte(-7))
        .with(5, Value::I16(-300))
        .with(6, Value::I32(-70_000))
        .with(7, Value::I64(i64::MIN))
        .with(8, Value::Double(-2.5))
        .with(
            9,
            Value::List(
                TType::I32,
                (0..40).map(|i| Value::I32(i * 1_000_003)).collect(),
            ),
        )
        .with(
            10,
            Value::List(TType::Bool, vec![Value::Bool(true), Value::Bool(false)]),
        )
        .with(
            300,
            Value::Map(
                TType::Binary,
                TType::Struct,
                vec![(
                    Value::Binary(Bytes::from_static(b"cf:q")),
                    Value::Struct(
                        Struct::new()
                            .with(1, Value::Binary(Bytes::from_static(b"v")))
                            .with(2, Value::I64(42)),
                    ),
                )],
            ),
        )
        .with(
            -2,
            Value::Set(TType::Binary, vec![Value::Binary(Bytes::new())]),
        )
        .with(11, Value::Uuid([9; 16]))
        .with(12, Value::Map(TType::I32, TType::I32, Vec::new()))
}

fn message() -> Message {
    Message {
        name: "getRowWithColumns".into(),
        kind: MessageType::Call,
        seqid: 77,
        body: sample(),
    }
}

const ALL: [(Protocol, Transport); 4] = [
    (Protocol::Binary, Transport::Buffered),
    (Protocol::Binary, Transport::Framed),
    (Protocol::Compact, Transport::Buffered),
    (Protocol::Compact, Transport::Framed),
];

fn encoded(p: Protocol, t: Transport) -> Bytes {
    let mut out = Vec::new();
    encode(&message(), p, t, &mut out);
    Bytes::from(out)
}

#[test]
fn every_protocol_and_transport_round_trips() {
    for (p, t) in ALL {
        let bytes = encoded(p, t);
        let (m, used) = decode(&bytes, p, t, &Limits::default()).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        // An empty map decodes with placeholder types in compact.
        let mut want = message();
        if p == Protocol::Compact {
            want.body.fields.pop();
            want.body = want
                .body
                .with(12, Value::Map(TType::Binary, TType::Binary, Vec::new()));
        }
        assert_eq!(m, want, "{p:?} {t:?}");
        assert_eq!(detect(&bytes).unwrap().unwrap(), (p, t));
    }
}

#[test]
fn known_bytes() {
    let call = Message {
        name: "getTableNames".into(),
        kind: MessageType::Call,
        seqid: 0,
        body: Struct::new(),
    };
    let mut out = Vec::new();
    encode(&call, Protocol::Binary, Transport::Buffered, &mut out);
    let mut want = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 13];
    want.extend_from_slice(b"getTableNames");
    want.extend_from_slice(&[0, 0, 0, 0, 0]);
    assert_eq!(out, want);
    let mut framed = Vec::new();
    encode(&call, Protocol::Binary, Transport::Framed, &mut framed);
    assert_eq!(&framed[..4], &(want.len() as u32).to_be_bytes());
    assert_eq!(&framed[4..], &want[..]);
    let mut compact = Vec::new();
    encode(&call, Protocol::Compact, Transport::Buffered, &mut compact);
    assert_eq!(&compact[..4], &[0x82, 0x21, 0x00, 13]);
    // A compact struct: field 1 i32 -1 (delta form), then field 20 bool
    // true (long form: type 1, zigzag id 40).
    let s = Struct::new()
        .with(1, Value::I32(-1))
        .with(20, Value::Bool(true));
    let mut out = Vec::new();
    compact::write_struct(&mut out, &s);
    assert_eq!(out, vec![0x15, 0x01, 0x01, 40, 0x00]);
}

#[test]
fn every_prefix_asks_for_more_and_trailing_bytes_stay() {
    for (p, t) in ALL {
        let bytes = encoded(p, t);
        for n in 0..bytes.len() {
            let prefix = bytes.slice(..n);
            assert_eq!(
                decode(&prefix, p, t, &Limits::default()).unwrap(),
                None,
                "{p:?} {t:?} prefix {n}"
            );
        }
        let mut two = bytes.to_vec();
        two.extend_from_slice(&bytes);
        let two = Bytes::from(two);
        let (_, used) = decode(&two, p, t, &Limits::default()).unwrap().unwrap();
        assert_eq!(used, bytes.len());
    }
}

#[test]
fn huge_declared_sizes_never_allocate_and_limits_hold() {
    let limits = Limits {
        max_message_bytes: 1 << 20,
        max_depth: 64,
    };
    // A string of 2 GiB declared in a binary call.
    let mut b = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'x', 0, 0, 0, 1];
    b.extend_from_slice(&[11, 0, 1, 0x7f, 0xff, 0xff, 0xff]);
    assert!(matches!(
        decode(
            &Bytes::from(b),
            Protocol::Binary,
            Transport::Buffered,
            &limits
        ),
        Err(CodecError::TooLarge { .. })
    ));
    // A list of 2^31-1 elements: waits for bytes, then the limit stops it.
    let mut b = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'x', 0, 0, 0, 1];
    b.extend_from_slice(&[15, 0, 1, 12, 0x7f, 0xff, 0xff, 0xff]);
    assert!(
        decode(
            &Bytes::from(b),
            Protocol::Binary,
            Transport::Buffered,
            &limits
        )
        .is_err()
    );
    // A frame over the limit is refused from its length alone.
    let b = Bytes::from(vec![0x10, 0, 0, 0, 0x80]);
    assert!(matches!(
        decode(&b, Protocol::Binary, Transport::Framed, &limits),
        Err(CodecError::TooLarge { .. })
    ));
    // Nesting deeper than the limit: an error, not a stack overflow.
    let mut nested = vec![
        0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'x', 0, 0, 0, 1, 15, 0, 1,
    ];
    for _ in 0..10_000 {
        nested.extend_from_slice(&[15, 0, 0, 0, 1]); // a list of one list
    }
    assert!(matches!(
        decode(
            &Bytes::from(nested),
            Protocol::Binary,
            Transport::Buffered,
            &limits
        ),
        Err(CodecError::TooDeep(64))
    ));
    // A buffered message still incomplete at the limit.
    let mut b = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'x', 0, 0, 0, 1];
    b.extend(std::iter::repeat_n(2u8, (1 << 20) + 10).flat_map(|_| [2u8, 0, 1, 1]));
    assert!(
        decode(
            &Bytes::from(b),
            Protocol::Binary,
            Transport::Buffered,
            &limits
        )
        .is_err()
    );
}

#[test]
fn garbage_never_panics() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let valid: Vec<(Protocol, Transport, Bytes)> =
        ALL.iter().map(|&(p, t)| (p, t, encoded(p, t))).collect();
    for _ in 0..20_000 {
        let (p, t, base) = &valid[(next() % 4) as usize];
        let mut b = base.to_vec();
        // Flip a few bytes, or take random bytes altogether.
        if next() % 4 == 0 {
            let n = (next() % 64) as usize;
            b = (0..n).map(|_| next() as u8).collect();
        } else {
            for _ in 0..1 + next() % 4 {
                let i = (next() % b.len() as u64) as usize;
                b[i] = next() as u8;
            }
        }
        let _ = decode(&Bytes::from(b.clone()), *p, *t, &Limits::default());
        let _ = detect(&b);
    }
}

#[test]
fn detect_reads_the_first_bytes() {
    assert_eq!(detect(&[]), None);
    assert_eq!(
        detect(&[0x80]).unwrap().unwrap(),
        (Protocol::Binary, Transport::Buffered)
    );
    assert_eq!(
        detect(&[0x82]).unwrap().unwrap(),
        (Protocol::Compact, Transport::Buffered)
    );
    assert_eq!(detect(&[0, 0, 0, 9]), None);
    assert_eq!(
        detect(&[0, 0, 0, 9, 0x82]).unwrap().unwrap(),
        (Protocol::Compact, Transport::Framed)
    );
    assert!(detect(b"GET / HTTP/1.1").unwrap().is_err());
    assert!(detect(&[0xff]).unwrap().is_err());
}
