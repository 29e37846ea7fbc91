//! See `socair_xml::fuzzing::check_reader` (OpenVINO IR, PMML and OpenCV FileStorage XML, plugins/xml).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    socair_xml::fuzzing::check_reader(data);
});
