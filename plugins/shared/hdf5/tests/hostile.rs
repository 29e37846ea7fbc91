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

/// A dense group (a fractal heap whose root is an indirect block) with an external link
/// (fixtures/hdf5/dense-links/, issue 40): its heap is read by `fheap`.
const DENSE: &[u8] = include_bytes!("../../../../fixtures/hdf5/dense-links/dense-many-external.h5");
const DENSE_ORDER: &[u8] =
    include_bytes!("../../../../fixtures/hdf5/dense-links/dense-track-order.h5");

/// The files whose every dataset the reader reaches.
const VALID: &[&[u8]] = &[LAYOUTS, LATEST, USERBLOCK, KERAS_WEIGHTS, EXTERNAL];

const ALL: &[&[u8]] = &[
    LAYOUTS,
    LATEST,
    USERBLOCK,
    KERAS_WEIGHTS,
    EXTERNAL,
    DENSE,
    DENSE_ORDER,
];

fn opts() -> Options {
    Options { read_data: true }
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
                assert!(inline as u64 <= 2 * m.len() as u64 + (1 << 20));
            }
        }
    }
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
