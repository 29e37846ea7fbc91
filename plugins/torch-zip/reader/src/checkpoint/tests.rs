use super::*;

#[test]
fn versions_parse_as_std_stoull_does() {
    assert_eq!(stoull(b"3\n"), Some(3));
    assert_eq!(stoull(b" \t+10abc"), Some(10));
    assert_eq!(stoull(b"7\0junk"), Some(7));
    assert_eq!(stoull(b"-1"), Some(u64::MAX));
    assert_eq!(stoull(b"-0"), Some(0));
    assert_eq!(stoull(b"0x10"), Some(0));
    assert_eq!(stoull(b""), None);
    assert_eq!(stoull(b"\x0b\x0c"), None);
    assert_eq!(stoull(b"+"), None);
    assert_eq!(stoull(b"18446744073709551616"), None);
    assert_eq!(stoull(b"18446744073709551615"), Some(u64::MAX));
}

#[test]
fn torch_record_names_are_recognised_ignoring_case() {
    for name in [
        "a/data.pkl",
        "A/DATA.PKL",
        "x/version",
        "x/.data/version",
        "x/data/12",
        "x/constants/0",
        "x/code/__torch__/m.py",
        "x/.storage_alignment",
    ] {
        assert!(torch_record_name(name.as_bytes()), "{name}");
    }
    for name in [
        "data.pkl",
        "/data.pkl",
        "x/data/",
        "x/data/a1",
        "x/readme.txt",
        "x/code/main.py",
        "x/y/data.pkl",
    ] {
        assert!(!torch_record_name(name.as_bytes()), "{name}");
    }
}
