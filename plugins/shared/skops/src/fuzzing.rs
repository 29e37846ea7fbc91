//! The property `fuzz/fuzz_targets/skops_schema.rs` checks, replayed over its committed corpus
//! by this crate's tests (`tests_hostile.rs`).

/// `data` as a skops schema (and as one among a zip's members, every member present or none):
/// no panic, the same judgement each time, and a judgement only for what `json.loads` reads.
pub fn check_schema(data: &[u8]) {
    let once = crate::judge(data);
    assert_eq!(once, crate::judge(data), "judged differently twice");
    let none = crate::judge_in_zip(data, &|_| false);
    let all = crate::judge_in_zip(data, &|_| true);
    assert_eq!(
        none.is_some(),
        all.is_some(),
        "whether it is a skops schema depends on the zip's members"
    );
}
