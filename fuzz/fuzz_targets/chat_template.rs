//! The chat-template rule (`socair_plugin_kit::jinja::judge`) on arbitrary text: it returns
//! (no panic, no stack overflow: the parser's recursion, the tokens per block and the walk's
//! depth are bounded), and its findings stay within their bound.
#![no_main]

use socair_plugin_kit::jinja;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let j = jinja::judge(text);
    assert!(j.flags.len() <= jinja::MAX_FLAGS);
    assert!(j.more == 0 || j.flags.len() == jinja::MAX_FLAGS);
});
