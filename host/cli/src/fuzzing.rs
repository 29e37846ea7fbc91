//! The property the `documents` fuzz target checks, shared with the regression test: every
//! reader of signed or JSON documents returns on arbitrary bytes, and what verifies is what
//! was signed.

use crate::airlock::signing;

/// Envelopes and documents on arbitrary bytes.
pub fn check_documents(data: &[u8]) {
    let key = ed25519_dalek::SigningKey::from_bytes(&[42u8; 32]);
    // An arbitrary envelope never verifies under a key that did not sign it...
    if let Ok(v) = signing::verify(data, &[key.verifying_key()]) {
        // ...unless it really is one this key signed: then its payload round-trips.
        let again = signing::sign(&v.payload, &key);
        let bytes = serde_json::to_vec(&again).expect("plain data");
        assert_eq!(
            signing::verify(&bytes, &[key.verifying_key()])
                .unwrap()
                .payload,
            v.payload
        );
    }
    // Arbitrary bytes signed are verified as exactly those bytes.
    let env = serde_json::to_vec(&signing::sign(data, &key)).expect("plain data");
    assert_eq!(
        signing::verify(&env, &[key.verifying_key()])
            .unwrap()
            .payload,
        data
    );
    let _ = signing::Statement::parse(data);
    let _ = serde_json::from_slice::<crate::fingerprint::manifest::TensorManifest>(data);
    let _ = serde_json::from_slice::<crate::report::document::Report>(data);
    let _ = serde_json::from_slice::<crate::airlock::policy::Policy>(data);
    let _ = serde_json::from_slice::<crate::airlock::log::LogEntry>(data);
    let _ = crate::airlock::clock::parse(&String::from_utf8_lossy(data));
}

/// The hints a zip's central directory gives a remote reader ([`crate::read::zip_hints`]), on
/// arbitrary bytes: they return, and what they ask to fetch is bounded by the directory they
/// read (one short range per entry it can hold, and one more). Says whether there were hints.
pub fn check_zip_hints(data: &[u8]) -> bool {
    let read = |at: u64, buf: &mut [u8]| -> std::io::Result<()> {
        socair_plugin_api::ReadAt::read_exact_at(data, at, buf).map_err(std::io::Error::other)
    };
    let Some(ranges) = crate::read::zip_hints::local_headers(data.len() as u64, read) else {
        return false;
    };
    assert!(
        ranges.len() <= data.len() / 46 + 1,
        "more hints than entries"
    );
    for (_, len) in ranges {
        assert!(
            len <= 24 + 30 + 0xffff + 128,
            "a hint longer than a local header"
        );
    }
    true
}
