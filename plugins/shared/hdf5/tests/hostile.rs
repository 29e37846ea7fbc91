//! The reader on files h5py wrote (fixtures/hdf5/, by fixtures/hdf5/make_fixtures.py, h5py
//! 3.16) and on every truncation and many byte flips of them: each read returns a file or a
//! refusal naming a place, never a panic, and reads a bounded amount of metadata.

use socair_hdf5::{read, Kind, Options, Severity, Storage};

const LAYOUTS: &[u8] = include_bytes!("../../../../fixtures/hdf5/valid/layouts.h5");
const LATEST: &[u8] = include_bytes!("../../../../fixtures/hdf5/valid/latest.h5");
const USERBLOCK: &[u8] = include_bytes!("../../../../fixtures/hdf5/valid/userblock.h5");
const KERAS_WEIGHTS: &[u8] =
    include_bytes!("../../../../fixtures/keras/legit/tf-keras-sequential.weights.h5");
const EXTERNAL: &[u8] = include_bytes!("../../../../fixtures/hdf5/hostile/external-storage.h5");

/// One small dataset per chunk index of layout versions 4 and 5 (single chunk, fixed array,
/// extensible array, version 2 B-tree), unfiltered at libver v110 and deflated, shuffled and
/// Fletcher-32-checked at v200; an implicit index; chunks never written (fixtures/hdf5/chunked/,
/// by fixtures/hdf5/make_chunked.py, h5py 3.16 with HDF5 2.0).
const SMALL_V110: &[u8] = include_bytes!("../../../../fixtures/hdf5/chunked/small-v110.h5");
const SMALL_V200: &[u8] = include_bytes!("../../../../fixtures/hdf5/chunked/small-v200.h5");
const IMPLICIT: &[u8] = include_bytes!("../../../../fixtures/hdf5/chunked/implicit.h5");
const UNWRITTEN: &[u8] = include_bytes!("../../../../fixtures/hdf5/chunked/unwritten.h5");
const BAD_CHECKSUM: &[u8] = include_bytes!("../../../../fixtures/hdf5/chunked/bad-checksum.h5");

/// Attributes and links in dense storage, and groups 70 deep (fixtures/hdf5/features/, by
/// fixtures/hdf5/make_features.py).
const DENSE_ATTRIBUTES: &[u8] =
    include_bytes!("../../../../fixtures/hdf5/features/dense-attributes.h5");
const DENSE_LINKS: &[u8] = include_bytes!("../../../../fixtures/hdf5/features/dense-links.h5");
const DEEP: &[u8] = include_bytes!("../../../../fixtures/hdf5/features/deep.h5");

/// A dense group (a fractal heap whose root is an indirect block) with an external link
/// (fixtures/hdf5/dense-links/, issue 40): its heap is read by `fheap`.
const DENSE: &[u8] = include_bytes!("../../../../fixtures/hdf5/dense-links/dense-many-external.h5");
const DENSE_ORDER: &[u8] =
    include_bytes!("../../../../fixtures/hdf5/dense-links/dense-track-order.h5");

/// A shared-message table indexed by B-trees, array elements, external raw storage and a
/// virtual dataset (fixtures/hdf5/shared/, raw-storage/, virtual/, by make_shared.py).
const SHARED_BTREE: &[u8] = include_bytes!("../../../../fixtures/hdf5/shared/shared-btree.h5");
const ARRAYS: &[u8] = include_bytes!("../../../../fixtures/hdf5/shared/array-elements.h5");
const RAW_STORAGE: &[u8] = include_bytes!("../../../../fixtures/hdf5/raw-storage/inside/model.h5");
const VIRTUAL: &[u8] = include_bytes!("../../../../fixtures/hdf5/virtual/inside/model.h5");

/// The files whose every dataset the reader reaches.
const VALID: &[&[u8]] = &[
    LAYOUTS,
    LATEST,
    USERBLOCK,
    KERAS_WEIGHTS,
    EXTERNAL,
    SMALL_V110,
    SMALL_V200,
    IMPLICIT,
    UNWRITTEN,
];

const ALL: &[&[u8]] = &[
    LAYOUTS,
    LATEST,
    USERBLOCK,
    KERAS_WEIGHTS,
    EXTERNAL,
    DENSE,
    DENSE_ORDER,
    SMALL_V110,
    SMALL_V200,
    IMPLICIT,
    UNWRITTEN,
    BAD_CHECKSUM,
    DENSE_ATTRIBUTES,
    DENSE_LINKS,
    DEEP,
    SHARED_BTREE,
    ARRAYS,
    RAW_STORAGE,
    VIRTUAL,
];

fn opts() -> Options {
    Options {
        read_data: true,
        ..Default::default()
    }
}

#[test]
fn the_valid_files_read_whole() {
    for bytes in VALID {
        let f = read(*bytes, opts()).unwrap();
        assert!(f.objects.iter().any(|o| matches!(o.kind, Kind::Dataset(_))));
        assert!(f.metadata_read <= 8 * bytes.len() as u64 + (1 << 20));
    }
    let f = read(LAYOUTS, opts()).unwrap();
    let tiles = f.object("tiles").unwrap();
    let Kind::Dataset(d) = &tiles.kind else {
        panic!()
    };
    let Storage::Inline(b) = &d.storage else {
        panic!("{:?}", d.storage)
    };
    // np.arange(35, dtype="<i4").reshape(5, 7), written in chunks of (2, 3): row-major again.
    let values: Vec<i32> = b
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, (0..35).collect::<Vec<_>>());
    assert_eq!(read(USERBLOCK, opts()).unwrap().superblock_at, 512);
    assert_eq!(read(LATEST, opts()).unwrap().superblock_version, 3);
    let ext = read(EXTERNAL, opts()).unwrap();
    assert_eq!(ext.worst(), Some(Severity::Fail));
    for dense in [DENSE, DENSE_ORDER] {
        let f = read(dense, opts()).unwrap();
        assert_eq!(f.worst(), Some(Severity::Fail), "{:?}", f.findings);
        assert!(f.metadata_read <= 8 * dense.len() as u64 + (1 << 20));
    }
}

#[test]
fn every_truncation_is_refused_or_read_without_panic() {
    for bytes in ALL {
        for cut in 0..bytes.len() {
            let part = &bytes[..cut];
            if let Ok(f) = read(part, opts()) {
                // A file cut short of its end-of-file address is refused by the library.
                panic!(
                    "a file cut at {cut} of {} was read: {:?}",
                    bytes.len(),
                    f.superblock_at
                );
            }
        }
    }
}

#[test]
fn byte_flips_never_panic_and_stay_bounded() {
    // A deterministic walk over positions and values (xorshift), as a fuzzer would.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for bytes in ALL {
        let rounds: usize = std::env::var("FLIPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1500);
        for _ in 0..rounds {
            let mut m = bytes.to_vec();
            for _ in 0..(next() % 4 + 1) {
                let at = (next() % m.len() as u64) as usize;
                m[at] = next() as u8;
            }
            if let Ok(f) = read(&m[..], opts()) {
                assert!(f.metadata_read <= 8 * m.len() as u64 + (1 << 20));
                let inline: usize = f
                    .objects
                    .iter()
                    .filter_map(|o| match &o.kind {
                        Kind::Dataset(d) => match &d.storage {
                            Storage::Inline(b) => Some(b.len()),
                            _ => None,
                        },
                        _ => None,
                    })
                    .sum();
                assert!(inline as u64 <= socair_hdf5::walk::inline_budget(m.len() as u64));
            }
        }
    }
}

/// What `cargo fuzz run hdf5_reader` found (fixtures/hdf5/hostile/fuzz-header-size.h5): a
/// version 2 object header whose first block claims a size of nearly 2^64 bytes, which
/// overflowed the header's length: refused, naming the header.
#[test]
fn a_header_of_an_impossible_size_is_refused() {
    let bytes = include_bytes!("../../../../fixtures/hdf5/hostile/fuzz-header-size.h5");
    assert!(read(&bytes[..], opts()).is_err());
}

#[test]
fn a_b_tree_whose_child_is_itself_is_refused() {
    let mut m = LAYOUTS.to_vec();
    let tree = m.windows(4).position(|w| w == b"TREE").unwrap();
    m[tree + 5] = 1; // level 1: its children are nodes
    m[tree + 32..tree + 40].copy_from_slice(&(tree as u64).to_le_bytes());
    let e = read(&m[..], opts()).unwrap_err();
    assert!(
        e.reason.contains("level") || e.reason.contains("twice"),
        "{e}"
    );
}

#[test]
fn a_bad_checksum_on_a_version_2_header_is_refused() {
    let mut m = LATEST.to_vec();
    let ohdr = m.windows(4).rposition(|w| w == b"OHDR").unwrap();
    m[ohdr + 8] ^= 0x40;
    let e = read(&m[..], opts()).unwrap_err();
    assert!(e.reason.contains("checksum"), "{e}");
}

/// The datasets of `bytes`, by path: their storage, read with data.
fn storages(bytes: &[u8]) -> Vec<(String, Storage)> {
    read(bytes, opts())
        .unwrap()
        .objects
        .into_iter()
        .filter_map(|o| match o.kind {
            Kind::Dataset(d) => Some((o.path, d.storage)),
            _ => None,
        })
        .collect()
}

#[test]
fn every_chunk_index_and_filter_is_read_to_its_values() {
    for bytes in [SMALL_V110, SMALL_V200] {
        let f = read(bytes, opts()).unwrap();
        assert_eq!(f.worst(), None, "{:?}", f.findings);
        let all = storages(bytes);
        let get = |name: &str| all.iter().find(|(p, _)| p == name).map(|(_, s)| s).unwrap();
        // np.arange(16, dtype="<i2").reshape(4, 4) in chunks of (2, 2): tiles, assembled.
        let Storage::Inline(b) = get("farray") else {
            panic!("{:?}", get("farray"))
        };
        let v: Vec<i16> = b
            .chunks(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(v, (0..16).collect::<Vec<_>>());
        // np.arange(12, dtype="<u1").reshape(3, 4) in chunks of (2, 2), indexed by a
        // version 2 B-tree (two unlimited dimensions), the last row of chunks past the edge.
        assert_eq!(get("btree2"), &Storage::Inline((0..12).collect()));
    }
    // np.arange(7, dtype="<f8") in chunks of 3 under an extensible array: unfiltered, the
    // chunks are ranges of the file.
    let all = storages(SMALL_V110);
    let Some((_, Storage::Ranges(r))) = all.iter().find(|(p, _)| p == "earray") else {
        panic!("{all:?}")
    };
    let bytes: Vec<u8> = r
        .iter()
        .flat_map(|&(at, n)| SMALL_V110[at as usize..(at + n) as usize].to_vec())
        .collect();
    let want: Vec<u8> = (0..7).flat_map(|i| f64::from(i).to_le_bytes()).collect();
    assert_eq!(bytes, want);
}

#[test]
fn unwritten_chunks_read_as_the_fill_value() {
    let all = storages(UNWRITTEN);
    // An 8 x 8 float32 dataset with fill value 1.5, only its top-left 4 x 4 chunk written 2.0.
    let Some((_, Storage::Inline(b))) = all.iter().find(|(p, _)| p == "sparse") else {
        panic!("{all:?}")
    };
    let v: Vec<f32> = b
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for (i, x) in v.iter().enumerate() {
        let want = if i / 8 < 4 && i % 8 < 4 { 2.0 } else { 1.5 };
        assert_eq!(*x, want, "element {i}");
    }
    // Never written at all: every element its fill value, 7.
    let Some((_, Storage::Inline(b))) = all.iter().find(|(p, _)| p == "never") else {
        panic!("{all:?}")
    };
    assert_eq!(
        b,
        &[7i32; 6]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_wrong_fletcher32_checksum_fails_as_h5py_refuses_it() {
    let f = read(BAD_CHECKSUM, opts()).unwrap();
    assert_eq!(f.worst(), Some(Severity::Fail));
    assert!(
        f.findings
            .shown
            .iter()
            .any(|x| x.reason.contains("Fletcher-32")),
        "{:?}",
        f.findings
    );
}

#[test]
fn an_altered_chunk_index_block_fails_the_dataset_not_the_file() {
    for sig in [&b"FAHD"[..], b"FADB", b"EAHD", b"EAIB", b"BTHD", b"BTLF"] {
        let mut m = SMALL_V110.to_vec();
        let at = m
            .windows(4)
            .position(|w| w == sig)
            .unwrap_or_else(|| panic!("no {sig:?}"));
        m[at + 6] ^= 0x01;
        let f = read(&m[..], opts()).unwrap();
        assert_eq!(f.worst(), Some(Severity::Fail), "{sig:?}: {:?}", f.findings);
        assert!(
            f.findings
                .shown
                .iter()
                .any(|x| x.reason.contains("checksum") || x.reason.contains("version")),
            "{sig:?}: {:?}",
            f.findings
        );
    }
}

#[test]
fn dense_attributes_and_links_read_as_h5py_reads_them() {
    use socair_hdf5::Value;
    let f = read(DENSE_ATTRIBUTES, opts()).unwrap();
    assert_eq!(f.worst(), None, "{:?}", f.findings);
    let x = f.object("x").unwrap();
    // x.attrs[f"a{i:02d}"] = np.float32(i) / 4 for i in 0..30, and a huge heap object.
    assert_eq!(x.attributes.len(), 31);
    assert_eq!(x.attribute("a29"), Some(&Value::Floats(vec![7.25])));
    let Some(Value::Floats(huge)) = x.attribute("huge") else {
        panic!("{:?}", x.attribute("huge"))
    };
    assert_eq!(huge.len(), 20_000);
    assert_eq!(huge[19_999], 19_999.0);
    let root = f.object("").unwrap();
    assert_eq!(
        root.attribute("s11"),
        Some(&Value::Strings(vec!["text 11".into()]))
    );
    let f = read(DENSE_LINKS, opts()).unwrap();
    assert_eq!(f.worst(), None, "{:?}", f.findings);
    let datasets = f
        .objects
        .iter()
        .filter(|o| matches!(o.kind, Kind::Dataset(_)))
        .count();
    assert_eq!(datasets, 40);
    let f = read(DEEP, opts()).unwrap();
    assert!(f.object(&["g"; 70].join("/")).is_some());
}

#[test]
fn index_headers_altered_with_their_checksums_fixed_never_panic() {
    // Random values in the fields of every chunk index header (fixed and extensible arrays,
    // version 2 B-trees), each header's checksum recomputed so that the read gets past it to
    // the counts, sizes and addresses themselves.
    let mut state = 0x51ce_57a1_c0de_f00du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // Signature, and the header's length with its checksum, for 8-byte offsets and lengths.
    let headers: [(&[u8], usize); 3] = [(b"FAHD", 28), (b"EAHD", 72), (b"BTHD", 38)];
    let mut clean = 0;
    for bytes in [SMALL_V110, SMALL_V200] {
        for (sig, len) in headers {
            let at = bytes.windows(4).position(|w| w == sig).unwrap();
            for _ in 0..3000 {
                let mut m = bytes.to_vec();
                for _ in 0..(next() % 3 + 1) {
                    let k = at + 4 + (next() as usize % (len - 8));
                    m[k] = next() as u8;
                }
                let sum = socair_hdf5::io::lookup3(&m[at..at + len - 4]);
                m[at + len - 4..at + len].copy_from_slice(&sum.to_le_bytes());
                if let Ok(f) = read(&m[..], opts()) {
                    assert!(f.metadata_read <= 8 * m.len() as u64 + (1 << 20));
                    // The checksum held: the altered header itself was read.
                    clean += usize::from(
                        !f.findings
                            .shown
                            .iter()
                            .any(|x| x.reason.contains("checksum")),
                    );
                }
            }
        }
    }
    assert!(clean > 1000, "{clean}");
}
