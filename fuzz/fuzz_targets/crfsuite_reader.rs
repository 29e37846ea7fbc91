//! See `socair_crfsuite::fuzzing::check_reader` (CRFsuite models, plugins/crfsuite).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_crfsuite::fuzzing::check_reader(data);
});
