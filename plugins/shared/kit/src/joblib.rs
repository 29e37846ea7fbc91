//! Which uncompressed pickles are joblib files: the one rule the joblib plugin claims by and
//! torch-zip's legacy reader declines by (`plugins/joblib/reader/src/claim.rs`), so that the host
//! never reads one file as both (a polyglot) and no pickle is left unread by both.
//!
//! `joblib.dump` (joblib 1.5.3 `numpy_pickle.py`, `NumpyPickler.save`) writes every NumPy
//! array as a `joblib.numpy_pickle.NumpyArrayWrapper` global followed by the array's raw bytes,
//! which a plain unpickler reads as malformed opcodes; joblib < 0.10 wrote
//! `joblib.numpy_pickle.NDArrayWrapper`; the joblib scikit-learn <= 0.20 bundled named its
//! module `sklearn.externals.joblib.numpy_pickle`, which holds [`MODULE`] too (the pickle
//! machine's `globals::profiles::joblib_wrapper` lists every such name). A pickle whose first
//! bytes name the module and one of
//! the wrappers is read as `joblib.load` reads it. A joblib file whose first array comes after
//! the first bytes (a pickle of many Python values before any array) is left to the reader of
//! plain pickles, which judges it without joblib's array bytes.

/// The module joblib's array wrappers live in.
pub const MODULE: &[u8] = b"joblib.numpy_pickle";
/// The wrappers, joblib >= 0.10 and < 0.10.
pub const WRAPPERS: [&[u8]; 2] = [b"NumpyArrayWrapper", b"NDArrayWrapper"];

/// Whether `head` names joblib's array wrapper module and one of its wrappers.
pub fn names_array_wrapper(head: &[u8]) -> bool {
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    has(MODULE) && WRAPPERS.iter().any(|w| has(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_names_are_needed() {
        assert!(names_array_wrapper(
            b"\x80\x04\x8c\x13joblib.numpy_pickle\x94\x8c\x11NumpyArrayWrapper\x94\x93"
        ));
        assert!(names_array_wrapper(
            b"\x80\x02cjoblib.numpy_pickle\nNDArrayWrapper\n"
        ));
        assert!(!names_array_wrapper(
            b"\x80\x04\x8c\x13joblib.numpy_pickle\x94"
        ));
        assert!(!names_array_wrapper(b"\x80\x04NumpyArrayWrapper"));
        // scikit-learn <= 0.20's bundled joblib (its `test_old_pickle` bytes).
        assert!(names_array_wrapper(
            b"\x80\x02csklearn.externals.joblib.numpy_pickle\nNumpyArrayWrapper\nq\x00"
        ));
    }
}
