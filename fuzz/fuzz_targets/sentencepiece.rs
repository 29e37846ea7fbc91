//! The SentencePiece model check (`socair_plugin_kit::sentencepiece::read`, which a model
//! directory's `tokenizer.model` goes through) on arbitrary bytes: it returns (no panic, one
//! pass without recursion), and what it says is consistent: a model has at least one piece,
//! and a refusal's offset lies inside the input.
#![no_main]

use socair_plugin_kit::sentencepiece;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    match sentencepiece::read(data) {
        Ok(m) => assert!(m.pieces >= 1),
        Err(e) => assert!(e.offset <= data.len()),
    }
});
