use super::names::format_attributes;
use super::source::decode_python_string;
use super::*;

fn worst(t: &str) -> Option<Severity> {
    judge(t).worst()
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/jinja/");

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
        "{% set k = '%c%c'|format(95, 95) ~ 'class' %}{{ x[k] }}",
        "{% set k %}__class__{% endset %}{{ x[k] }}",
        "{% for k in ['a', 'b'] %}{{ x[k] }}{% endfor %}",
        "{% macro g(o, k) %}{{ o[k] }}{% endmacro %}",
        "{% set b = a %}{% set a = 'x' ~ y %}{{ z[b] }}",
        "{{ x|attr(name) }}",
        "{{ x|map(attribute=name) }}",
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
