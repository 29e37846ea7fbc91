//! What jinja2's builtin filters and Python's `str` methods return for a value set, where the
//! answer needs nothing from the walk: kept apart from [`super`], whose filters and methods
//! look names up, call other filters or judge what they find.

use super::super::values::{
    self, capitalize, map_strs, printf, simple_format, strip, title, Arg, Vals,
};

/// The positional arguments of a call.
pub(super) fn positional(args: &[Arg]) -> Vec<&Arg> {
    args.iter()
        .filter(|a| a.kw.is_none() && a.splat == 0)
        .collect()
}

/// The keyword argument `name` of a call.
pub(super) fn kwarg<'a>(args: &'a [Arg], name: &str) -> Option<&'a Arg> {
    args.iter().find(|a| a.kw.as_deref() == Some(name))
}

/// The `lower`, `upper`, `capitalize`, `title` and `trim` filters (`trim` with the characters
/// to strip, `chars`).
pub(super) fn case_or_trim(name: &str, input: &Vals, chars: Option<&Vals>) -> Vals {
    let t = input.text();
    let chars = chars.map(Vals::text);
    let mut out = match (name, &chars) {
        ("trim", Some(c)) => map_strs(&[&t, c], |s| Some(strip(s[0], Some(s[1]), true, true))),
        _ => map_strs(&[&t], |s| {
            Some(match name {
                "lower" => s[0].to_lowercase(),
                "upper" => s[0].to_uppercase(),
                "capitalize" => capitalize(s[0]),
                "title" => title(s[0]),
                _ => strip(s[0], None, true, true),
            })
        }),
    };
    // The caller's text, cased or trimmed, is still the caller's.
    if t.plain && chars.as_ref().is_none_or(|c| !c.templated()) {
        if !t.templated() {
            out.partial.clear();
        }
        out.plain = true;
    }
    out
}

/// The `replace` filter, its positional arguments `pos` (old, new, count).
pub(super) fn replace_filter(input: &Vals, pos: &[&Arg]) -> Vals {
    let arg = |i: usize| pos.get(i).map(|a| &a.v);
    let (t, old, new) = (
        input.text(),
        arg(0).map(Vals::text).unwrap_or_default(),
        arg(1).map(Vals::text).unwrap_or_default(),
    );
    let count = arg(2).and_then(|c| c.ints.iter().next().copied());
    let mut out = map_strs(&[&t, &old, &new], |s| {
        values::replace(s[0], s[1], s[2], count)
    });
    if t.plain && !new.templated() {
        out.partial.remove(&(String::new(), String::new()));
        out.plain = true;
        if !t.templated() {
            out.partial.clear();
        }
    }
    out
}

/// The `format` filter (printf-style), its positional arguments `pos`.
pub(super) fn format_filter(input: &Vals, pos: &[&Arg], templated_args: bool) -> Vals {
    let t = input.text();
    let texts: Vec<Vals> = pos.iter().map(|a| a.v.text()).collect();
    let mut inputs = vec![&t];
    inputs.extend(texts.iter());
    let out = map_strs(&inputs, |s| printf(s[0], &s[1..]));
    if t.plain && !templated_args && !t.templated() {
        return Vals::plain();
    }
    out
}

/// The `first`, `last`, `random`, `min` and `max` filters: an element of `input`.
pub(super) fn pick_element(name: &str, input: &Vals) -> Vals {
    let mut out = Vals::default();
    if matches!(name, "first" | "last") && input.lists.iter().all(|l| !l.is_empty()) {
        for l in &input.lists {
            let item = if name == "first" {
                &l[0]
            } else {
                &l[l.len() - 1]
            };
            out.join(item);
        }
        let mut rest = input.clone();
        rest.lists.clear();
        out.join(&rest.elements());
    } else {
        out = input.elements();
    }
    out.other = true;
    out
}

/// The `list` filter: a string becomes the list of its characters.
pub(super) fn list_filter(input: &Vals) -> Vals {
    let mut out = input.clone();
    out.strs.clear();
    for s in &input.strs {
        out.join(&Vals::list(
            s.chars().map(|c| Vals::str(&c.to_string())).collect(),
        ));
    }
    if !input.partial.is_empty() {
        out.add_bag(Vals::unknown());
    }
    out
}

/// The `reverse` filter.
pub(super) fn reverse_filter(input: &Vals) -> Vals {
    let mut out = Vals {
        plain: input.plain,
        ..Vals::default()
    };
    for s in &input.strs {
        out.add_str(s.chars().rev().collect());
    }
    for l in &input.lists {
        out.join(&Vals::list(l.iter().rev().cloned().collect()));
    }
    for (p, s) in &input.partial {
        out.add_partial(s.chars().rev().collect(), p.chars().rev().collect());
    }
    if !input.maps.is_empty() || input.bag.is_some() {
        out.add_bag(input.elements());
    }
    out
}

/// The `length`, `count` and `wordcount` filters.
pub(super) fn length_filter(input: &Vals) -> Vals {
    let mut out = Vals::default();
    for s in &input.strs {
        out.ints.insert(s.chars().count() as i128);
    }
    for l in &input.lists {
        out.ints.insert(l.len() as i128);
    }
    out.plain =
        input.plain || input.bag.is_some() || !input.partial.is_empty() || !input.maps.is_empty();
    out
}

/// The `int` filter.
pub(super) fn int_filter(input: &Vals) -> Vals {
    let mut out = Vals::default();
    out.ints.extend(input.ints.iter().copied());
    for s in &input.strs {
        out.ints.insert(s.trim().parse::<i128>().unwrap_or(0));
    }
    out.plain = input.plain || !input.partial.is_empty();
    out.other = input.other;
    out
}

/// The `abs` filter.
pub(super) fn abs_filter(input: &Vals) -> Vals {
    Vals {
        ints: input.ints.iter().filter_map(|i| i.checked_abs()).collect(),
        plain: input.plain,
        other: input.other,
        ..Vals::default()
    }
}

/// The filters that reorder, pick among or group a sequence's elements (`sort`, `unique`,
/// `select`, `batch`, `groupby`, ..., and `dictsort`/`items` of a templated mapping): a bag of
/// the elements when the template wrote any.
pub(super) fn sequence_filter(name: &str, input: &Vals) -> Vals {
    let mut out = Vals::default();
    let mut el = input.elements();
    if matches!(name, "dictsort" | "items") {
        el = Vals::default();
        for m in &input.maps {
            for (k, v) in m {
                el.join(&Vals::list(vec![k.clone(), v.clone()]));
            }
        }
        // `do_items`/`do_dictsort` take a mapping and raise on anything else.
        el.plain = input.plain;
    }
    if input.templated() {
        out.add_bag(el);
    }
    out.plain = input.plain;
    out
}

/// What a `str` method returns for the strings written in the template, `s`; none for a
/// method this reader does not follow.
pub(super) fn str_method(name: &str, s: &Vals, args: &[Arg]) -> Option<Vals> {
    let pos = positional(args);
    let texts: Vec<Vals> = pos.iter().map(|a| a.v.text()).collect();
    let t = |i: usize| texts.get(i).cloned().unwrap_or_default();
    Some(match name {
        "lower" | "casefold" => map_strs(&[s], |x| Some(x[0].to_lowercase())),
        "upper" => map_strs(&[s], |x| Some(x[0].to_uppercase())),
        "title" => map_strs(&[s], |x| Some(title(x[0]))),
        "capitalize" => map_strs(&[s], |x| Some(capitalize(x[0]))),
        "swapcase" => map_strs(&[s], |x| {
            Some(
                x[0].chars()
                    .flat_map(|c| {
                        if c.is_uppercase() {
                            c.to_lowercase().collect::<Vec<_>>()
                        } else {
                            c.to_uppercase().collect()
                        }
                    })
                    .collect(),
            )
        }),
        "strip" | "lstrip" | "rstrip" => {
            let (l, r) = (name != "rstrip", name != "lstrip");
            match pos.first() {
                Some(_) => map_strs(&[s, &t(0)], |x| Some(strip(x[0], Some(x[1]), l, r))),
                None => map_strs(&[s], |x| Some(strip(x[0], None, l, r))),
            }
        }
        "replace" => {
            let count = pos.get(2).and_then(|a| a.v.ints.iter().next().copied());
            map_strs(&[s, &t(0), &t(1)], |x| {
                values::replace(x[0], x[1], x[2], count)
            })
        }
        "removeprefix" => map_strs(&[s, &t(0)], |x| {
            Some(x[0].strip_prefix(x[1]).unwrap_or(x[0]).to_owned())
        }),
        "removesuffix" => map_strs(&[s, &t(0)], |x| {
            Some(x[0].strip_suffix(x[1]).unwrap_or(x[0]).to_owned())
        }),
        "format" if args.iter().all(|a| a.kw.is_none() && a.splat == 0) => {
            let mut inputs = vec![s];
            inputs.extend(texts.iter());
            map_strs(&inputs, |x| simple_format(x[0], &x[1..]))
        }
        "join" => str_join(s, &pos.first().map(|a| a.v.clone()).unwrap_or_default()),
        "split" | "rsplit" | "splitlines" | "partition" | "rpartition" => str_split(s, &t(0)),
        "format" | "format_map" | "center" | "ljust" | "rjust" | "zfill" | "expandtabs"
        | "encode" | "translate" => Vals::unknown(),
        _ => return None,
    })
}

/// `sep.join(seq)` for the separators written in the template, `sep`.
fn str_join(sep: &Vals, seq: &Vals) -> Vals {
    let mut o = Vals::default();
    for l in &seq.lists {
        let mut acc = Vals::str("");
        for (i, item) in l.iter().enumerate() {
            if i > 0 {
                acc = values::concat(&acc, sep);
            }
            acc = values::concat(&acc, &item.text());
        }
        o.join(&acc);
    }
    if seq.plain
        || !seq.partial.is_empty()
        || seq.bag.is_some()
        || !seq.strs.is_empty()
        || !seq.maps.is_empty()
    {
        o.join(&Vals::unknown());
    }
    o
}

/// `s.split(sep)` and its kin: a bag of the pieces (and of the whole string).
fn str_split(s: &Vals, sep: &Vals) -> Vals {
    let mut o = Vals::default();
    for x in &s.strs {
        let pieces: Vec<Vals> = if sep.strs.is_empty() {
            x.split_whitespace().map(Vals::str).collect()
        } else {
            sep.strs
                .iter()
                .filter(|p| !p.is_empty())
                .flat_map(|p| x.split(p.as_str()).map(Vals::str).collect::<Vec<_>>())
                .collect()
        };
        o.add_bag(pieces.into_iter().fold(Vals::default(), |a, b| a.union(&b)));
        o.add_bag(Vals::str(x));
    }
    if !s.partial.is_empty() || sep.plain || !sep.partial.is_empty() {
        o.add_bag(Vals::unknown());
    }
    o
}

/// What a method of the dicts, lists and cyclers written in the template returns, joined
/// into `out`.
pub(super) fn container_method(base: &Vals, name: &str, pos: &[&Arg], out: &mut Vals) {
    match name {
        "get" | "pop" | "setdefault" => {
            let key = pos
                .first()
                .map(|a| a.v.clone())
                .unwrap_or_else(Vals::unknown);
            out.join(&base.item(&key));
            if let Some(dflt) = pos.get(1) {
                out.join(&dflt.v);
            }
            if name == "pop" && pos.is_empty() {
                out.join(&base.elements());
            }
        }
        "values" | "keys" | "items" => {
            let mut el = Vals::default();
            for m in &base.maps {
                for (k, v) in m {
                    el.join(&match name {
                        "values" => v.clone(),
                        "keys" => k.clone(),
                        _ => Vals::list(vec![k.clone(), v.clone()]),
                    });
                }
            }
            if let Some(b) = &base.bag {
                el.join(b);
            }
            out.add_bag(el);
        }
        "next" | "current" | "copy" => {
            if name == "copy" {
                let mut c = base.clone();
                c.strs.clear();
                c.partial.clear();
                out.join(&c);
            } else {
                out.join(&base.elements());
            }
        }
        _ => out.other = true,
    }
}
