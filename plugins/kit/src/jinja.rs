//! Chat templates, judged as Jinja wherever they are: a GGUF file's `tokenizer.chat_template`
//! (and `tokenizer.chat_template.<name>`) metadata, the `chat_template` of
//! `tokenizer_config.json` / `processor_config.json` / `chat_template.json`, and the
//! `chat_template.jinja` and `additional_chat_templates/*.jinja` files that transformers 5.x
//! reads (`tokenization_utils_base.py` `PreTrainedTokenizerBase.from_pretrained`,
//! `processing_utils.py` `ProcessorMixin.get_processor_dict`). One rule, used by the gguf
//! plugin and by the companion rules ([`crate::companion`]), so a template gets one verdict
//! wherever it travels.
//!
//! A template is code for the program that renders it. transformers renders with jinja2's
//! `ImmutableSandboxedEnvironment`; llama-cpp-python rendered with a plain
//! `jinja2.Environment` until 0.2.72, and CVE-2024-34359 (GHSA-56xg-wfcc-g829) ran a GGUF's
//! template there: `{{ ''.__class__.__mro__[1].__subclasses__() ... }}` reaches every class
//! of the Python process. The rule therefore says what an unsandboxed jinja2 3.1.6 would let
//! the template reach, and mirrors what jinja2's own sandbox refuses (`jinja2/sandbox.py` at
//! 3.1.6: `SandboxedEnvironment.is_safe_attribute` refuses every attribute starting with `_`,
//! `is_internal_attribute` refuses `mro`, the frame and code attributes of generators,
//! coroutines and async generators, and every attribute of code, frame and traceback
//! objects; `getitem` falls back to `getattr` for a string key, so `x['__class__']` is the
//! same lookup; `format`/`format_map` on strings go through a sandboxed formatter).
//!
//! The template is parsed, not searched: minijinja's parser (`minijinja::machinery::parse`,
//! pinned at 3.1.0) builds the AST, and the walk below reads every attribute name, every
//! subscript whose key is a constant (string literals decoded as jinja2's lexer decodes them,
//! Python's `unicode-escape`, and joined with `~`, `+` and `*` where every operand is
//! constant), the attribute arguments of the filters that look attributes up (`attr`, `map`,
//! `selectattr`, `rejectattr`, `sort`, `groupby`, `sum`, `unique`, `min`, `max`, `join`:
//! jinja2's `make_attrgetter` splits a dotted path and looks each part up), and the fields of
//! a constant string's `.format(...)`. Then:
//!
//! * **FAIL**: a lookup of a dunder name (`__globals__`, `__class__`, `__builtins__`,
//!   `__init__`, `__mro__`, `__subclasses__` ...), of a name-mangled private attribute
//!   (`self._TemplateReference__context`), of a private attribute of jinja2's own runtime
//!   objects (`_environment`, `_func`, `_context` ... of macros, loops, cyclers, joiners,
//!   namespaces, block references), or of `mro` and the generator/frame/code/traceback
//!   attributes (`gi_frame`, `f_globals`, `tb_frame` ...: `(x|map('lower')).gi_frame.f_globals`
//!   reaches a module's globals with no underscore at all);
//! * **LEAD**: a lookup socair cannot name: a subscript whose key is computed
//!   (`x['_' ~ y]`, `x[k]` where `k` was set from a computed string, a loop variable over
//!   computed values, a macro argument), `attr` and the attribute filters with a computed
//!   name, `.format(...)` on a string not written in the template, any other attribute
//!   starting with `_` (the sandbox refuses it on an object; on a dict it reads a key), a
//!   string literal with a `\N{...}` escape; a template minijinja cannot parse (jinja2 may:
//!   nothing in it was checked); a template beyond the bounds below;
//! * otherwise the template is data: ordinary Jinja that reads messages and writes text.
//!
//! Calls of jinja2's globals (`lipsum`, `cycler`, `joiner`, `namespace`, `range`, `dict`)
//! are not findings by themselves: every published escape through them goes on to a dunder
//! (`lipsum.__globals__`, `cycler.__init__.__globals__`), which is. transformers'
//! `{% generation %}` block (its `AssistantTracker` extension) is read as a plain block.
//!
//! Bounds: at most [`MAX_TEMPLATE`] bytes, [`MAX_TOKENS`] tokens, [`MAX_BLOCK_TOKENS`]
//! tokens inside one `{{ }}` or `{% %}` (which bounds how deep one expression nests: the
//! parser builds attribute, filter and operator chains without recursing, and the walk and
//! the AST's drop do recurse), statement nesting as deep as minijinja's parser allows (150),
//! and [`MAX_NODES`] nodes walked. A template past one is a LEAD that says which.

mod names;
mod source;
mod types;
mod walk;

pub use types::{
    Flag, Judgement, Severity, MAX_BLOCK_TOKENS, MAX_FLAGS, MAX_NODES, MAX_TEMPLATE, MAX_TOKENS,
};

use minijinja::machinery::parse;
use minijinja::syntax::SyntaxConfig;
use source::{scan_tokens, Lines};
use std::collections::HashSet;
use types::{push, MAX_BINDING_PASSES};
use walk::Walk;

/// Judges `template`.
pub fn judge(template: &str) -> Judgement {
    if template.len() > MAX_TEMPLATE {
        return Judgement::whole(
            Severity::Lead,
            format!(
                "a template of {} bytes, larger than the {MAX_TEMPLATE} socair parses: nothing in it was checked",
                template.len()
            ),
        );
    }
    let lines = Lines::new(template);
    let scanned = match scan_tokens(template) {
        Ok(s) => s,
        Err(j) => return j,
    };
    if let Some(at) = scanned.named_escape {
        let mut j = Judgement::default();
        push(
            &mut j,
            Severity::Lead,
            lines.place(at),
            "a string with a `\\N{...}` escape, which jinja2 decodes by Unicode character name and socair does not: it cannot tell what the string names".into(),
        );
        return j;
    }
    let source = scanned.rewritten.as_deref().unwrap_or(template);
    let ast = match parse(source, "<template>", SyntaxConfig::default()) {
        Ok(ast) => ast,
        Err(e) => {
            let msg = e.detail().map_or_else(|| e.to_string(), str::to_owned);
            let at = e
                .line()
                .map_or_else(String::new, |l| format!(" (line {l})"));
            let reason = if msg.contains("recursion") {
                format!("nested deeper than the parser's bound{at}: socair does not parse it, and nothing in it was checked")
            } else {
                format!("minijinja 3.1.0 cannot parse it{at}: {msg}; jinja2 may, and nothing in it was checked")
            };
            return Judgement::whole(Severity::Lead, reason);
        }
    };
    let mut walk = Walk {
        strings: &scanned.strings,
        raw: Vec::new(),
        raw_more: 0,
        tainted: HashSet::new(),
        tainted_attrs: HashSet::new(),
        nodes: 0,
        stopped: None,
        binding: true,
    };
    // Bindings first, until no pass adds one (`{% set b = a %}` before `{% set a = ... %}`
    // in a loop needs two), then the judging pass.
    let mut passes = 0;
    loop {
        let before = (walk.tainted.len(), walk.tainted_attrs.len());
        walk.nodes = 0;
        walk.stmt(&ast, 0);
        passes += 1;
        if (walk.tainted.len(), walk.tainted_attrs.len()) == before {
            break;
        }
        if passes >= MAX_BINDING_PASSES {
            walk.stopped.get_or_insert_with(|| format!("variables bound to one another more than {MAX_BINDING_PASSES} deep, deeper than socair follows: lookups by them were not all checked"));
            break;
        }
    }
    walk.binding = false;
    walk.nodes = 0;
    walk.stmt(&ast, 0);
    // FAILs first, each kind in the order of the text.
    let mut raw = std::mem::take(&mut walk.raw);
    raw.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)).then(a.2.cmp(&b.2)));
    raw.dedup();
    let mut j = Judgement::default();
    for (at, severity, reason) in raw {
        push(&mut j, severity, lines.place(at), reason);
    }
    j.more += walk.raw_more;
    if let Some(why) = walk.stopped.take() {
        push(&mut j, Severity::Lead, "the template".into(), why);
    }
    j
}

#[cfg(test)]
mod tests;
