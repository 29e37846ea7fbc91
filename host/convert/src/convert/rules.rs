//! The conversion rule sets: `socair-convert/1`, `/2` and `/3`, registered side by side; each
//! conversion runs under one and names it.

use crate::base::rules::{check_requirement, RuleSet};

/// The first conversion rules' id.
pub const RULES_V1: &str = "socair-convert/1";
/// The second conversion rules' id.
pub const RULES_V2: &str = "socair-convert/2";
/// The third conversion rules' id.
pub const RULES_V3: &str = "socair-convert/3";

inventory::submit! {
    RuleSet {
        name: "socair-convert",
        version: "1",
        id: RULES_V1,
        summary: "torch zip checkpoint to safetensors without unpickling: contiguous tensors only, exact aliases once, byte-stable",
    }
}

inventory::submit! {
    RuleSet {
        name: "socair-convert",
        version: "2",
        id: RULES_V2,
        summary: "socair-convert/1, plus torch-legacy inputs and non-contiguous tensors gathered into row-major order (same bytes as /1 wherever /1 converts)",
    }
}

inventory::submit! {
    RuleSet {
        name: "socair-convert",
        version: "3",
        id: RULES_V3,
        summary: "socair-convert/2, except that an exact-alias group keeps the name transformers keeps (the source of its tied weights, such as the input embedding of a tied lm_head); /2's bytes wherever no group changes its kept name",
    }
}

/// A version of the conversion rules. All are built in; each conversion runs under one and
/// names it. `/2` accepts everything `/1` does and writes the same bytes for it; it adds legacy
/// (non-zip) torch inputs and gathers non-contiguous tensors into row-major order. `/3` is `/2`
/// except for the name an exact-alias group keeps ([`crate::convert::tied`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rules {
    /// `socair-convert/1`.
    V1,
    /// `socair-convert/2`.
    V2,
    /// `socair-convert/3`.
    V3,
}

impl Rules {
    /// Every version, oldest first.
    pub const ALL: [Rules; 3] = [Rules::V1, Rules::V2, Rules::V3];

    /// How outputs name it.
    pub fn id(self) -> &'static str {
        match self {
            Rules::V1 => RULES_V1,
            Rules::V2 => RULES_V2,
            Rules::V3 => RULES_V3,
        }
    }

    /// Its version number.
    pub fn version(self) -> u64 {
        match self {
            Rules::V1 => 1,
            Rules::V2 => 2,
            Rules::V3 => 3,
        }
    }

    /// Every version's id as a sentence lists them: `socair-convert/1, …/2 and …/3`.
    pub fn listed() -> String {
        let ids = Rules::ALL.map(Rules::id);
        match ids.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => ids.join(""),
        }
    }

    /// `socair-convert/N` or `N`.
    pub fn parse(text: &str) -> Result<Rules, String> {
        let n = text.strip_prefix("socair-convert/").unwrap_or(text);
        Rules::ALL
            .into_iter()
            .find(|r| r.version().to_string() == n)
            .ok_or_else(|| {
                format!(
                    "--rules {text:?}: this socair implements {}",
                    Rules::listed()
                )
            })
    }

    /// The rules to run: the one asked for (`--rules`), or else the newest; either way the
    /// deployment's pin must accept it (`pins.rules["socair-convert"]`, a semver requirement;
    /// none without a store).
    pub fn select(asked: Option<&str>, pin: Option<&str>) -> Result<Rules, String> {
        let allowed = |r: Rules| check_requirement("socair-convert", pin, &r.version().to_string());
        let pin = pin.unwrap_or("");
        match asked {
            Some(text) => {
                let r = Rules::parse(text)?;
                allowed(r).map_err(|e| {
                    format!(
                        "--rules {}: the store pins socair-convert to {pin} ({e})",
                        r.id()
                    )
                })?;
                Ok(r)
            }
            None => {
                let mut last_refusal = String::new();
                for r in Rules::ALL.into_iter().rev() {
                    match allowed(r) {
                        Ok(()) => return Ok(r),
                        Err(e) => last_refusal = e,
                    }
                }
                Err(format!(
                    "the store pins socair-convert to {pin}, which no built-in version ({}) satisfies: {last_refusal}",
                    Rules::ALL.map(Rules::id).join(", ")
                ))
            }
        }
    }
}
