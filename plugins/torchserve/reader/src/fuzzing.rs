//! The property the fuzz target `torchserve_reader` checks on arbitrary bytes: reading never
//! panics, always reports the structure and archive rows, and every finding names its place.

use socair_torch_zip::checkpoint::AnalyzeOptions;
use socair_torch_zip::Grammar;

/// Reads `data` as a `.mar` (and detects it) and checks the report's shape.
pub fn check_reader(data: &[u8]) {
    let head = &data[..data.len().min(4096)];
    let _ = crate::detect::looks_like_mar(head, data.len() as u64);
    let _ = crate::detect::manifest_in_central_directory(data);
    let options = AnalyzeOptions {
        grammar: Grammar::NEWEST,
        ..AnalyzeOptions::default()
    };
    let opened = crate::read(data, &options);
    assert!(!opened.rows.is_empty(), "no rows");
    for row in opened.rows.iter() {
        for f in row.findings.iter() {
            assert!(
                !f.place.is_empty(),
                "a finding without a place in {}",
                row.check
            );
        }
    }
}
