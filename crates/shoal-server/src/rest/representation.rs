//! Which representation a request speaks and wants: HBase REST's media
//! types, chosen from `Content-Type` (the body) and `Accept` (the answer).
//! As in HBase's gateway (Jersey), an `Accept` listing several types takes
//! the first one the resource produces, and none (or `*/*`) means XML.

/// A representation of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// `application/json`.
    Json,
    /// `text/xml` or `application/xml`.
    Xml,
    /// `application/x-protobuf` (or `application/protobuf`).
    Protobuf,
    /// `application/octet-stream`: one cell's value, bare.
    Binary,
    /// `text/plain`: what HBase's gateway prints for people (the table
    /// list, versions, the cluster status).
    Text,
}

impl Repr {
    /// The `Content-Type` of an answer in this representation.
    pub fn media_type(self) -> &'static str {
        match self {
            Repr::Json => "application/json",
            Repr::Xml => "text/xml",
            Repr::Protobuf => "application/x-protobuf",
            Repr::Binary => "application/octet-stream",
            Repr::Text => "text/plain",
        }
    }

    /// The representation a media type names (parameters ignored), if any.
    pub fn from_media_type(media: &str) -> Option<Repr> {
        let base = media.split(';').next().unwrap_or("").trim();
        Some(match base.to_ascii_lowercase().as_str() {
            "application/json" => Repr::Json,
            "text/xml" | "application/xml" => Repr::Xml,
            "application/x-protobuf" | "application/protobuf" => Repr::Protobuf,
            "application/octet-stream" => Repr::Binary,
            "text/plain" => Repr::Text,
            _ => return None,
        })
    }

    /// What an `Accept` header asks for, among `offered` (the resource's
    /// representations, its default first): the first listed type offered;
    /// the default for no header or a wildcard; None when nothing listed is
    /// offered (406).
    pub fn accepted(accept: Option<&str>, offered: &[Repr]) -> Option<Repr> {
        let default = offered.first().copied();
        let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
            return default;
        };
        for item in accept.split(',') {
            let base = item.split(';').next().unwrap_or("").trim();
            if base == "*/*" || base == "application/*" || base == "text/*" {
                return default;
            }
            if let Some(r) = Repr::from_media_type(base).filter(|r| offered.contains(r)) {
                return Some(r);
            }
        }
        None
    }
}

/// The representations of a resource that has no bare-value form.
pub const MODELS: &[Repr] = &[Repr::Xml, Repr::Json, Repr::Protobuf];

/// The representations of cells: the models, and a bare value.
pub const CELLS: &[Repr] = &[Repr::Xml, Repr::Json, Repr::Protobuf, Repr::Binary];

/// The representations of the cluster-wide resources (table list,
/// version, status): text for people first, as HBase's gateway.
pub const INFO: &[Repr] = &[Repr::Text, Repr::Xml, Repr::Json, Repr::Protobuf];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_picks_the_first_offered_type() {
        assert_eq!(Repr::accepted(None, MODELS), Some(Repr::Xml));
        assert_eq!(Repr::accepted(Some("*/*"), MODELS), Some(Repr::Xml));
        assert_eq!(
            Repr::accepted(Some("application/json; charset=utf-8"), MODELS),
            Some(Repr::Json)
        );
        assert_eq!(
            Repr::accepted(Some("image/png, application/x-protobuf"), MODELS),
            Some(Repr::Protobuf)
        );
        assert_eq!(
            Repr::accepted(Some("application/octet-stream"), MODELS),
            None
        );
        assert_eq!(
            Repr::accepted(Some("application/octet-stream"), CELLS),
            Some(Repr::Binary)
        );
        assert_eq!(Repr::accepted(Some("text/plain"), CELLS), None);
        assert_eq!(Repr::accepted(None, INFO), Some(Repr::Text));
    }

    #[test]
    fn content_types_are_recognised() {
        assert_eq!(Repr::from_media_type("application/xml"), Some(Repr::Xml));
        assert_eq!(
            Repr::from_media_type("application/protobuf"),
            Some(Repr::Protobuf)
        );
        assert_eq!(
            Repr::from_media_type("TEXT/XML;charset=UTF-8"),
            Some(Repr::Xml)
        );
        assert_eq!(Repr::from_media_type("text/plain"), Some(Repr::Text));
        assert_eq!(Repr::from_media_type("text/csv"), None);
    }
}
