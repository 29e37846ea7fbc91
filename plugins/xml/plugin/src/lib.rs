//! The `xml` plugin: the library the host loads at run time. It declares what `socair-xml`
//! (plugins/xml/reader) reads, OpenVINO IR, PMML and OpenCV FileStorage XML, and holds nothing
//! else, so the readers are tested, fuzzed and linked by other plugins as a normal library.

use socair_xml::{OpenCvStorageReader, OpenVinoReader, PmmlReader};

socair_plugin_kit::export_plugin! {
    name: "xml",
    rule_sets: [],
    readers: [OpenVinoReader, PmmlReader, OpenCvStorageReader],
    writers: [],
    encoders: [],
}
