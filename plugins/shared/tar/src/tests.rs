use super::header::nti;
use super::py::py_int_str;
use super::*;

/// A ustar header for `name` of `kind` and `size`, with its checksum.
fn header(name: &[u8], kind: u8, size: u64) -> Vec<u8> {
    let mut h = vec![0u8; 512];
    h[..name.len()].copy_from_slice(name);
    h[100..108].copy_from_slice(b"0000644\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[156] = kind;
    h[257..265].copy_from_slice(b"ustar\x0000");
    seal(&mut h);
    h
}

fn seal(h: &mut [u8]) {
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h[..512].iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

fn every(bytes: &[u8]) -> Vec<String> {
    PROFILES
        .iter()
        .map(|p| open_outcome(bytes, *p).kind().to_owned())
        .collect()
}

#[test]
fn a_plain_header_opens_and_a_pickle_does_not() {
    let mut tar = header(b"storages", b'0', 3);
    tar.extend_from_slice(&[0u8; 1024]);
    assert_eq!(every(&tar), vec!["opened"; 5]);
    assert!(matches!(
        cpython_tarfile_opens(&tar),
        TarVerdict::Tar { .. }
    ));
    let pickle = include_bytes!("../../../../fixtures/torch/legacy/state-dict.pt");
    assert_eq!(cpython_tarfile_opens(pickle), TarVerdict::NotTar);
    assert_eq!(cpython_tarfile_opens(b""), TarVerdict::NotTar);
    // An all-NUL first block is an empty archive, which opens.
    assert_eq!(every(&[0u8; 512]), vec!["opened"; 5]);
}

#[test]
fn numeric_fields_are_read_as_python_reads_them() {
    assert_eq!(nti(b"0000644\0").unwrap(), 0o644);
    assert_eq!(nti(b"\x1c 0o_17 \x1f").unwrap(), 0o17);
    assert_eq!(nti(b"-7").unwrap(), -7);
    assert_eq!(nti(b"\0garbage").unwrap(), 0);
    assert!(nti(b"0o").is_err());
    assert!(nti(b"8").is_err());
    assert!(nti(b"1__2").is_err());
    assert!(nti(b"1_").is_err());
    assert_eq!(nti(b"\x80\0\0\0\0\0\x01\x00").unwrap(), 256);
    assert_eq!(nti(b"\xff\xff\xff\xff\xff\xff\xff\xff").unwrap(), -1);
    let p = PROFILES[1];
    assert_eq!(py_int_str("\u{0665}\u{00a0}".as_bytes(), p), Some(5));
    assert_eq!(py_int_str(b"\x1c5", p), None);
    assert_eq!(py_int_str(b" 1_0 ", p), Some(10));
    assert_eq!(py_int_str(&[b'1'; 4301], p), None);
    assert!(py_int_str(&[b'1'; 4301], PROFILES[0]).is_some());
}

#[test]
fn a_negative_size_splits_the_versions() {
    // A GNU long name whose size is -1024 (base-256): old Pythons read to the end of the
    // file and then find no header (SubsequentHeaderError -> ReadError); newer ones refuse
    // the offset at once (ReadError at offset 0). A regular file with that size opens in
    // old Pythons only.
    let mut h = header(b"x", b'0', 0);
    h[124..136].copy_from_slice(&[
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc, 0x00,
    ]);
    seal(&mut h);
    assert_eq!(
        every(&h),
        vec!["opened", "opened", "opened", "ReadError", "ReadError"]
    );
    assert!(matches!(cpython_tarfile_opens(&h), TarVerdict::Tar { .. }));
}

#[test]
fn pax_records_that_crash_python_are_raises() {
    let records = b"21 GNU.sparse.size=x\n";
    let mut pax = header(b"././@PaxHeader", b'x', records.len() as u64);
    let mut body = records.to_vec();
    body.resize(512, 0);
    pax.extend_from_slice(&body);
    pax.extend_from_slice(&header(b"file", b'0', 0));
    assert_eq!(every(&pax), vec!["ValueError"; 5]);
    assert!(matches!(
        cpython_tarfile_opens(&pax),
        TarVerdict::Raises { .. }
    ));
}

#[test]
fn deep_chains_stop_at_the_bound() {
    let mut chain = Vec::new();
    for _ in 0..MAX_DEPTH + 5 {
        chain.extend_from_slice(&header(b"././@LongLink", b'L', 0));
    }
    assert_eq!(every(&chain), vec!["RecursionError"; 5]);
}
