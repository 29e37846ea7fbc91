//! What a template expression can be, as a bounded set: the strings it can spell (built from
//! the template's own literals by `~`, `+`, `*`, `%`, slicing, string filters and methods),
//! strings it builds but socair cannot spell (a known prefix and suffix around an unknown
//! middle), the lists and dicts written in the template (item by item, so `[...]|join`,
//! `[...]|first` and `{...}.k` stay exact), the caller's data (`messages`, `tools`: not the
//! template's to choose), and anything else (numbers' other kinds, booleans, objects).
//!
//! Every set is bounded ([`MAX_STRS`], [`MAX_PARTIAL`], [`MAX_LISTS`], [`MAX_ITEMS`], nesting
//! [`MAX_VAL_DEPTH`], string length [`MAX_STR`]); past a bound a value widens to a partial
//! string that keeps what matters for names (whether it starts with `__`), so the sets only
//! grow and the binding passes reach a fixed point. Widening never turns a name into a FAIL
//! it could not be: it only loses exactness (FAIL becomes LEAD, never PASS).

use std::collections::BTreeSet;

/// Strings one value can be.
pub(super) const MAX_STRS: usize = 64;
/// Partial strings one value can be.
pub(super) const MAX_PARTIAL: usize = 16;
/// Template-written lists (and dicts) one value can be.
pub(super) const MAX_LISTS: usize = 8;
/// Items of one template-written list or dict followed one by one.
pub(super) const MAX_ITEMS: usize = 64;
/// Lists within lists followed.
pub(super) const MAX_VAL_DEPTH: usize = 3;
/// Longest string kept whole; a longer one keeps its first and last [`AFFIX`] characters.
pub(super) const MAX_STR: usize = 256;
const AFFIX: usize = 64;
/// Combinations one operation enumerates (a cartesian product of its operands' strings);
/// past it the result keeps each left operand as a prefix and nothing more.
const MAX_PRODUCT: usize = 1_024;
/// Bytes of strings the operations of one template may build in all; past it every
/// operation gives the coarse result (so a template built to multiply sets costs little).
pub(super) const MAX_WORK: usize = 8 << 20;

thread_local! {
    static WORK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Starts the work count of one template.
pub(super) fn reset_work() {
    WORK.with(|w| w.set(0));
}

/// Spends `n` bytes of the work budget; false once it is spent.
fn spend(n: usize) -> bool {
    WORK.with(|w| {
        let now = w.get().saturating_add(n);
        w.set(now);
        now <= MAX_WORK
    })
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Vals {
    /// Strings, spelled out.
    pub(super) strs: BTreeSet<String>,
    /// Integers.
    pub(super) ints: BTreeSet<i128>,
    /// Strings built in the template, not spelled out: `(prefix, suffix)` around an unknown
    /// middle; `("", "")` is any string (or any value the walk cannot follow).
    pub(super) partial: BTreeSet<(String, String)>,
    /// Lists and tuples written in the template, each item's values in order.
    pub(super) lists: Vec<Vec<Vals>>,
    /// Dicts written in the template (`{...}`, `dict(...)`, `namespace(...)`): key, value.
    pub(super) maps: Vec<Vec<(Vals, Vals)>>,
    /// A sequence of unknown length and order whose items are among these (a filtered,
    /// sorted or sliced list, a dict's `items()`).
    pub(super) bag: Option<Box<Vals>>,
    /// The caller's data, or what the template derives from it without its own strings.
    pub(super) plain: bool,
    /// A boolean, `none`, a float, an object: names nothing.
    pub(super) other: bool,
}

fn truncate_front(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn truncate_back(s: &str, n: usize) -> String {
    let count = s.chars().count();
    s.chars().skip(count.saturating_sub(n)).collect()
}

impl Vals {
    pub(super) fn str(s: &str) -> Self {
        let mut v = Vals::default();
        v.add_str(s.to_owned());
        v
    }

    pub(super) fn int(i: i128) -> Self {
        let mut v = Vals::default();
        v.ints.insert(i);
        v
    }

    pub(super) fn unknown() -> Self {
        let mut v = Vals::default();
        v.partial.insert((String::new(), String::new()));
        v
    }

    pub(super) fn plain() -> Self {
        Vals {
            plain: true,
            ..Vals::default()
        }
    }

    pub(super) fn other() -> Self {
        Vals {
            other: true,
            ..Vals::default()
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        *self == Vals::default()
    }

    /// Whether the template's own strings or containers are in it (not only caller data,
    /// numbers and objects).
    pub(super) fn templated(&self) -> bool {
        !self.strs.is_empty()
            || !self.partial.is_empty()
            || !self.lists.is_empty()
            || !self.maps.is_empty()
            || self.bag.is_some()
    }

    pub(super) fn add_str(&mut self, s: String) {
        if s.len() > MAX_STR {
            self.add_partial(truncate_front(&s, AFFIX), truncate_back(&s, AFFIX));
        } else if self.strs.len() < MAX_STRS || self.strs.contains(&s) {
            self.strs.insert(s);
        } else {
            // Full: keep what a name needs (its first two characters).
            self.add_partial(truncate_front(&s, 2), String::new());
        }
    }

    pub(super) fn add_partial(&mut self, prefix: String, suffix: String) {
        let prefix = truncate_front(&prefix, AFFIX);
        let suffix = truncate_back(&suffix, AFFIX);
        if self.partial.len() < MAX_PARTIAL {
            self.partial.insert((prefix, suffix));
            return;
        }
        if self.partial.contains(&(prefix.clone(), suffix.clone())) {
            return;
        }
        // Full: any string, and whether it may start with a dunder's `__`.
        if prefix.starts_with("__") {
            self.partial.insert(("__".into(), String::new()));
        } else if prefix.starts_with('_') {
            self.partial.insert(("_".into(), String::new()));
        }
        self.partial.insert((String::new(), String::new()));
    }

    fn add_list(&mut self, items: Vec<Vals>) {
        if self.lists.contains(&items) {
            return;
        }
        if self.lists.len() < MAX_LISTS {
            self.lists.push(items);
        } else {
            let mut bag = Vals::default();
            for i in &items {
                bag.join(i);
            }
            self.add_bag(bag);
        }
    }

    fn add_map(&mut self, pairs: Vec<(Vals, Vals)>) {
        if self.maps.contains(&pairs) {
            return;
        }
        if self.maps.len() < MAX_LISTS {
            self.maps.push(pairs);
        } else {
            let mut bag = Vals::default();
            for (k, v) in &pairs {
                bag.join(k);
                bag.join(v);
            }
            self.add_bag(bag);
        }
    }

    pub(super) fn add_bag(&mut self, items: Vals) {
        let items = items.shallow(MAX_VAL_DEPTH);
        match &mut self.bag {
            Some(b) => b.join(&items),
            None => self.bag = Some(Box::new(items)),
        }
    }

    /// `self ∪= other`, within the bounds.
    pub(super) fn join(&mut self, other: &Vals) {
        for s in &other.strs {
            self.add_str(s.clone());
        }
        for i in &other.ints {
            if self.ints.len() < MAX_STRS {
                self.ints.insert(*i);
            } else {
                self.plain = true;
            }
        }
        for (p, s) in &other.partial {
            self.add_partial(p.clone(), s.clone());
        }
        for l in &other.lists {
            self.add_list(l.clone());
        }
        for m in &other.maps {
            self.add_map(m.clone());
        }
        if let Some(b) = &other.bag {
            self.add_bag((**b).clone());
        }
        self.plain |= other.plain;
        self.other |= other.other;
    }

    pub(super) fn union(mut self, other: &Vals) -> Vals {
        self.join(other);
        self
    }

    fn depth(&self) -> usize {
        let lists = self.lists.iter().flatten().map(Vals::depth);
        let maps = self
            .maps
            .iter()
            .flatten()
            .flat_map(|(k, v)| [k.depth(), v.depth()]);
        let bag = self.bag.iter().map(|b| b.depth());
        1 + lists.chain(maps).chain(bag).max().unwrap_or(0)
    }

    /// Every scalar in it, containers opened all the way down (bounded by the sets' caps).
    fn leaves(&self) -> Vals {
        let mut out = Vals {
            strs: self.strs.clone(),
            ints: self.ints.clone(),
            partial: self.partial.clone(),
            plain: self.plain,
            other: self.other,
            ..Vals::default()
        };
        self.join_contained_leaves(&mut out);
        out
    }

    /// Joins into `out` every scalar inside its containers (lists, maps' keys and values, the
    /// bag), opened all the way down, in that order; its own scalars left out.
    fn join_contained_leaves(&self, out: &mut Vals) {
        for l in &self.lists {
            for x in l {
                out.join(&x.leaves());
            }
        }
        for m in &self.maps {
            for (k, x) in m {
                out.join(&k.leaves());
                out.join(&x.leaves());
            }
        }
        if let Some(b) = &self.bag {
            out.join(&b.leaves());
        }
    }

    /// Containers nested deeper than `depth` (at least 2) become one sequence of every
    /// scalar inside them: no string is lost, no string is invented.
    fn shallow(self, depth: usize) -> Vals {
        if self.depth() <= depth.max(2) {
            return self;
        }
        let mut inner = Vals::default();
        self.join_contained_leaves(&mut inner);
        Vals {
            strs: self.strs,
            ints: self.ints,
            partial: self.partial,
            plain: self.plain,
            other: self.other,
            bag: Some(Box::new(inner)),
            ..Vals::default()
        }
    }

    /// A list written in the template.
    pub(super) fn list(items: Vec<Vals>) -> Vals {
        let mut v = Vals::default();
        if items.len() > MAX_ITEMS {
            let mut bag = Vals::default();
            for i in &items {
                bag.join(i);
            }
            v.add_bag(bag);
        } else {
            let items = items
                .into_iter()
                .map(|i| i.shallow(MAX_VAL_DEPTH - 1))
                .collect();
            v.add_list(items);
        }
        v
    }

    /// A dict written in the template.
    pub(super) fn map(pairs: Vec<(Vals, Vals)>) -> Vals {
        let mut v = Vals::default();
        if pairs.len() > MAX_ITEMS {
            let mut bag = Vals::default();
            for (k, x) in &pairs {
                bag.join(k);
                bag.join(x);
            }
            v.add_bag(bag);
        } else {
            let pairs = pairs
                .into_iter()
                .map(|(k, x)| (k.shallow(MAX_VAL_DEPTH - 1), x.shallow(MAX_VAL_DEPTH - 1)))
                .collect();
            v.add_map(pairs);
        }
        v
    }

    /// What iterating it yields: a list's items, a dict's keys, a string's characters.
    pub(super) fn elements(&self) -> Vals {
        let mut out = Vals::default();
        for l in &self.lists {
            for i in l {
                out.join(i);
            }
        }
        for m in &self.maps {
            for (k, _) in m {
                out.join(k);
            }
        }
        if let Some(b) = &self.bag {
            out.join(b);
        }
        for s in &self.strs {
            for c in s.chars() {
                out.add_str(c.to_string());
            }
        }
        if !self.partial.is_empty() {
            out.join(&Vals::unknown());
        }
        out.plain |= self.plain;
        out
    }

    /// A dict's values under `key` (every value where the key cannot be told apart), a
    /// list's item at an integer key.
    pub(super) fn item(&self, key: &Vals) -> Vals {
        let mut out = Vals::default();
        for m in &self.maps {
            for (k, v) in m {
                let may = k.strs.iter().any(|s| key.strs.contains(s))
                    || k.ints.iter().any(|i| key.ints.contains(i))
                    || !k.partial.is_empty()
                    || !key.partial.is_empty()
                    || key.plain
                    || k.plain;
                if may {
                    out.join(v);
                }
            }
        }
        let exact_ints = !key.plain && key.partial.is_empty();
        for l in &self.lists {
            if exact_ints && !key.ints.is_empty() {
                let n = l.len() as i128;
                for &i in &key.ints {
                    let at = if i < 0 { i + n } else { i };
                    if let Some(x) = usize::try_from(at).ok().and_then(|at| l.get(at)) {
                        out.join(x);
                    }
                }
            } else if !key.ints.is_empty() || key.plain || !key.partial.is_empty() {
                for x in l {
                    out.join(x);
                }
            }
        }
        if let Some(b) = &self.bag {
            out.join(b);
        }
        for s in &self.strs {
            if exact_ints {
                let chars: Vec<char> = s.chars().collect();
                let n = chars.len() as i128;
                for &i in &key.ints {
                    let at = if i < 0 { i + n } else { i };
                    if let Some(c) = usize::try_from(at).ok().and_then(|at| chars.get(at)) {
                        out.add_str(c.to_string());
                    }
                }
            } else {
                for c in s.chars() {
                    out.add_str(c.to_string());
                }
            }
        }
        if !self.partial.is_empty() {
            out.join(&Vals::unknown());
        }
        out.plain |= self.plain;
        out
    }

    /// `str()` of it: strings, integers in decimal; anything else unknown (the caller's
    /// data stays the caller's).
    pub(super) fn text(&self) -> Vals {
        let mut out = Vals {
            strs: self.strs.clone(),
            partial: self.partial.clone(),
            plain: self.plain,
            ..Vals::default()
        };
        for i in &self.ints {
            out.add_str(i.to_string());
        }
        if self.other || !self.lists.is_empty() || !self.maps.is_empty() || self.bag.is_some() {
            out.add_partial(String::new(), String::new());
        }
        out
    }

    /// The text as spelled strings and partials only: the caller's data is unknown text.
    fn text_parts(&self) -> (Vec<String>, Vec<(String, String)>) {
        let t = self.text();
        let mut partial: Vec<(String, String)> = t.partial.into_iter().collect();
        if t.plain {
            partial.push((String::new(), String::new()));
        }
        (t.strs.into_iter().collect(), partial)
    }
}

/// `a ~ b` (and `a + b` of two strings): every spelled pair joined, partials keeping the
/// prefix of the left and the suffix of the right.
pub(super) fn concat(a: &Vals, b: &Vals) -> Vals {
    let (ls, lp) = a.text_parts();
    let (rs, rp) = b.text_parts();
    let mut out = Vals::default();
    let cost: usize = ls
        .iter()
        .map(String::len)
        .sum::<usize>()
        .saturating_mul(rs.len())
        + rs.iter()
            .map(String::len)
            .sum::<usize>()
            .saturating_mul(ls.len());
    if ls.len().saturating_mul(rs.len()) <= MAX_PRODUCT && spend(cost) {
        for l in &ls {
            for r in &rs {
                out.add_str(format!("{l}{r}"));
            }
        }
    } else if !rs.is_empty() {
        // Too many to spell: each left string followed by anything.
        for l in &ls {
            out.add_partial(l.clone(), String::new());
        }
    }
    // Once the partial set is full only the first two characters matter (`add_partial`
    // keeps whether a prefix starts with `__`): no need to build the rest.
    for l in &ls {
        for (p, s) in &rp {
            if out.partial.len() >= MAX_PARTIAL {
                out.add_partial(head2(l, p), String::new());
            } else {
                out.add_partial(format!("{l}{p}"), s.clone());
            }
        }
    }
    for (p, s) in &lp {
        if out.partial.len() >= MAX_PARTIAL {
            out.add_partial(head2(p, ""), String::new());
            continue;
        }
        for r in &rs {
            out.add_partial(p.clone(), format!("{s}{r}"));
        }
        for (_, s2) in &rp {
            out.add_partial(p.clone(), s2.clone());
        }
    }
    out
}

/// The first two characters of `a` followed by `b`.
fn head2(a: &str, b: &str) -> String {
    a.chars().chain(b.chars()).take(2).collect()
}

/// Every spelled combination of `inputs`' strings through `f`; any input that is not
/// spelled out makes the result unknown as well.
pub(super) fn map_strs(inputs: &[&Vals], f: impl Fn(&[&str]) -> Option<String>) -> Vals {
    let mut out = Vals::default();
    if inputs.iter().any(|v| !v.partial.is_empty() || v.plain) {
        out.add_partial(String::new(), String::new());
    }
    let lists: Vec<Vec<&str>> = inputs
        .iter()
        .map(|v| v.strs.iter().map(String::as_str).collect())
        .collect();
    if lists.iter().any(Vec::is_empty) {
        return out;
    }
    let combos = lists.iter().try_fold(1usize, |a, l| a.checked_mul(l.len()));
    let bytes: usize = lists.iter().flatten().map(|s| s.len()).sum();
    if combos.is_none_or(|c| c > MAX_PRODUCT)
        || !spend(bytes.saturating_mul(combos.unwrap_or(usize::MAX).min(MAX_PRODUCT)))
    {
        out.add_partial(String::new(), String::new());
        return out;
    }
    let mut index = vec![0usize; lists.len()];
    loop {
        let args: Vec<&str> = index.iter().zip(&lists).map(|(&i, l)| l[i]).collect();
        match f(&args) {
            Some(s) => out.add_str(s),
            None => out.add_partial(String::new(), String::new()),
        }
        // The next combination.
        let mut k = 0;
        loop {
            if k == index.len() {
                return out;
            }
            index[k] += 1;
            if index[k] < lists[k].len() {
                break;
            }
            index[k] = 0;
            k += 1;
        }
    }
}

/// Python's `s[start:stop:step]` on characters.
pub(super) fn slice_str(
    s: &str,
    start: Option<i128>,
    stop: Option<i128>,
    step: Option<i128>,
) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    let idx = slice_indices(chars.len(), start, stop, step)?;
    Some(idx.into_iter().map(|i| chars[i]).collect())
}

/// The indices Python's `slice(start, stop, step).indices(len)` walks.
pub(super) fn slice_indices(
    len: usize,
    start: Option<i128>,
    stop: Option<i128>,
    step: Option<i128>,
) -> Option<Vec<usize>> {
    let n = len as i128;
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let clamp = |v: i128, lo: i128, hi: i128| v.max(lo).min(hi);
    let norm = |v: i128, lo: i128, hi: i128| clamp(if v < 0 { v + n } else { v }, lo, hi);
    let mut out = Vec::new();
    if step > 0 {
        let a = start.map_or(0, |v| norm(v, 0, n));
        let b = stop.map_or(n, |v| norm(v, 0, n));
        let mut i = a;
        while i < b {
            out.push(usize::try_from(i).ok()?);
            i += step;
        }
    } else {
        let a = start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let b = stop.map_or(-1, |v| norm(v, -1, n - 1));
        let mut i = a;
        while i > b {
            out.push(usize::try_from(i).ok()?);
            i += step;
        }
    }
    Some(out)
}

/// Python's `fmt % args` for the conversions a name could be built with (`%s`, `%c`, `%d`,
/// `%i`, `%%`; flags, widths and mapping keys make it unknown); `None` where it cannot tell.
/// An argument spelled as digits is taken as the integer it spells (`%c` of 95 is `_`).
pub(super) fn printf(fmt: &str, args: &[&str]) -> Option<String> {
    let mut out = String::new();
    let mut chars = fmt.chars();
    let mut next = 0usize;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let conv = chars.next()?;
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = *args.get(next)?;
        next += 1;
        match conv {
            's' => out.push_str(arg),
            'c' => match arg.parse::<u32>() {
                Ok(i) => out.push(char::from_u32(i)?),
                Err(_) => {
                    let mut it = arg.chars();
                    let ch = it.next()?;
                    if it.next().is_some() {
                        return None;
                    }
                    out.push(ch);
                }
            },
            'd' | 'i' => out.push_str(&arg.parse::<i128>().ok()?.to_string()),
            _ => return None,
        }
    }
    (next == args.len()).then_some(out)
}

/// Python's `str.capitalize` (ASCII and simple case mappings).
pub(super) fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// jinja2 3.1.6 `filters.py` `do_title`: each piece after `[-\s({\[<]+` capitalized by
/// its first character, the rest lowercased.
pub(super) fn title(s: &str) -> String {
    let mut out = String::new();
    let mut start = true;
    for c in s.chars() {
        let sep = c == '-' || c.is_whitespace() || "({[<".contains(c);
        if sep {
            out.push(c);
            start = true;
        } else if start {
            out.extend(c.to_uppercase());
            start = false;
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Python's `str.strip(chars)` family.
pub(super) fn strip(s: &str, chars: Option<&str>, left: bool, right: bool) -> String {
    let f = |c: char| chars.map_or(c.is_whitespace(), |set| set.contains(c));
    let t = if left { s.trim_start_matches(f) } else { s };
    let t = if right { t.trim_end_matches(f) } else { t };
    t.to_owned()
}

/// Python's `str.replace(old, new[, count])`.
pub(super) fn replace(s: &str, old: &str, new: &str, count: Option<i128>) -> Option<String> {
    let out = match count {
        Some(n) if n >= 0 => s.replacen(old, new, usize::try_from(n).ok()?),
        _ => s.replace(old, new),
    };
    (out.len() <= MAX_STR * 4).then_some(out)
}

/// `str.format` with only automatic or numbered fields and no conversion, attribute, index
/// or spec (`'{}{}'.format(a, b)`); `None` for anything else.
pub(super) fn simple_format(fmt: &str, args: &[&str]) -> Option<String> {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    let mut auto = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                    field.push(d);
                }
                let i = if field.is_empty() {
                    auto += 1;
                    auto - 1
                } else {
                    field.parse::<usize>().ok()?
                };
                out.push_str(args.get(i)?);
            }
            '}' => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

/// An evaluated call argument.
#[derive(Clone, Debug)]
pub(super) struct Arg {
    pub(super) kw: Option<String>,
    /// 0: plain, 1: `*x`, 2: `**x`.
    pub(super) splat: u8,
    pub(super) v: Vals,
    pub(super) at: usize,
}
