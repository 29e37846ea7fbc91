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
//! pinned at 3.1.0) builds the AST, and the walk evaluates every expression to the bounded
//! set of values it can take (`values.rs`: the strings it can spell, strings it builds
//! but cannot spell kept as a known prefix and suffix, template-written lists and dicts item
//! by item, the caller's data, anything else). String literals are decoded as jinja2's lexer
//! decodes them (Python's `unicode-escape`); `~`, `+`, `*`, `%`, slicing, `and`/`or`,
//! if-expressions, the string filters (`lower`, `replace`, `format`, `join`, `reverse`,
//! `first`, `list`...), string methods (`.lower()`, `.split()`, `'{}'.format()`...),
//! `{% set %}`/`{% with %}`/`{% set %}...{% endset %}` variables, loop variables over
//! template-written lists and dicts (`.items()`), macro parameters from every call site
//! (`varargs`, `kwargs`, `caller(...)` arguments, and the text a macro emits), namespace
//! attributes (`namespace(k=...)`, `{% set ns.k = ... %}`) are followed, flow-insensitively
//! (every assignment of a name joined), in passes until nothing changes (values that keep
//! changing widen: an accumulation `s = s ~ c` to the prefix its values share, counters to
//! some number, growing lists to their items). Every name a lookup can take is then judged:
//! attribute names, subscript keys, the name arguments of the filters that look attributes
//! up (`attr`, `map(attribute=)`, `selectattr`, `rejectattr`, `sort` (split on `,` and `.`,
//! jinja2's `make_multi_attrgetter`), `groupby`, `sum`, `unique`, `min`, `max`, `join`: split on
//! `.` by `make_attrgetter`), the filter `map` calls by name (`map('attr', n)`: its other
//! arguments are judged as that filter's), the test `select`/`reject`/`selectattr` call by
//! name, `str.format` fields (also when the bound `format` is reached by `|attr` or a
//! subscript, CVE-2025-27516's path in jinja2 before 3.1.6). Which jinja2 code does the
//! lookup is said in `calls.rs`. Then:
//!
//! * **FAIL**: a lookup that can be (by any path the set follows) a dunder name
//!   (`__globals__`, `__class__`, `__builtins__`, `__init__`, `__mro__`, `__subclasses__`
//!   ..., or a built name whose every spelling starts with `__`), a name-mangled private
//!   attribute (`self._TemplateReference__context`), a private attribute of jinja2's own
//!   runtime objects (`_environment`, `_func`, `_context` ... of macros, loops, cyclers,
//!   joiners, namespaces, block references), or `mro` and the generator/frame/code/traceback
//!   attributes (`gi_frame`, `f_globals`, `tb_frame` ...: `(x|map('lower')).gi_frame.f_globals`
//!   reaches a module's globals with no underscore at all);
//! * **LEAD**: a lookup socair cannot name: a subscript whose key is built from something it
//!   cannot spell (`x['_' ~ y]`), an attribute, filter or test name argument that is built
//!   so or comes from the caller's data (`x|attr(message.role)`), `.format(...)` on a string
//!   not written in the template, any other attribute starting with `_` (the sandbox refuses
//!   it on an object; on a dict it reads a key), a string literal with a `\N{...}` escape; a
//!   template minijinja cannot parse (jinja2 may: nothing in it was checked); a template
//!   beyond the bounds below or whose variables do not settle within the passes;
//! * otherwise the template is data: ordinary Jinja that reads messages and writes text. A
//!   subscript by the caller's data (`messages[i]`, `tool[key]`) is data: the template does
//!   not choose the key.
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
//! [`MAX_NODES`] nodes walked per pass, at most 16 binding passes, and the value sets'
//! own caps (64 strings, 16 partial strings, 8 lists of 64 items nested 3 deep, strings of
//! 256 characters: past a cap a value widens, keeping whether it starts with `__`). A
//! template past one is a LEAD that says which.

mod calls;
mod names;
mod source;
mod types;
mod values;
mod walk;

pub use types::{
    Flag, Judgement, Severity, MAX_BLOCK_TOKENS, MAX_FLAGS, MAX_NODES, MAX_TEMPLATE, MAX_TOKENS,
};

use minijinja::machinery::parse;
use minijinja::syntax::SyntaxConfig;
use source::{scan_tokens, Lines};
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
    values::reset_work();
    let mut walk = Walk::new(&scanned.strings);
    // Bindings first, until a pass binds nothing new (the sets only grow, within their
    // bounds), then the judging pass.
    let mut passes = 0;
    loop {
        walk.changed = false;
        walk.pass = passes;
        walk.nodes = 0;
        walk.stmt(&ast, 0);
        passes += 1;
        if !walk.changed {
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
