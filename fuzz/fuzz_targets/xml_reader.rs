//! See `socair_xml::fuzzing::check_reader` (OpenVINO IR and PMML, plugins/xml).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_xml::fuzzing::check_reader(data);
});
