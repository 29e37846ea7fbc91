//! What a DOCTYPE declares, read as text and never processed: its external DTD, and the
//! entities of its internal subset (internal or external, general or parameter), so that the
//! finding a DOCTYPE raises says what a reader that processes DTDs would fetch or expand.
//!
//! No model format socair reads uses a DTD: OpenVINO writes none (`ov::pass::Serialize`), PMML
//! 4.x is defined by an XML Schema (pmml-4-4.xsd). The XML parsers their loaders use differ on
//! it: pugixml (OpenVINO) skips the DOCTYPE and expands no entity, keeping `&name;` as text;
//! libxml2 (lxml: nyoka's PMML reader, `PMML44Super.parsexml_`), expat (Python's
//! `xml.etree`) and Java's JAXP parsers (JPMML's SAX/JAXB) expand internal entities, and
//! libxml2 and JAXP resolve external ones (a file or URL read: XXE) unless configured not to.

/// One `<!ENTITY ...>` of the internal subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// Its name.
    pub name: String,
    /// A parameter entity (`<!ENTITY % name ...>`), used inside the DTD itself.
    pub parameter: bool,
    /// The system identifier (file or URL) of an external entity, none for an internal one.
    pub system: Option<String>,
}

/// What a DOCTYPE declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Doctype {
    /// The root element it names.
    pub root: String,
    /// The system identifier of its external DTD subset (`SYSTEM "x"` or `PUBLIC "p" "x"`).
    pub external: Option<String>,
    /// The entities its internal subset declares (the first [`MAX_ENTITIES`]).
    pub entities: Vec<Entity>,
    /// Entities declared past those.
    pub more_entities: u64,
    /// Other declarations of the internal subset (`ELEMENT`, `ATTLIST`, `NOTATION`).
    pub other_declarations: u64,
}

/// Entities listed by name.
pub const MAX_ENTITIES: usize = 32;

/// Names and literals are cut to this many characters in what is reported.
const MAX_SHOWN: usize = 200;

fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(MAX_SHOWN).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// A cursor over the DOCTYPE's text.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    /// A name-like token: up to whitespace, a quote, `[`, `>` or the end.
    fn token(&mut self) -> &'a str {
        self.skip_space();
        let rest = self.rest();
        let len = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '[' | '>' | ']'))
            .unwrap_or(rest.len());
        self.at += len;
        &rest[..len]
    }

    /// A quoted literal, or none when the next thing is not one.
    fn literal(&mut self) -> Option<&'a str> {
        self.skip_space();
        let rest = self.rest();
        let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
        let end = rest[1..].find(quote)? + 1;
        self.at += end + 1;
        Some(&rest[1..end])
    }

    /// An external identifier: `SYSTEM "sys"` or `PUBLIC "pub" "sys"`, giving the system part.
    fn external_id(&mut self) -> Option<String> {
        let save = self.at;
        match self.token() {
            "SYSTEM" => self.literal().map(shown),
            "PUBLIC" => {
                let public = self.literal();
                let system = self.literal();
                system.or(public).map(shown)
            }
            _ => {
                self.at = save;
                None
            }
        }
    }
}

/// Reads the text of a DOCTYPE (what follows `<!DOCTYPE`, without the closing `>`).
pub fn parse(text: &str) -> Doctype {
    let mut c = Cursor { text, at: 0 };
    let mut d = Doctype {
        root: shown(c.token()),
        ..Doctype::default()
    };
    d.external = c.external_id();
    c.skip_space();
    if let Some(subset) = c.rest().strip_prefix('[') {
        internal_subset(subset, &mut d);
    }
    d
}

/// Reads the declarations of an internal subset, skipping comments, processing instructions
/// and quoted literals (which may hold `<!` themselves).
fn internal_subset(subset: &str, d: &mut Doctype) {
    let mut c = Cursor {
        text: subset,
        at: 0,
    };
    loop {
        let rest = c.rest();
        let Some(next) = rest.find(['<', ']']) else {
            return;
        };
        let from = &rest[next..];
        if from.starts_with(']') {
            return;
        }
        if let Some(after) = from.strip_prefix("<!--") {
            match after.find("-->") {
                Some(end) => c.at += next + 4 + end + 3,
                None => return,
            }
            continue;
        }
        if from.starts_with("<?") {
            match from.find("?>") {
                Some(end) => c.at += next + end + 2,
                None => return,
            }
            continue;
        }
        c.at += next + 1;
        if from.starts_with("<!ENTITY") {
            c.at += "!ENTITY".len();
            entity(&mut c, d);
        } else if from.starts_with("<!") {
            d.other_declarations += 1;
        }
        // Past the declaration's end, its literals skipped.
        loop {
            c.skip_space();
            if c.literal().is_some() {
                continue;
            }
            let rest = c.rest();
            match rest.find(['>', '"', '\'']) {
                Some(i) if rest[i..].starts_with('>') => {
                    c.at += i + 1;
                    break;
                }
                Some(i) if i > 0 => c.at += i,
                // A quote whose literal never ends (or no `>`): nothing more to read.
                _ => return,
            }
        }
    }
}

/// Reads one entity declaration after `<!ENTITY`.
fn entity(c: &mut Cursor<'_>, d: &mut Doctype) {
    let mut name = c.token();
    let parameter = name == "%";
    if parameter {
        name = c.token();
    }
    let system = c.external_id();
    if system.is_none() {
        let _ = c.literal();
    }
    if d.entities.len() < MAX_ENTITIES {
        d.entities.push(Entity {
            name: shown(name),
            parameter,
            system,
        });
    } else {
        d.more_entities += 1;
    }
}

/// Each thing a DOCTYPE declares, in words, for findings: what a DTD-processing reader does
/// with it. `loader` says what the format's own loader does with a DOCTYPE.
pub fn describe(d: &Doctype, loader: &str) -> Vec<String> {
    let mut out = vec![format!(
        "a DOCTYPE (root {:?}) in a model file: {loader}; XML libraries that process DTDs (libxml2 and lxml, expat and Python's xml.etree, Java's JAXP) read what it declares",
        d.root
    )];
    if let Some(system) = &d.external {
        out.push(format!(
            "its external DTD {system:?} is fetched by readers that load DTDs: a file or network read when the model is parsed"
        ));
    }
    for e in &d.entities {
        let kind = if e.parameter {
            "parameter entity"
        } else {
            "entity"
        };
        out.push(match &e.system {
            Some(system) => format!(
                "declares the external {kind} {:?} as the content of {system:?}: a reader that resolves external entities reads that file or URL (XXE)",
                e.name
            ),
            None => format!(
                "declares the {kind} {:?}: readers that expand entities read other text than a loader that expands none, and entities nested in entities expand exponentially (a billion laughs)",
                e.name
            ),
        });
    }
    if d.more_entities > 0 {
        out.push(format!("and {} more entity declarations", d.more_entities));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_dtds_and_entities_are_read_not_processed() {
        let d = parse("net [\n<!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n<!ENTITY a \"aa>a\">\n<!-- <!ENTITY hidden \"x\"> -->\n<!ENTITY % p PUBLIC \"-//x\" \"http://e/x.dtd\">\n<!ELEMENT net ANY>\n]");
        assert_eq!(d.root, "net");
        assert_eq!(d.external, None);
        assert_eq!(
            d.entities,
            vec![
                Entity {
                    name: "xxe".into(),
                    parameter: false,
                    system: Some("file:///etc/passwd".into())
                },
                Entity {
                    name: "a".into(),
                    parameter: false,
                    system: None
                },
                Entity {
                    name: "p".into(),
                    parameter: true,
                    system: Some("http://e/x.dtd".into())
                },
            ]
        );
        assert_eq!(d.other_declarations, 1);
        let words = describe(&d, "the loader skips it");
        assert_eq!(words.len(), 4);
        assert!(words[1].contains("XXE"));
        let d = parse("PMML SYSTEM \"pmml20.dtd\"");
        assert_eq!(
            (d.root.as_str(), d.external.as_deref()),
            ("PMML", Some("pmml20.dtd"))
        );
        let d = parse("x PUBLIC \"-//W3C//DTD\" \"http://w/x.dtd\" [ ]");
        assert_eq!(d.external.as_deref(), Some("http://w/x.dtd"));
        // Cut or odd subsets end without panicking.
        for odd in [
            "",
            "[",
            "a [<!ENTITY",
            "a [<!ENTITY % ",
            "a [<!ENTITY x \"",
            "a [<!-- ",
            "a [<? ",
        ] {
            let _ = parse(odd);
        }
        let many: String = (0..40).map(|i| format!("<!ENTITY e{i} \"v\">")).collect();
        let d = parse(&format!("r [{many}]"));
        assert_eq!((d.entities.len(), d.more_entities), (MAX_ENTITIES, 8));
    }
}
