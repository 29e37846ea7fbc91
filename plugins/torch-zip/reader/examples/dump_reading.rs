//! Prints everything this plugin hands the host for each file, under `socair-wo/1` (the
//! default) or the version `--grammar N` names: both readers' rows (findings included),
//! tensor descriptors, unread tensors and what a conversion does not carry. Used to prove
//! that `/1` gives every committed fixture the same reading before and after `/2` was added
//! (run it at both commits over the same files and compare the outputs byte for byte).
//!
//!     cargo run -p socair-plugin-torch-zip --example dump_reading -- [--grammar 2] FILE...

use socair_torch_zip::checkpoint::AnalyzeOptions;
use socair_torch_zip::{legacy, opened_file};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = AnalyzeOptions::default();
    if args.first().map(String::as_str) == Some("--grammar") {
        let v = args.get(1).expect("--grammar N").clone();
        options.grammar = socair_torch_zip::Grammar::from_version(&v).expect("a version");
        args.drain(..2);
    }
    for path in args {
        let data = std::fs::read(&path).expect("read");
        println!("== {path}");
        let as_zip = legacy::analyze_as_zip(&data[..], &options);
        println!("-- zip reader\n{:#?}", opened_file(&as_zip, false));
        let as_legacy = legacy::analyze(&data[..], &options);
        println!("-- legacy reader\n{:#?}", opened_file(&as_legacy, false));
    }
}
