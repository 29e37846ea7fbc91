//! The property the fuzz target checks, shared with the test that replays the fixtures: every
//! reader on arbitrary bytes returns (never panics), and every tensor it locates lies inside
//! the file and holds exactly its shape's bytes.

use socair_plugin_api::OpenedFile;

/// Every reader of the plugin on `data`.
pub fn check_readers(data: &[u8]) {
    let len = data.len() as u64;
    let head = &data[..data.len().min(4096)];
    let _ = crate::program::looks_like_program(head, len);
    let _ = crate::pir::looks_like_pir(head, len);
    let _ = crate::params::looks_like_params(head, len);
    let mut read = crate::params::slice_reader(data);
    for opened in [
        crate::program::read(data),
        crate::pir::read(data),
        crate::params::read(len, &mut read, None),
    ] {
        check(&opened, len);
    }
}

fn check(opened: &OpenedFile, len: u64) {
    for t in opened.tensors.iter() {
        let numel: u64 = t.shape.iter().product();
        let width = crate::params::dtype(match t.dtype.as_str() {
            "BOOL" => 0,
            "INT16" => 1,
            "INT32" => 2,
            "INT64" => 3,
            "FP16" => 4,
            "FP32" => 5,
            "FP64" => 6,
            "UINT8" => 20,
            "INT8" => 21,
            "BF16" => 22,
            "COMPLEX64" => 23,
            "COMPLEX128" => 24,
            "FP8_E4M3FN" => 32,
            "FP8_E5M2" => 33,
            "UINT16" => 36,
            "UINT32" => 37,
            "UINT64" => 38,
            other => panic!("dtype {other}"),
        })
        .map(|d| d.1)
        .unwrap();
        let total: u64 = t.ranges.iter().map(|r| r.len).sum();
        assert_eq!(total, numel * width, "{}", t.name);
        for r in t.ranges.iter() {
            assert!(r.offset + r.len <= len, "{} past the end", t.name);
        }
    }
}
