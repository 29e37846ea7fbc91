//! Reading ahead for a file in object storage (`src/ahead.rs`): over a source that takes hints,
//! the reader finds the same file, and nearly every read lands in a range hinted before it,
//! where read depth-first each object waited for the one before it.

use socair_hdf5::{read, Options, ReadAt};
use std::cell::{Cell, RefCell};

const MANY_GROUPS: &[u8] = include_bytes!("../../../../fixtures/hdf5/valid/many-groups.h5");
const LAYOUTS: &[u8] = include_bytes!("../../../../fixtures/hdf5/valid/layouts.h5");
const LATEST: &[u8] = include_bytes!("../../../../fixtures/hdf5/valid/latest.h5");
const KERAS_WEIGHTS: &[u8] =
    include_bytes!("../../../../fixtures/keras/legit/tf-keras-sequential.weights.h5");

/// Bytes served as a host serving an object in object storage would: a hint is taken
/// (`takes`), and a read that no earlier hint covered is counted as one that would wait.
struct Hinted<'a> {
    bytes: &'a [u8],
    takes: bool,
    hinted: RefCell<Vec<(u64, u64)>>,
    waited: Cell<usize>,
}

impl<'a> Hinted<'a> {
    fn new(bytes: &'a [u8], takes: bool) -> Self {
        Hinted {
            bytes,
            takes,
            hinted: RefCell::new(Vec::new()),
            waited: Cell::new(0),
        }
    }
}

impl ReadAt for Hinted<'_> {
    fn size(&self) -> u64 {
        self.bytes.size()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        let end = offset + buf.len() as u64;
        let covered = self
            .hinted
            .borrow()
            .iter()
            .any(|&(o, n)| o <= offset && end <= o + n);
        if !covered {
            self.waited.set(self.waited.get() + 1);
        }
        self.bytes.read_exact_at(offset, buf)
    }
    fn prefetch(&self, ranges: &[(u64, u64)]) -> bool {
        if self.takes {
            self.hinted.borrow_mut().extend_from_slice(ranges);
        }
        self.takes
    }
}

#[test]
fn hints_change_nothing_the_reader_finds() {
    for bytes in [MANY_GROUPS, LAYOUTS, LATEST, KERAS_WEIGHTS] {
        let plain = read(&Hinted::new(bytes, false), opts()).unwrap();
        let hinted = read(&Hinted::new(bytes, true), opts()).unwrap();
        assert_eq!(
            format!("{:?}", plain.objects),
            format!("{:?}", hinted.objects)
        );
        assert_eq!(
            format!("{:?}", plain.findings),
            format!("{:?}", hinted.findings)
        );
        // The walk's own budget counts its reads alone, not the reading ahead.
        assert_eq!(plain.metadata_read, hinted.metadata_read);
    }
}

#[test]
fn a_file_of_many_groups_is_read_from_hinted_ranges() {
    let plain = Hinted::new(MANY_GROUPS, false);
    read(&plain, Options::default()).unwrap();
    let hinted = Hinted::new(MANY_GROUPS, true);
    read(&hinted, Options::default()).unwrap();
    eprintln!(
        "reads waited for: {} without hints, {} with",
        plain.waited.get(),
        hinted.waited.get()
    );
    // 96 groups of one dataset each: without hints every read is one to wait for; with them,
    // the superblock, the root group's first reads and its heap's names are.
    assert!(plain.waited.get() > 500, "{}", plain.waited.get());
    assert!(hinted.waited.get() <= 8, "{}", hinted.waited.get());
}

/// Reading ahead changes nothing the reader finds on hostile bytes either: over truncations and
/// byte flips of files h5py wrote, a read with hints taken ends exactly as one without, the
/// same file or the same refusal, and never panics.
#[test]
fn hints_change_nothing_on_damaged_files() {
    let same = |bytes: &[u8]| {
        let plain = read(&Hinted::new(bytes, false), opts());
        let hinted = read(&Hinted::new(bytes, true), opts());
        assert_eq!(format!("{plain:?}"), format!("{hinted:?}"));
    };
    for original in [MANY_GROUPS, LAYOUTS, LATEST] {
        // The metadata h5py writes first and the datasets' headers among the data.
        let span = original.len().min(64 << 10);
        for cut in (0..span).step_by(97) {
            same(&original[..cut]);
        }
        let mut bytes = original.to_vec();
        for at in (0..span).step_by(61) {
            for flip in [0x01u8, 0xff] {
                bytes[at] ^= flip;
                same(&bytes);
                bytes[at] ^= flip;
            }
        }
    }
}

fn opts() -> Options {
    Options {
        read_data: true,
        ..Default::default()
    }
}
