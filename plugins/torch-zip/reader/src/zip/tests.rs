//! The zip layer against archives written the way torch's writer writes them.
use super::bytes::*;
use super::*;
use socair_plugin_kit::zip::{CENTRAL_SIG, EOCD_SIG, LOCAL_SIG, ZIP64_EOCD_SIG, ZIP64_LOCATOR_SIG};

/// Writes an archive the way torch's writer does (flags 0x0808, data descriptors, a zip64
/// end record), with `local_zip64` as each local header's zip64 extra block: a function of
/// (size, header offset) giving the u64 values to put there, or none.
fn archive(
    records: &[(&str, &[u8])],
    local_zip64: impl Fn(u64, u64) -> Option<Vec<u64>>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in records {
        let at = out.len() as u64;
        let crc = crc32fast::hash(data);
        let extra: Vec<u8> = match local_zip64(data.len() as u64, at) {
            Some(values) => {
                let mut e = vec![1, 0];
                e.extend_from_slice(&((values.len() * 8) as u16).to_le_bytes());
                for v in values {
                    e.extend_from_slice(&v.to_le_bytes());
                }
                e
            }
            None => Vec::new(),
        };
        out.extend_from_slice(&LOCAL_SIG.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0x08, 0x08, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&[0; 12]); // crc and sizes deferred
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&extra);
        out.extend_from_slice(data);
        out.extend_from_slice(&DESCRIPTOR_SIG.to_le_bytes());
        out.extend_from_slice(&crc.to_le_bytes());
        if extra.is_empty() {
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        } else {
            out.extend_from_slice(&(data.len() as u64).to_le_bytes());
            out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        }
        central.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
        central.extend_from_slice(&[0, 0, 0, 0, 0x08, 0x08, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 8]); // extra, comment, disk, internal
        central.extend_from_slice(&[0; 4]); // external
        central.extend_from_slice(&(at as u32).to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_at = out.len() as u64;
    out.extend_from_slice(&central);
    let z_at = out.len() as u64;
    let n = records.len() as u64;
    out.extend_from_slice(&ZIP64_EOCD_SIG.to_le_bytes());
    out.extend_from_slice(&44u64.to_le_bytes());
    out.extend_from_slice(&[0; 4 + 8]);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(central.len() as u64).to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&ZIP64_LOCATOR_SIG.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&z_at.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&EOCD_SIG.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&(cd_at as u32).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

const RECORDS: &[(&str, &[u8])] = &[("a/data.pkl", b"\x80\x02}."), ("a/data/0", b"hello")];

#[test]
fn names_one_to_miniz_are_refused_and_found_as_miniz_finds_them() {
    let both = archive(
        &[("a/data.pkl", b"\x80\x02}."), ("a/DATA.pkl", b"x")],
        |_, _| None,
    );
    let err = read_archive(&both[..]).unwrap_err().to_string();
    assert!(err.contains("ignoring ASCII case"), "{err}");
    let upper = archive(&[("a/DATA.PKL", b"\x80\x02}.")], |_, _| None);
    let a = read_archive(&upper[..]).unwrap();
    let r = a.get("data.pkl").expect("found as torch finds it");
    assert_eq!(a.relative(r), "DATA.PKL");
    let long = format!("a/{}", "n".repeat(MAX_NAME_LEN));
    let err = read_archive(&archive(&[(long.as_str(), b"")], |_, _| None)[..])
        .unwrap_err()
        .to_string();
    assert!(err.contains("511"), "{err}");
}

#[test]
fn torch_layout_without_zip64_extras() {
    let bytes = archive(RECORDS, |_, _| None);
    let a = read_archive(&bytes[..]).unwrap();
    assert_eq!(a.prefix, "a");
    assert_eq!(a.records.len(), 2);
    for r in &a.records {
        verify_crc(&bytes[..], r).unwrap();
    }
}

#[test]
fn the_local_zip64_forms_torch_writes_past_4_gib() {
    // What torch 2.15 wrote for a 4.4 GB checkpoint: the big record's local block holds
    // [uncompressed size, 0]; records past 4 GiB hold [their own header offset].
    let sizes = archive(RECORDS, |size, _| Some(vec![size, 0]));
    assert!(read_archive(&sizes[..]).is_ok());
    let offsets = archive(RECORDS, |_, at| Some(vec![at]));
    assert!(read_archive(&offsets[..]).is_ok());
    // A value that is neither is a disagreement with the central directory.
    let lying = archive(RECORDS, |size, _| Some(vec![size + 1, 0]));
    let err = read_archive(&lying[..]).unwrap_err();
    assert!(
        err.to_string()
            .contains("neither the record's size nor its header's offset"),
        "{err}"
    );
}

const V3: Rules = Rules {
    torch_writer_options: true,
};

/// What torch 2.15 wrote, re-zipped by Python's zipfile with deflate
/// (fixtures/torch/make_weights_only_fixtures.py), and saved without CRC-32s.
const DEFLATED: &[u8] =
    include_bytes!("../../../../../fixtures/torch/weights-only/zip-deflated.pt");
const NO_CRC: &[u8] = include_bytes!("../../../../../fixtures/torch/weights-only/zip-no-crc32.pt");

#[test]
fn deflated_records_are_read_inflated_under_3_and_refused_before() {
    let err = read_archive(DEFLATED).unwrap_err().to_string();
    assert!(err.contains("is compressed (method 8)"), "{err}");
    let a = read_archive_with(DEFLATED, V3).unwrap();
    assert!(a.records.iter().all(|r| !r.stored()));
    for r in &a.records {
        assert_eq!(
            crc_state(DEFLATED, r).unwrap(),
            CrcState::Holds,
            "{}",
            r.name
        );
    }
    let pkl = a.get("data.pkl").unwrap();
    let bytes = read_bytes(DEFLATED, pkl, 1 << 20).unwrap();
    assert_eq!(bytes.len() as u64, pkl.len);
    assert_eq!(&bytes[..2], b"\x80\x02");
    assert_eq!(read_head(DEFLATED, pkl, 2).unwrap(), b"\x80\x02");
    // The limit asked for holds whatever the record declares.
    assert!(read_bytes(DEFLATED, pkl, 3).is_err());
    // A stream that does not give the declared size is refused.
    let mut cut = a.records[0].clone();
    cut.len += 1;
    assert!(crc_state(DEFLATED, &cut).is_err());
}

#[test]
fn crcs_recorded_as_zero_are_absent_not_wrong() {
    let a = read_archive_with(NO_CRC, V3).unwrap();
    for r in &a.records {
        assert!(
            matches!(crc_state(NO_CRC, r).unwrap(), CrcState::Absent { .. }),
            "{}",
            r.name
        );
        assert!(verify_crc(NO_CRC, r)
            .unwrap_err()
            .to_string()
            .contains("absent"));
    }
}

/// `bytes` with the end record's comment length set to `declared` and `comment` appended.
fn with_comment(bytes: &[u8], declared: u16, comment: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let n = out.len();
    out[n - 2..].copy_from_slice(&declared.to_le_bytes());
    out.extend_from_slice(comment);
    out
}

#[test]
fn a_comment_is_found_as_miniz_finds_it_under_3() {
    let bytes = archive(RECORDS, |_, _| None);
    let commented = with_comment(&bytes, 5, b"hello");
    let err = read_archive(&commented[..]).unwrap_err().to_string();
    assert!(err.contains("no end-of-central-directory record"), "{err}");
    let a = read_archive_with(&commented[..], V3).unwrap();
    assert_eq!(a.comment_len, 5);
    assert_eq!(a.records.len(), 2);
    // A length that does not reach the end of the file.
    let short = with_comment(&bytes, 3, b"hello");
    let err = read_archive_with(&short[..], V3).unwrap_err().to_string();
    assert!(
        err.contains("declares a 3-byte comment but 5 trailing bytes follow"),
        "{err}"
    );
    // A signature in the last 21 bytes: zipfile takes it and refuses, miniz skips it.
    let tail = with_comment(&bytes, 8, b"PK\x05\x06....");
    let err = read_archive_with(&tail[..], V3).unwrap_err().to_string();
    assert!(err.contains("lies in the last 8 bytes"), "{err}");
    // Without a comment nothing changes.
    assert_eq!(
        read_archive_with(&bytes[..], V3).unwrap(),
        read_archive(&bytes[..]).unwrap()
    );
}
