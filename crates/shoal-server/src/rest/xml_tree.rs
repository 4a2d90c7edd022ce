//! A small XML reader for the bodies HBase REST clients send (`CellSet`,
//! `Scanner`, `TableSchema`): elements, attributes, text and the five
//! predefined and numeric entities. No DTDs (a `<!DOCTYPE` is refused, so
//! no entity can expand), no namespaces, at most 64 levels deep.

use super::fault::RestError;

/// Nesting deeper than this is refused.
const MAX_DEPTH: usize = 64;

/// One element.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    /// Its name.
    pub name: String,
    /// Its attributes, in order.
    pub attrs: Vec<(String, String)>,
    /// Its child elements.
    pub children: Vec<Element>,
    /// Its text (all text pieces joined).
    pub text: String,
}

impl Element {
    /// The value of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The children named `name`.
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }
}

fn bad(why: impl std::fmt::Display) -> RestError {
    RestError::bad(format!("malformed XML: {why}"))
}

/// Parses a document: its root element.
pub fn parse(body: &[u8]) -> Result<Element, RestError> {
    let text = std::str::from_utf8(body).map_err(|_| bad("not UTF-8"))?;
    let mut p = Parser { s: text, at: 0 };
    p.skip_prolog()?;
    let root = p.element(0)?;
    p.skip_misc()?;
    if p.at < p.s.len() {
        return Err(bad(format!(
            "content after the root element at byte {}",
            p.at
        )));
    }
    Ok(root)
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.at..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.at = self.s.len() - trimmed.len();
    }

    /// Skips `<?...?>` and comments, and whitespace.
    fn skip_misc(&mut self) -> Result<(), RestError> {
        loop {
            self.skip_ws();
            if self.rest().starts_with("<?") {
                self.skip_past("?>")?;
            } else if self.rest().starts_with("<!--") {
                self.skip_past("-->")?;
            } else {
                return Ok(());
            }
        }
    }

    fn skip_prolog(&mut self) -> Result<(), RestError> {
        self.skip_misc()?;
        if self.rest().starts_with("<!") {
            return Err(bad("DOCTYPE declarations are not accepted"));
        }
        Ok(())
    }

    fn skip_past(&mut self, end: &str) -> Result<(), RestError> {
        match self.rest().find(end) {
            Some(i) => {
                self.at += i + end.len();
                Ok(())
            }
            None => Err(bad(format!("unterminated construct, expected {end:?}"))),
        }
    }

    fn name(&mut self) -> Result<String, RestError> {
        let len = self
            .rest()
            .find(|c: char| c.is_whitespace() || matches!(c, '=' | '>' | '/' | '<'))
            .unwrap_or(self.rest().len());
        if len == 0 {
            return Err(bad(format!("expected a name at byte {}", self.at)));
        }
        let name = self.rest()[..len].to_string();
        self.at += len;
        Ok(name)
    }

    fn element(&mut self, depth: usize) -> Result<Element, RestError> {
        if depth >= MAX_DEPTH {
            return Err(bad("nested too deep"));
        }
        if !self.rest().starts_with('<') {
            return Err(bad(format!("expected an element at byte {}", self.at)));
        }
        self.at += 1;
        let mut e = Element {
            name: self.name()?,
            ..Element::default()
        };
        loop {
            self.skip_ws();
            if self.rest().starts_with("/>") {
                self.at += 2;
                return Ok(e);
            }
            if self.rest().starts_with('>') {
                self.at += 1;
                break;
            }
            let key = self.name()?;
            self.skip_ws();
            if !self.rest().starts_with('=') {
                return Err(bad(format!("attribute {key} has no value")));
            }
            self.at += 1;
            self.skip_ws();
            let quote = self
                .rest()
                .chars()
                .next()
                .filter(|c| *c == '"' || *c == '\'')
                .ok_or_else(|| bad(format!("attribute {key}'s value is not quoted")))?;
            self.at += 1;
            let end = self
                .rest()
                .find(quote)
                .ok_or_else(|| bad(format!("attribute {key}'s value is not closed")))?;
            let value = unescape(&self.rest()[..end])?;
            self.at += end + 1;
            e.attrs.push((key, value));
        }
        self.content(&mut e, depth)?;
        Ok(e)
    }

    /// Children and text up to `e`'s end tag.
    fn content(&mut self, e: &mut Element, depth: usize) -> Result<(), RestError> {
        loop {
            let next = self
                .rest()
                .find('<')
                .ok_or_else(|| bad(format!("element {} is not closed", e.name)))?;
            e.text.push_str(&unescape(&self.rest()[..next])?);
            self.at += next;
            let rest = self.rest();
            if rest.starts_with("</") {
                self.at += 2;
                let name = self.name()?;
                if name != e.name {
                    return Err(bad(format!("</{name}> closes <{}>", e.name)));
                }
                self.skip_ws();
                if !self.rest().starts_with('>') {
                    return Err(bad(format!("end tag of {name} is not closed")));
                }
                self.at += 1;
                return Ok(());
            } else if rest.starts_with("<!--") {
                self.skip_past("-->")?;
            } else if rest.starts_with("<![CDATA[") {
                self.at += 9;
                let end = self
                    .rest()
                    .find("]]>")
                    .ok_or_else(|| bad("CDATA is not closed"))?;
                e.text.push_str(&self.rest()[..end]);
                self.at += end + 3;
            } else if rest.starts_with("<?") {
                self.skip_past("?>")?;
            } else {
                let child = self.element(depth + 1)?;
                e.children.push(child);
            }
        }
    }
}

/// Replaces entities in `s`.
fn unescape(s: &str) -> Result<String, RestError> {
    if !s.contains('&') {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        let end = rest
            .find(';')
            .ok_or_else(|| bad("an entity is not closed with ';'"))?;
        let entity = &rest[..end];
        let c = match entity {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| bad(format!("bad character reference &{e};")))?,
            e if e.starts_with('#') => e[1..]
                .parse::<u32>()
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| bad(format!("bad character reference &{e};")))?,
            e => return Err(bad(format!("unknown entity &{e};"))),
        };
        out.push(c);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `s` with `<`, `>`, `&`, `"` and `'` escaped (for text and attributes).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_attributes_and_text() {
        let doc = br#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <!-- a cell set -->
            <CellSet><Row key="cjE="><Cell column='Y2Y6YQ==' timestamp="5">dg==</Cell></Row>
            <Row key="x"/></CellSet>"#;
        let root = parse(doc).unwrap_or_default();
        assert_eq!(root.name, "CellSet");
        let rows: Vec<&Element> = root.named("Row").collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].attr("key"), Some("cjE="));
        let cell = &rows[0].children[0];
        assert_eq!(cell.attr("timestamp"), Some("5"));
        assert_eq!(cell.text, "dg==");
    }

    #[test]
    fn entities_and_cdata() {
        let root =
            parse(b"<f a=\"&lt;&#65;&#x42;\">x &amp; y<![CDATA[<z>]]></f>").unwrap_or_default();
        assert_eq!(root.attr("a"), Some("<AB"));
        assert_eq!(root.text, "x & y<z>");
        assert_eq!(escape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
    }

    #[test]
    fn malformed_documents_are_refused() {
        for bad in [
            &b"<a><b></a>"[..],
            b"<a",
            b"<a x=1/>",
            b"<!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;</a>",
            b"<a>&bogus;</a>",
            b"<a/><b/>",
            b"\xff\xfe",
            b"",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = "<a>".repeat(100) + &"</a>".repeat(100);
        assert!(parse(deep.as_bytes()).is_err());
    }
}
