use super::*;

/// A file from a header text and a data section length.
fn file(header: &str, data_len: usize) -> Vec<u8> {
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    f.resize(f.len() + data_len, 0);
    f
}

fn parse(f: &[u8]) -> Result<Header, SafetensorsError> {
    parse_header(f, f.len() as u64)
}

#[test]
fn accepts_reference_cases() {
    // Scalar, zero-sized and several zero-sized at one offset are all valid.
    let h = parse(&file(
        r#"{"s":{"dtype":"I32","shape":[],"data_offsets":[0,4]},"z":{"dtype":"F32","shape":[2,0],"data_offsets":[4,4]},"y":{"dtype":"F16","shape":[0],"data_offsets":[4,4]}}  "#,
        4,
    ))
    .unwrap();
    assert_eq!(h.tensors.len(), 3);
    assert_eq!(h.tensors[0].shape, Vec::<u64>::new());
    // A header length that is not a multiple of 8 is valid (data unaligned).
    let text = r#"{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}"#;
    assert_ne!(text.len() % 8, 0);
    assert_eq!(parse(&file(text, 3)).unwrap().header_len, text.len() as u64);
    // Metadata keeps its order.
    let h = parse(&file(r#"{"__metadata__":{"z":"1","a":"2"}}"#, 0)).unwrap();
    assert_eq!(
        h.metadata.unwrap(),
        vec![("z".into(), "1".into()), ("a".into(), "2".into())]
    );
}

#[test]
fn refuses_bad_lengths() {
    assert_eq!(
        parse(b"\x01\0\0"),
        Err(SafetensorsError::TooShort { file_len: 3 })
    );
    assert!(matches!(
        parse(b"<\0\0\0\0\xff\xff\xff"),
        Err(SafetensorsError::HeaderTooLarge { .. })
    ));
    assert!(matches!(
        parse(b"\x10\0\0\0\0\0\0\0{}"),
        Err(SafetensorsError::HeaderPastEnd { .. })
    ));
}

#[test]
fn refuses_what_readers_could_read_differently() {
    let cases: &[(&str, usize, &str)] = &[
        ("\x0c{}", 0, "must start with '{'"),
        ("{}\x0c", 0, "trailing characters"),
        ("{} \0", 0, "trailing characters"),
        ("{} x", 0, "trailing characters"),
        ("{\"a\":", 0, "not valid JSON"),
        ("[]", 0, "must start with '{'"),
        (r#"{"__metadata__":{"k":1}}"#, 0, "not a string"),
        (
            r#"{"__metadata__":{"k":"1","k":"2"}}"#,
            0,
            "duplicate key \"k\"",
        ),
        (r#"{"__metadata__":"x"}"#, 0, "not an object"),
        (
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
            2,
            "duplicate key \"a\"",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"dtype":"U8"}}"#,
            1,
            "duplicate key \"dtype\"",
        ),
        (r#"{"__metadata__":{"k":null}}"#, 0, "not a string"),
        (
            r#"{"a":{"dtype":"U8","shape":[1]}}"#,
            1,
            "missing field \"data_offsets\"",
        ),
        (
            r#"{"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}"#,
            4,
            "unknown dtype \"f32\"",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}"#,
            1,
            "has 3 numbers",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}"#,
            1,
            "negative number -1",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}"#,
            1,
            "the number 1.0",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}}"#,
            1,
            "end before they begin",
        ),
        (
            r#"{"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0,4]}}"#,
            4,
            "span 4 bytes but I32 [2, 2] takes 16",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2,18446744073709551614],"data_offsets":[0,4]}}"#,
            4,
            "more elements than 2^64",
        ),
        (
            r#"{"a":{"dtype":"I64","shape":[9223372036854775807],"data_offsets":[0,4]}}"#,
            4,
            "more than 2^64 bits",
        ),
        (
            r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#,
            2,
            "not a whole number of bytes",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
            2,
            "leave bytes [0, 1) owned by no tensor",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}"#,
            3,
            "hole of 1 bytes after \"a\"",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
            2,
            "overlap \"a\"",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
            5,
            "polyglot",
        ),
        (
            r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#,
            2,
            "truncated",
        ),
    ];
    for (header, data_len, expected) in cases {
        let err = parse(&file(header, *data_len)).expect_err(header);
        assert!(
            err.to_string().contains(expected),
            "{header}: expected {expected:?} in {err}"
        );
    }
}

/// What safetensors 0.8.0 reads the same as if it were not there (checked with the library's
/// `safe_open` and `load_file`: fixtures/safetensors/make_header_fixtures.py): read, and said.
#[test]
fn reads_what_the_library_reads_the_same_and_says_so() {
    let entry = r#""a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}"#;
    let h = parse(&file(&format!("{{{entry}}}"), 1)).unwrap();
    assert_eq!(h.deviations, Deviations::default());
    for (text, lead, trail) in [
        (format!(" {{{entry}}}"), true, false),
        (format!("\n\t{{{entry}}}"), true, false),
        (format!("{{{entry}}}\t"), false, true),
        (format!("{{{entry}}}\r\n  "), false, true),
        (format!("{{{entry}}}   "), false, false),
        (format!("{{\n  {entry}\n}}"), false, false),
    ] {
        let h = parse(&file(&text, 1)).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(h.tensors.len(), 1, "{text:?}");
        assert_eq!(
            (
                h.deviations.leading_whitespace,
                h.deviations.trailing_whitespace
            ),
            (lead, trail),
            "{text:?}"
        );
    }
    let h = parse(&file(&format!("{{\"__metadata__\":null,{entry}}}"), 1)).unwrap();
    assert!(h.deviations.metadata_null && h.metadata.is_none());
    let extra = r#"{"a":{"dtype":"U8","extra":{"x":[1,{"y":null}]},"shape":[1],"data_offsets":[0,1],"note":"n","note":2}}"#;
    let h = parse(&file(extra, 1)).unwrap();
    assert_eq!(h.tensors[0].shape, vec![1]);
    assert_eq!(h.deviations.extra_fields_total, 3);
    assert_eq!(
        h.deviations.extra_fields[..2],
        [("a".into(), "extra".into()), ("a".into(), "note".into())]
    );
    let many: String = (0..40).map(|i| format!(",\"f{i}\":{i}")).collect();
    let text = format!(r#"{{"a":{{"dtype":"U8","shape":[1],"data_offsets":[0,1]{many}}}}}"#);
    let h = parse(&file(&text, 1)).unwrap();
    assert_eq!(h.deviations.extra_fields.len(), MAX_EXTRA_LISTED);
    assert_eq!(h.deviations.extra_fields_total, 40);
}

#[test]
fn refuses_non_utf8_with_offset() {
    let mut f = file("{\"a\":\"xy\"}", 0);
    f[14] = 0xff;
    assert_eq!(parse(&f), Err(SafetensorsError::NotUtf8 { offset: 14 }));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // Refused at the first level that is not what the header allows, before the nesting
    // is walked: no recursion, no tree of values.
    let deep = |inner: &str| format!("{{{inner}{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    for (inner, expected) in [
        ("\"__metadata__\":", "not an object"),
        ("\"a\":", "entry is an array"),
        ("\"a\":{\"shape\":", "holds an array"),
    ] {
        let err = parse(&file(&deep(inner), 0)).unwrap_err();
        assert!(err.to_string().contains(expected), "{inner}: {err}");
    }
    // Nesting the header allows nowhere (a JSON syntax error inside it) is still refused.
    let err = parse(&file(&format!("{{\"a\":{}", "[".repeat(1000)), 0)).unwrap_err();
    assert!(
        matches!(
            err,
            SafetensorsError::BadEntry { .. } | SafetensorsError::InvalidJson { .. }
        ),
        "{err}"
    );
}

#[test]
fn shapes_past_numpy_rank_and_long_offsets_are_refused_as_read() {
    let ones = vec!["1"; 65].join(",");
    let text = format!(r#"{{"a":{{"dtype":"U8","shape":[{ones}],"data_offsets":[0,1]}}}}"#);
    let err = parse(&file(&text, 1)).unwrap_err();
    assert!(err.to_string().contains("more than 64 dimensions"), "{err}");
    let ones = vec!["1"; 64].join(",");
    let text = format!(r#"{{"a":{{"dtype":"U8","shape":[{ones}],"data_offsets":[0,1]}}}}"#);
    assert_eq!(parse(&file(&text, 1)).unwrap().tensors[0].shape.len(), 64);
    let many = vec!["0"; 1000].join(",");
    let text = format!(r#"{{"a":{{"dtype":"U8","shape":[0],"data_offsets":[{many}]}}}}"#);
    let err = parse(&file(&text, 0)).unwrap_err();
    assert!(err.to_string().contains("has 1000 numbers"), "{err}");
}

#[test]
fn metadata_past_the_listing_limit_is_checked_and_counted() {
    let n = MAX_METADATA_LISTED + 10;
    let entries: Vec<String> = (0..n).map(|i| format!("\"k{i}\":\"v\"")).collect();
    let text = format!("{{\"__metadata__\":{{{}}}}}", entries.join(","));
    let h = parse(&file(&text, 0)).unwrap();
    assert_eq!(h.metadata.as_ref().unwrap().len(), MAX_METADATA_LISTED);
    assert_eq!(h.metadata_total, n as u64);
    // A duplicate past the limit is still a duplicate; so is a non-string value.
    let text = format!(
        "{{\"__metadata__\":{{{},\"k5\":\"w\"}}}}",
        entries.join(",")
    );
    let err = parse(&file(&text, 0)).unwrap_err();
    assert!(err.to_string().contains("duplicate key \"k5\""), "{err}");
    let text = format!("{{\"__metadata__\":{{{},\"z\":1}}}}", entries.join(","));
    let err = parse(&file(&text, 0)).unwrap_err();
    assert!(err.to_string().contains("not a string"), "{err}");
}
