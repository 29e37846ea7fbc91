//! The reader on files h5py 3.16 (HDF5 2.0) wrote with a shared-message table, element kinds
//! beyond plain numbers, and external raw storage (fixtures/hdf5/shared/ and
//! fixtures/hdf5/raw-storage/, by fixtures/hdf5/make_shared.py): what it reads of them is
//! what h5py reads (the values below are the generator's).

use socair_hdf5::{read, File, Kind, Options, Severity, Storage, Type, Value};

const SHARED_LIST: &[u8] = include_bytes!("../../../../fixtures/hdf5/shared/shared-list.h5");
const SHARED_LIST_LATEST: &[u8] =
    include_bytes!("../../../../fixtures/hdf5/shared/shared-list-latest.h5");
const SHARED_BTREE: &[u8] = include_bytes!("../../../../fixtures/hdf5/shared/shared-btree.h5");
const NESTED: &[u8] = include_bytes!("../../../../fixtures/hdf5/shared/nested-compound.h5");
const ARRAYS: &[u8] = include_bytes!("../../../../fixtures/hdf5/shared/array-elements.h5");
const RAW_INSIDE: &[u8] = include_bytes!("../../../../fixtures/hdf5/raw-storage/inside/model.h5");
const VIRTUAL: &[u8] = include_bytes!("../../../../fixtures/hdf5/virtual/inside/model.h5");
const RAW_OUTSIDE: &[u8] = include_bytes!("../../../../fixtures/hdf5/raw-storage/outside/model.h5");

fn full(bytes: &[u8]) -> File {
    read(
        bytes,
        Options {
            read_data: true,
            ..Default::default()
        },
    )
    .unwrap()
}

fn attribute<'f>(f: &'f File, path: &str, name: &str) -> &'f Value {
    let o = f.objects.iter().find(|o| o.path == path).unwrap();
    &o.attributes.iter().find(|a| a.name == name).unwrap().value
}

fn dataset<'f>(f: &'f File, path: &str) -> &'f socair_hdf5::Dataset {
    let o = f.objects.iter().find(|o| o.path == path).unwrap();
    let Kind::Dataset(d) = &o.kind else {
        panic!("{path} is no dataset")
    };
    d
}

#[test]
fn shared_messages_are_read_from_the_table_s_heap() {
    for bytes in [SHARED_LIST, SHARED_LIST_LATEST] {
        let f = full(bytes);
        assert!(f.findings.shown.is_empty(), "{:?}", f.findings.shown);
        for i in 0..6 {
            let d = dataset(&f, &format!("d{i}"));
            assert_eq!(
                d.ty,
                Type::Float {
                    size: 4,
                    order: socair_hdf5::Order::Little
                }
            );
            assert_eq!(d.dims, [20]);
            let Storage::Inline(b) = &d.storage else {
                panic!("d{i}: {:?}", d.storage)
            };
            let want: Vec<u8> = (0..20)
                .flat_map(|k| ((k * i) as f32).to_le_bytes())
                .collect();
            assert_eq!(b, &want);
            let units = attribute(&f, &format!("d{i}"), "units");
            assert_eq!(units, &Value::Strings(vec!["m".repeat(40)]));
            let scale = attribute(&f, &format!("d{i}"), "scale");
            assert_eq!(scale, &Value::Floats(vec![0.0, 1.0, 2.0, 3.0]));
        }
    }
}

#[test]
fn shared_messages_indexed_by_b_trees_and_dense_attributes_read() {
    let f = full(SHARED_BTREE);
    assert!(f.findings.shown.is_empty(), "{:?}", f.findings.shown);
    for i in 0..24u64 {
        let path = format!("d{i:02}");
        let d = dataset(&f, &path);
        assert_eq!(d.dims, [6 + i]);
        assert!(matches!(d.storage, Storage::Inline(_)), "{path}");
        let n = i % 4;
        let want = Value::Ints((0..=n as i64).collect());
        assert_eq!(attribute(&f, &path, &format!("units{n}")), &want);
    }
    for i in 0..12 {
        let a = attribute(&f, "dense", &format!("a{i:02}"));
        assert_eq!(a, &Value::Floats(vec![f64::from(i)]));
    }
}

#[test]
fn nested_compounds_are_data_and_array_elements_tensors() {
    let f = full(NESTED);
    assert!(f.findings.shown.is_empty(), "{:?}", f.findings.shown);
    for path in ["nested", "records", "chunked"] {
        assert!(
            matches!(dataset(&f, path).storage, Storage::Data(_)),
            "{path}"
        );
    }
    let f = full(ARRAYS);
    assert!(f.findings.shown.is_empty(), "{:?}", f.findings.shown);
    let d = dataset(&f, "i8_be");
    assert_eq!(d.ty.tensor_dims(), [3]);
    assert_eq!(d.ty.tensor_element().map(|e| e.0), Some("I64"));
    let d = dataset(&f, "chunked");
    let Storage::Inline(b) = &d.storage else {
        panic!("{:?}", d.storage)
    };
    let want: Vec<u8> = (0..40i16).flat_map(i16::to_le_bytes).collect();
    assert_eq!(b, &want);
    assert!(matches!(dataset(&f, "strings").storage, Storage::Data(_)));
}

#[test]
fn external_raw_storage_names_its_file_and_ranges() {
    let f = full(RAW_INSIDE);
    let d = dataset(&f, "dense/kernel");
    assert_eq!(
        d.storage,
        Storage::Elsewhere {
            file: "weights.bin".into(),
            ranges: vec![(0, 16), (32, 16)],
        }
    );
    let about: Vec<_> = f
        .findings
        .shown
        .iter()
        .filter(|x| x.severity == Severity::Fail)
        .map(|x| x.file.as_deref())
        .collect();
    assert_eq!(about, [Some("weights.bin")]);
    let f = full(RAW_OUTSIDE);
    assert!(f
        .findings
        .shown
        .iter()
        .any(|x| x.severity == Severity::Fail && x.file.as_deref() == Some("../weights.bin")));
}

#[test]
fn a_virtual_dataset_names_the_files_it_maps() {
    let f = full(VIRTUAL);
    assert!(matches!(dataset(&f, "stacked").storage, Storage::Data(_)));
    let about: Vec<_> = f
        .findings
        .shown
        .iter()
        .map(|x| (x.severity, x.file.as_deref()))
        .collect();
    // The source in this file (`.`) opens nothing; parts.h5 is another file.
    assert_eq!(about, [(Severity::Fail, Some("parts.h5"))]);
}
