//! The YAML judge on hand-written documents: every spelling of a Python tag, the data-only
//! ones, local tags, OmegaConf interpolations, Hydra and NeMo targets, aliases, and text the
//! parser or PyYAML would read otherwise.

use super::*;

fn statuses(text: &str) -> (RowStatus, Vec<(String, String)>) {
    let j = judge(text.as_bytes());
    let listed = j
        .findings
        .shown
        .iter()
        .map(|f| (f.place.clone(), f.reason.clone()))
        .collect();
    (j.findings.status(), listed)
}

fn fails_at(text: &str, place: &str, says: &str) {
    let (status, listed) = statuses(text);
    assert_eq!(status, RowStatus::Fail, "{text}: {listed:?}");
    assert!(
        listed.iter().any(|(p, r)| p == place && r.contains(says)),
        "{text}: no FAIL at {place} saying {says}: {listed:?}"
    );
}

#[test]
fn plain_data_passes() {
    for text in [
        "a: 1\nb: [x, y, {c: null}]\n",
        "---\nname: bert\nhidden: 768\n...\n--- !!map\nx: !!str 3\n",
        "anchors: &a {k: 1}\nuse: *a\nmerged:\n  <<: *a\n  j: 2\n",
        "path: ${model.dir}/x\nwhen: ${now:%Y}\nsel: ${oc.select:a.b,1}\n",
        "_target_text: os.system\ntarget: 0.5\n",
        "",
        "# a comment\n",
        "%YAML 1.1\n---\na: !!python/tuple [1, 2]\n",
    ] {
        let j = judge(text.as_bytes());
        assert_ne!(j.findings.status(), RowStatus::Fail, "{text}");
        assert_ne!(
            j.findings.status(),
            RowStatus::Lead,
            "{text}: {:?}",
            j.findings.shown
        );
    }
}

#[test]
fn every_spelling_of_a_python_tag_fails() {
    fails_at(
        "a: !!python/object/apply:os.system [ls]\n",
        "line 1 column 4 (a)",
        "`tag:yaml.org,2002:python/object/apply:os.system`: yaml.unsafe_load",
    );
    fails_at(
        "%TAG !p! tag:yaml.org,2002:python/\n---\nx: !p!object/apply:os.system [id]\n",
        "line 3 column 4 (x)",
        "call `os.system`",
    );
    fails_at(
        "%TAG !! tag:yaml.org,2002:python/\n---\n- !!module:os ''\n",
        "line 3 column 3 ([0])",
        "import module `os`",
    );
    fails_at(
        "%TAG ! tag:yaml.org,2002:python/\n---\n- !name:builtins.eval ''\n",
        "line 3 column 3 ([0])",
        "`builtins.eval`",
    );
    fails_at(
        "b: !<tag:yaml.org,2002:python/name:os.system> ''\n",
        "line 1 column 4 (b)",
        "python/name:os.system",
    );
    fails_at(
        "c: !!python%2Fobject%2Fnew:subprocess.Popen [[id]]\n",
        "line 1 column 4 (c)",
        "python/object/new:subprocess.Popen",
    );
    fails_at(
        "{k: [1, !!python/object:x.Y {a: 1}]}\n",
        "line 1 column 9 (k[1])",
        "__setstate__",
    );
    // On a key, in a later document, behind an anchor.
    fails_at(
        "? !!python/object/apply:os.system [ls]\n: v\n",
        "line 1 column 3 (<key>)",
        "os.system",
    );
    fails_at(
        "a: 1\n---\nb: &x !!python/object/apply:os.system [ls]\nc: *x\n",
        "line 3 column 4 (document 2, b)",
        "os.system",
    );
}

#[test]
fn data_only_python_tags_are_notes() {
    let j = judge(b"t: !!python/tuple [1, 2]\nc: !!python/complex 1+2j\nn: !!python/none ''\n");
    assert_eq!(
        j.findings.status(),
        RowStatus::Pass,
        "{:?}",
        j.findings.shown
    );
    assert_eq!(j.notes.len(), 3);
    assert!(j.notes[0].1.contains("builds a tuple"), "{:?}", j.notes);
    assert_eq!(j.notes[0].0, "line 1 column 4 (t)");
    let opened = opened_file(&j);
    assert_eq!(opened.rows[0].status, RowStatus::Pass);
    assert_eq!(opened.rows[0].findings.len(), 3);
}

#[test]
fn other_tags_are_leads() {
    for (text, says) in [
        ("a: !foo 1\n", "`!foo`"),
        ("a: !!strx 1\n", "`tag:yaml.org,2002:strx`"),
        (
            "a: !<tag:example.com,2000:x> 1\n",
            "`tag:example.com,2000:x`",
        ),
        ("a: !!python/tuplex [1]\n", "no PyYAML 6.0.3 constructor"),
    ] {
        let (status, listed) = statuses(text);
        assert_eq!(status, RowStatus::Lead, "{text}");
        assert!(
            listed.iter().any(|(_, r)| r.contains(says)),
            "{text}: {listed:?}"
        );
    }
}

#[test]
fn interpolations_that_reach_outside_the_config_are_leads() {
    let (status, listed) = statuses("home: ${oc.env:HOME}\nx: pre-${multiply:2,3}\n");
    assert_eq!(status, RowStatus::Lead);
    assert_eq!(listed[0].0, "line 1 column 7 (home) character 1");
    assert!(listed[0].1.contains("environment"));
    assert_eq!(listed[1].0, "line 2 column 4 (x) character 5");
    assert!(listed[1].1.contains("resolver `multiply`"));
    // Not in keys, not in non-string tags.
    let (status, _) = statuses("${oc.env:X}: 1\ny: !!int 3\n");
    assert_eq!(status, RowStatus::Pass);
}

#[test]
fn targets_that_run_code_fail_and_others_are_leads() {
    fails_at(
        "cb:\n  _target_: os.system\n  _args_: [id]\n",
        "line 2 column 13 (cb._target_)",
        "the target `os.system` runs code",
    );
    fails_at(
        "- {_target_: posix.system, _args_: [id]}\n",
        "line 1 column 14 ([0]._target_)",
        "`os.system`",
    );
    fails_at(
        "x:\n  _target_: subprocess.run\n",
        "line 2 column 13 (x._target_)",
        "subprocess*",
    );
    let (status, listed) =
        statuses("encoder:\n  _target_: nemo.collections.asr.modules.ConvASREncoder\n");
    assert_eq!(status, RowStatus::Lead);
    assert!(listed[0]
        .1
        .contains("nemo.collections.asr.modules.ConvASREncoder"));
    // Through an alias, by an interpolation, or not a name at all.
    fails_at(
        "t: &t builtins.exec\nm: {_target_: *t}\n",
        "line 2 column 15 (m._target_)",
        "builtins.exec",
    );
    let (status, listed) = statuses("m: {_target_: '${oc.env:T}'}\n");
    assert_eq!(status, RowStatus::Lead);
    assert!(listed
        .iter()
        .any(|(_, r)| r.contains("given by an interpolation")));
    let (status, _) = statuses("m: {_target_: [os.system]}\n");
    assert_eq!(status, RowStatus::Lead);
    // NeMo's `target`, at the top or in `model`, as a dotted name only.
    fails_at("target: os.system\n", "line 1 column 9 (target)", "NeMo");
    let (status, listed) =
        statuses("model:\n  target: nemo.collections.asr.models.EncDecCTCModelBPE\n");
    assert_eq!(status, RowStatus::Lead, "{listed:?}");
    for quiet in ["target: 0.5\n", "target: main\n", "x:\n  target: a.b\n"] {
        assert_eq!(statuses(quiet).0, RowStatus::Pass, "{quiet}");
    }
}

#[test]
fn aliases_are_counted_not_expanded() {
    let mut lol = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (i, name) in ["b", "c", "d", "e", "f", "g", "h", "i", "j"]
        .iter()
        .enumerate()
    {
        let prev = ["a", "b", "c", "d", "e", "f", "g", "h", "i"][i];
        let refs = vec![format!("*{prev}"); 10].join(", ");
        lol.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let j = judge(lol.as_bytes());
    assert_eq!(j.findings.status(), RowStatus::Lead);
    assert!(j.expanded > 1_000_000_000, "{}", j.expanded);
    assert!(j.findings.shown[0].reason.contains("an alias bomb"));
    // Merge keys doubling at every level.
    let mut merges = String::from("m0: &m0 {k: 1}\n");
    for i in 1..=40 {
        merges.push_str(&format!("m{i}: &m{i} {{<<: [*m{}, *m{}]}}\n", i - 1, i - 1));
    }
    let j = judge(merges.as_bytes());
    assert_eq!(j.findings.status(), RowStatus::Lead);
    // A few shared anchors are no bomb.
    let (status, _) = statuses("a: &a [1, 2]\nb: [*a, *a, *a]\n");
    assert_eq!(status, RowStatus::Pass);
}

#[test]
fn text_readers_read_otherwise_is_a_lead() {
    // PyYAML ends the comment at U+0085 and reads the tag on the next line.
    let j = judge("# note\u{85}x: !!python/object/apply:os.system [id]\n".as_bytes());
    assert_eq!(j.findings.status(), RowStatus::Fail);
    assert!(j.findings.shown.iter().any(|f| f.reason.contains("U+0085")));
    // Spelled in a comment only: the parse finds no tag.
    let (status, listed) = statuses("a: 1 # !!python/object/apply:os.system\n");
    assert_eq!(status, RowStatus::Lead);
    assert!(listed[0].1.contains("spells a Python tag"));
    // A control character PyYAML refuses, text that does not parse, bytes that are no text.
    let (status, listed) = statuses("a: \u{7}\n");
    assert_eq!(status, RowStatus::Lead);
    assert!(listed[0].1.contains("U+0007"));
    let (status, listed) = statuses("a: [1, 2\nb: }\n");
    assert_eq!(status, RowStatus::Lead);
    assert!(
        listed[0].1.contains("the YAML parse stops here"),
        "{listed:?}"
    );
    let j = judge(b"a: \xff\xfe\x00");
    assert!(j.unread.is_some());
    assert_eq!(opened_file(&j).rows[0].status, RowStatus::Lead);
    // A FAIL before the parse stops still counts.
    let (status, _) = statuses("- !!python/name:os.system ''\n- [\n");
    assert_eq!(status, RowStatus::Fail);
}

#[test]
fn the_row_lists_fails_first_and_names_severities() {
    let j = judge(b"a: !foo 1\nb: !!python/object/apply:os.system [id]\nc: !!python/tuple []\n");
    let opened = opened_file(&j);
    let row = &opened.rows[0];
    assert_eq!(row.status, RowStatus::Fail);
    assert!(row.summary.contains("runs code"), "{}", row.summary);
    assert_eq!(row.findings[0].severity, socair_plugin_api::Severity::Fail);
    assert_eq!(row.findings[1].severity, socair_plugin_api::Severity::Lead);
    assert_eq!(row.findings[2].severity, socair_plugin_api::Severity::Note);
    assert!(row.names_severities);
    assert!(opened.tensors.is_empty());
}

#[test]
fn hostile_shapes_stay_bounded() {
    // saphyr-parser counts flow levels in a u8: past 255 the parse stops, a LEAD (PyYAML's
    // recursive composer stops near 500); a tag before that point is still judged.
    let deep = format!(
        "- !!python/name:os.system ''\n- {}x{}\n",
        "[".repeat(300),
        "]".repeat(300)
    );
    let (status, listed) = statuses(&deep);
    assert_eq!(status, RowStatus::Fail);
    assert!(
        listed.iter().any(|(_, r)| r.contains("recursion limit")),
        "{listed:?}"
    );
    // Deep block nesting: the path of a finding is built only when it is listed.
    let mut nested: String = (0..2_000)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    nested.push_str(&" ".repeat(2_000));
    nested.push_str("v: !!python/object/apply:os.system [id]\n");
    let j = judge(nested.as_bytes());
    assert_eq!(j.findings.status(), RowStatus::Fail);
    assert!(
        j.findings.shown[0].place.ends_with("…)"),
        "{}",
        j.findings.shown[0].place
    );
    // Many findings: listed up to the bound, the rest counted.
    let many = "- !!python/object/apply:os.system [id]\n".repeat(100_000);
    let j = judge(many.as_bytes());
    assert_eq!(j.findings.total(), 100_000);
    assert!(j.findings.shown.len() <= socair_plugin_kit::bounded::FINDINGS_PER_ROW);
    let notes = "- !!python/tuple []\n".repeat(1_000);
    let j = judge(notes.as_bytes());
    assert_eq!(
        (j.notes.len() as u64 + j.notes_more, j.findings.status()),
        (1_000, RowStatus::Pass)
    );
}
