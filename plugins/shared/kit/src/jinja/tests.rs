use super::names::format_attributes;
use super::source::decode_python_string;
use super::*;

fn worst(t: &str) -> Option<Severity> {
    judge(t).worst()
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../fixtures/jinja/");

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}{rel}")).unwrap()
}

/// Every template in `fixtures/jinja/<folder>`, by file name.
fn templates_in(folder: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(format!("{FIXTURES}{folder}"))
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_templates_real_models_ship_are_data() {
    let all = templates_in("ordinary");
    assert!(all.len() >= 8);
    for (name, t) in all {
        assert_eq!(judge(&t), Judgement::default(), "{name}");
    }
}

#[test]
fn every_hostile_fixture_fails_with_its_line() {
    let all = templates_in("hostile");
    assert!(all.len() >= 10);
    for (name, t) in all {
        let j = judge(&t);
        assert_eq!(j.worst(), Some(Severity::Fail), "{name}: {j:?}");
        assert!(j.flags[0].place.starts_with("line "), "{name}: {j:?}");
    }
}

#[test]
fn lookups_that_cannot_be_named_are_leads() {
    let all = templates_in("lead");
    assert!(all.len() >= 3);
    for (name, t) in all {
        assert_eq!(worst(&t), Some(Severity::Lead), "{name}: {:?}", judge(&t));
    }
}

#[test]
fn the_cve_payload_fails_at_its_place() {
    let j = judge(&fixture("hostile/cve-2024-34359.jinja"));
    let f = &j.flags[0];
    assert_eq!(f.severity, Severity::Fail);
    assert_eq!(f.place, "line 1 column 16");
    assert!(f.reason.contains("`__class__`"), "{f:?}");
    assert!(f.reason.contains("CVE-2024-34359"), "{f:?}");
}

#[test]
fn names_are_judged_as_jinja2_resolves_them() {
    for t in [
        "{{ x.__class__ }}",
        "{{ x['__class__'] }}",
        "{{ x[\"__glo\" ~ \"bals__\"] }}",
        "{{ x['_' * 2 + 'class' + '_' * 2] }}",
        "{{ x['\\x5f\\x5fclass\\x5f\\x5f'] }}",
        "{{ x['\\u005f\\u005fclass\\U0000005f\\137'] }}",
        "{{ x['__CLASS__'|lower] }}",
        "{{ x|attr('__class__') }}",
        "{{ x|map(attribute='a.__class__')|list }}",
        "{{ x|map('attr', '__class__')|list }}",
        "{{ x|selectattr('__class__')|list }}",
        "{{ x|sort(false, false, '__class__') }}",
        "{{ x|join(',', '__class__') }}",
        "{{ '{0.__class__}'.format(x) }}",
        "{{ '{0:{1.__class__}}'.format(1, x) }}",
        "{{ self._TemplateReference__context }}",
        "{% macro m() %}{% endmacro %}{{ m._environment }}",
        "{{ (x|map('lower')).gi_frame.f_globals }}",
        "{{ dict.mro() }}",
        "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
        "{% for a in b %}{% generation %}{{ a.__init__ }}{% endgeneration %}{% endfor %}",
        "{% macro m(o) %}{{ o.__globals__ }}{% endmacro %}",
        "{% if true %}{% if true %}{{ x.y.z.__subclasses__() }}{% endif %}{% endif %}",
    ] {
        assert_eq!(worst(t), Some(Severity::Fail), "{t}: {:?}", judge(t));
    }
}

#[test]
fn ordinary_constructs_are_data() {
    for t in [
        "{{ messages[0]['content'] }}",
        "{{ messages[loop.index0 - 1].role }}",
        "{{ messages[messages|length - 1] }}",
        "{% set ns = namespace(found=false) %}{% set ns.found = true %}{{ ns.found }}",
        "{{ '{0}, {1:.2f}'.format(a, b) }}",
        "{{ '%s' % x }}{{ '%s'|format(x) }}",
        "{{ x|map(attribute='name')|join(', ') }}",
        "{{ tools|tojson(indent=4) }}",
        "{{ cycler('a', 'b').next() }}{{ joiner(', ')() }}{{ lipsum(2) }}{{ range(3)|list }}",
        "{{ param.format }}",
        "{% for k, v in x.items() %}{{ k }}={{ v }}{% endfor %}",
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}",
        "{{ message['content'].split('</think>')[-1].lstrip('\\n') }}",
        "{%- generation -%}{{ a }}{%- endgeneration -%}",
        "{% for m in messages %}{% if loop.first %}{% break %}{% endif %}{% endfor %}",
        "{{ 'x_y' }}{{ x.a_b }}",
    ] {
        assert_eq!(judge(t), Judgement::default(), "{t}");
    }
}

#[test]
fn computed_names_and_unknowns_are_leads() {
    for t in [
        "{{ x['_' ~ y] }}",
        "{% macro g(o, k) %}{{ o[k] }}{% endmacro %}{{ g(x, y ~ 'a') }}",
        "{% set b = a %}{% set a = 'x' ~ y %}{{ z[b] }}",
        "{{ x|attr(name) }}",
        "{{ x|map(attribute=name) }}",
        "{{ x|selectattr(messages[0].role) }}",
        "{{ x|sort(attribute=a ~ 'b') }}",
        "{{ x|map(f, 'content') }}",
        "{{ x|select('defin' ~ y) }}",
        "{{ x|rejectattr('role', t) }}",
        "{{ x|attr(*names) }}",
        "{{ x|map(**kw) }}",
        "{% set ns = namespace(s='') %}{% for c in 'abc' %}{% set ns.s = ns.s ~ c %}{% endfor %}{{ x|attr(ns.s) }}",
        "{{ x|attr(y ~ '_' ~ z) }}",
        "{{ s.format(x) }}",
        "{{ x._meta }}",
        "{{ x['\\N{LOW LINE}\\N{LOW LINE}class\\N{LOW LINE}\\N{LOW LINE}'] }}",
        "{% include 'other.jinja' %}",
        "{{ x.",
    ] {
        assert_eq!(worst(t), Some(Severity::Lead), "{t}: {:?}", judge(t));
    }
}

#[test]
fn bounds_are_leads_that_say_which() {
    let big = "a".repeat(MAX_TEMPLATE + 1);
    assert!(judge(&big).flags[0].reason.contains("larger than"));
    let chain = format!("{{{{ x{} }}}}", ".a".repeat(MAX_BLOCK_TOKENS));
    assert!(
        judge(&chain).flags[0].reason.contains("tokens"),
        "{:?}",
        judge(&chain)
    );
    let nested = format!("{}{}", "{% if x %}".repeat(200), "{% endif %}".repeat(200));
    let j = judge(&nested);
    assert_eq!(j.worst(), Some(Severity::Lead));
    assert!(j.flags[0].reason.contains("nested deeper"), "{j:?}");
    let parens = format!("{{{{ {}x{} }}}}", "(".repeat(500), ")".repeat(500));
    assert_eq!(worst(&parens), Some(Severity::Lead));
    let tokens = "{{ x }}".repeat(MAX_TOKENS / 3 + 1);
    assert!(judge(&tokens).flags[0].reason.contains("tokens"));
}

#[test]
fn findings_are_bounded_and_a_late_fail_still_counts() {
    let mut many: String = (0..MAX_FLAGS * 2)
        .map(|i| format!("{{{{ x._a{i} }}}}"))
        .collect();
    many.push_str("{{ x.__class__ }}");
    let j = judge(&many);
    assert_eq!(j.flags.len(), MAX_FLAGS);
    assert_eq!(j.more, MAX_FLAGS + 1);
    assert_eq!(j.worst(), Some(Severity::Fail));
}

#[test]
fn places_are_lines_and_columns_of_the_template() {
    let j = judge("line one\n  {{ a.b }}{{ c.__d__ }}");
    assert_eq!(j.flags[0].place, "line 2 column 17");
}

#[test]
fn python_string_escapes() {
    for (raw, want) in [
        (r"'a\x5fb'", Some("a_b")),
        (r"'\u005f\U0000005f\137\_'", Some("___\\_")),
        ("'a\\\nb'", Some("ab")),
        (r"'\N{LOW LINE}'", None),
        (r#""it\'s""#, Some("it's")),
    ] {
        assert_eq!(decode_python_string(raw).as_deref(), want, "{raw}");
    }
}

#[test]
fn format_fields() {
    assert_eq!(
        format_attributes("{0.__class__} {{0.x}} {a[1].b:{c.d}} {:.2f}"),
        vec!["__class__", "b", "d", "2f"]
    );
}

/// `fixtures/jinja/crosscheck.json` records what jinja2 3.1.6 does with each inline case of
/// `crosscheck.py` (names computed in the template) and the verdict socair claims:
/// a FAIL must reach internals under a plain `Environment` (and the sandbox refuse it), a
/// PASS must render in `ImmutableSandboxedEnvironment` and reach nothing unsandboxed; socair's
/// verdict today must be the one recorded.
#[test]
fn the_crosscheck_cases_agree_with_jinja2() {
    let record: serde_json::Value = serde_json::from_str(&fixture("crosscheck.json")).unwrap();
    assert_eq!(record["jinja2"], "3.1.6");
    let cases = record["cases"].as_object().unwrap();
    assert!(cases.len() >= 20);
    for (name, c) in cases {
        let template = c["template"].as_str().unwrap();
        let want = match c["socair"].as_str().unwrap() {
            "FAIL" => {
                assert!(!c["unsandboxed_reached"].is_null(), "{name}: {c}");
                assert!(c["sandboxed_reached"].is_null(), "{name}: {c}");
                Some(Severity::Fail)
            }
            "LEAD" => Some(Severity::Lead),
            _ => {
                assert!(c["unsandboxed_reached"].is_null(), "{name}: {c}");
                assert_eq!(c["sandboxed"], "rendered", "{name}: {c}");
                None
            }
        };
        assert_eq!(worst(template), want, "{name}: {:?}", judge(template));
    }
    // Every hostile fixture (and hostile tokenizer_config) reached internals unsandboxed.
    for (name, h) in record["hostile"].as_object().unwrap() {
        assert!(!h["unsandboxed_reached"].is_null(), "{name}: {h}");
    }
    // A name computed as `'for' ~ 'mat'` reached `os` through jinja2 3.1.5's own sandbox
    // (CVE-2025-27516): socair FAILs it.
    let cve = &record["hostile"]["format-by-attr.jinja"];
    assert_eq!(cve["sandboxed_jinja2_3_1_5"], "reached", "{cve}");
    let j = judge(&fixture("hostile/format-by-attr.jinja"));
    assert_eq!(j.worst(), Some(Severity::Fail), "{j:?}");
    assert!(j.flags[0].reason.contains("`__globals__`"), "{j:?}");
}

#[test]
fn hostile_tokenizer_configs_fail() {
    for (name, text) in templates_in("hostile-tokenizer_config") {
        let config: serde_json::Value = serde_json::from_str(&text).unwrap();
        let templates: Vec<String> = match &config["chat_template"] {
            serde_json::Value::String(s) => vec![s.clone()],
            serde_json::Value::Array(a) => a
                .iter()
                .map(|t| t["template"].as_str().unwrap().to_owned())
                .collect(),
            other => panic!("{name}: {other}"),
        };
        let worst_all = templates.iter().filter_map(|t| worst(t)).max();
        assert_eq!(worst_all, Some(Severity::Fail), "{name}");
    }
}

#[test]
fn computed_names_that_can_be_dunders_fail() {
    for t in [
        "{% set k = '%c%c'|format(95, 95) ~ 'class' %}{{ x[k] }}",
        "{% set k %}__class__{% endset %}{{ x[k] }}",
        "{% set k %}\n__class__{% endset %}{{ x[k] }}",
        "{% for k in ['a', '__class__'] %}{{ x[k] }}{% endfor %}",
        "{% for k in ['a', '__class__'] %}{{ x|attr(k) }}{% endfor %}",
        "{% macro g(o, k) %}{{ o|attr(k) }}{% endmacro %}{{ g(x, '__init__') }}",
        "{% macro g(o) %}{{ o|attr(varargs[0]) }}{% endmacro %}{{ g(x, '__init__') }}",
        "{% macro g(o) %}{{ o[kwargs.k] }}{% endmacro %}{{ g(x, k='__init__') }}",
        "{% set ns = namespace() %}{% set ns.k = '__init__' %}{{ x|map(attribute=ns.k) }}",
        "{{ x|sort(attribute='a,__class__') }}",
        "{{ x|selectattr('a.__class__.b') }}",
        "{{ x|rejectattr('__cl' ~ 'ass__', 'none') }}",
        "{{ x|groupby('__class__') }}",
        "{{ x|sum(attribute='__cl' ~ 'ass__') }}",
        "{{ x|unique(false, '__class__') }}",
        "{{ x|min(attribute='__class__') }}",
        "{{ x|map('map', 'attr', '__class__') }}",
        "{{ x|map('attr', name='__class__') }}",
        "{{ x|map('sort', attribute='__class__') }}",
        "{{ x|attr(*['__class__']) }}",
        "{{ x|map(**{'attribute': '__class__'}) }}",
        "{{ x|attr('__' ~ y) }}",
        "{{ x['__' ~ y ~ '__'] }}",
        "{{ x|attr(['__class__']|first) }}",
        "{{ x|attr(('__class__', 'a')|last|default('__class__')) }}",
        "{{ x|attr('__CLASS__'.lower()) }}",
        "{{ x|attr('  __class__ '|trim) }}",
        "{{ x|attr('__class__'[0:9]) }}",
        "{{ x|attr(cycler('__class__').next()) }}",
        "{{ x|attr(loop_var) }}{% for loop_var in {'__class__': 1} %}{% endfor %}",
        "{% set f = ['attr']|first %}{{ x|map(f, '__class__') }}",
        "{{ ('{0.__class__}'|attr('format'))(x) }}",
        "{{ '{0.__class__}'['format'](x) }}",
        "{% macro m() %}{{ caller('__class__') }}{% endmacro %}{% call(k) m() %}{{ x|attr(k) }}{% endcall %}",
        "{% set k = [] %}{{ k.append('__class__') or '' }}{{ a[k[0]] }}",
        "{% set d = {} %}{{ d.update({'k': '__class__'}) or '' }}{{ a[d.k] }}",
        "{% set ns = namespace(l=[]) %}{% set ns.l = ns.l + ['__class__'] %}{{ a[ns.l[0]] }}",
        "{% for k, v in {'a': '__class__'}|dictsort %}{{ a[v] }}{% endfor %}",
        "{% for p in [['a', '__class__']] %}{% set k, v = p %}{{ a[v] }}{% endfor %}",
        "{% macro m(n) %}{% if n %}{{ m(n - 1) }}{% else %}__class__{% endif %}{% endmacro %}{{ a[m(3)] }}",
        "{% set k | lower %}__CLASS__{% endset %}{{ a[k] }}",
        "{{ a[['__class__', 'b']|sort|first] }}",
        "{{ a[{'__class__': 1}|list|first] }}",
        "{{ a|attr('x'.join(['__cl', 'ass__'])|replace('x', '')) }}",
        "{{ a|attr(x.y|default('__class__')) }}",
        "{% filter attr('__class__') %}x{% endfilter %}",
    ] {
        assert_eq!(worst(t), Some(Severity::Fail), "{t}: {:?}", judge(t));
    }
}

#[test]
fn computed_names_that_resolve_to_ordinary_names_are_data() {
    for t in [
        "{% for k in ['a', 'b'] %}{{ x[k] }}{% endfor %}",
        "{% set k = 'role' %}{{ m[k] }}{{ x|map(attribute=k)|join }}",
        "{% set ns = namespace(k='content') %}{{ x|map(attribute=ns.k)|list }}",
        "{% macro g(o, k) %}{{ o[k] }}{{ o|attr(k) }}{% endmacro %}{{ g(x, 'content') }}",
        "{% set f = 'upper' %}{{ x|map(f)|join }}",
        "{% set t = 'equal' ~ 'to' %}{{ x|selectattr('role', t, 'user')|list }}",
        "{{ x|sort(attribute='role,content') }}",
        "{{ x|map(attribute='0.a') }}",
        "{{ x|selectattr('role', 'equalto', 'system')|map(attribute='content')|first }}",
        "{{ x|groupby('role') }}{{ x|sum(attribute='n') }}{{ x|unique(attribute='id') }}",
        "{% set ns = namespace(i=0) %}{% for m in messages %}{% set ns.i = ns.i + 1 %}{% endfor %}{{ messages[ns.i] }}",
        "{% set roles = {'user': 'human', 'assistant': 'gpt'} %}{{ m[roles[m.role]] }}",
        "{% set ns = namespace(keys=[]) %}{% for m in messages %}{% set ns.keys = ns.keys + [m.role] %}{% endfor %}{{ x[ns.keys[0]] }}",
        "{% set sep = ', ' %}{{ messages|map(attribute='content')|join(sep) }}",
        "{{ (messages|selectattr('role', 'equalto', 'system')|first).content }}",
        "{{ '{0:>10}'.format(x) }}{{ '%.2f'|format(x) }}{{ x|attr('content') }}",
        "{{ x|attr }}{{ x|map }}{{ x|selectattr }}{{ x|sort(attribute=none) }}{{ x|sum(attribute=0) }}",
    ] {
        assert_eq!(judge(t), Judgement::default(), "{t}");
    }
}

/// The chat templates llama.cpp tests with (fixtures/jinja/llama.cpp, 70 published models'
/// templates: macros that call themselves, namespaces, `dictsort`, `map`/`selectattr` with
/// literal names, counters and strings built in loops) are data: the value sets reach a
/// fixed point on each, and no computed name in them can be unsafe.
#[test]
fn the_templates_llama_cpp_tests_with_are_data() {
    let all: Vec<_> = templates_in("llama.cpp")
        .into_iter()
        .filter(|(n, _)| n.ends_with(".jinja"))
        .collect();
    assert!(all.len() >= 70, "{}", all.len());
    for (name, t) in all {
        assert_eq!(judge(&t), Judgement::default(), "{name}");
    }
}

/// A template written to multiply value sets (two loops over 64 long strings, 1,800
/// concatenations, replacements and attribute lookups of them) stays cheap: the products
/// are capped per operation and in all ([`super::values::MAX_WORK`]), and what is not
/// spelled out is a LEAD, never a PASS.
#[test]
fn multiplying_value_sets_stays_bounded() {
    let items: Vec<String> = (0..64)
        .map(|i| format!("'{}'", format!("s{i:03}").repeat(30)))
        .collect();
    let items = items.join(", ");
    let mut t = format!("{{% for a in [{items}] %}}{{% for b in [{items}] %}}");
    for _ in 0..600 {
        t.push_str("{{ x[a ~ b ~ a ~ b] }}{{ x|attr(a ~ b) }}{{ (a ~ b)|replace(a, b)|upper }}");
    }
    t.push_str("{% endfor %}{% endfor %}");
    let start = std::time::Instant::now();
    let j = judge(&t);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(j.worst(), Some(Severity::Lead), "{j:?}");
    // A dunder prefix survives the coarsening.
    let t = t.replace("x|attr(a ~ b)", "x|attr('__' ~ a ~ b)");
    assert_eq!(worst(&t), Some(Severity::Fail));
}
