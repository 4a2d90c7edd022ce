//! Base64 as HBase REST writes keys, columns and values in JSON and XML
//! (standard alphabet, padded), read back with or without padding; and the
//! URL-safe alphabet of `e=b64` keys.

use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use bytes::Bytes;

const STANDARD: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

const URL_SAFE: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// `bytes` in standard, padded base64.
pub fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Standard base64 (padding optional, surrounding whitespace ignored).
pub fn decode(text: &str) -> Result<Bytes, base64::DecodeError> {
    STANDARD.decode(text.trim()).map(Bytes::from)
}

/// URL-safe base64 (padding optional).
pub fn decode_url(text: &[u8]) -> Result<Bytes, base64::DecodeError> {
    URL_SAFE.decode(text).map(Bytes::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_or_without_padding() {
        assert_eq!(encode(b"cf:q"), "Y2Y6cQ==");
        assert_eq!(decode("Y2Y6cQ==").ok(), Some(Bytes::from("cf:q")));
        assert_eq!(decode("Y2Y6cQ").ok(), Some(Bytes::from("cf:q")));
        assert_eq!(
            decode_url(b"_-8").ok(),
            Some(Bytes::from_static(&[0xff, 0xef]))
        );
        assert!(decode("not base64!").is_err());
    }
}
