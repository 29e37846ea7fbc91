//! What every other room may use, and which uses nothing of the crate itself: the object
//! storage client ([`cloud`]) and the object keys it fetches exactly as written
//! ([`object_key`]), hex digests,
//! JSON documents and atomic writes, positioned reads of a file ([`pread`]), the rule-set
//! registry, the hashing pipe, progress counters and the fault-injection points of the crash
//! tests.
//!
//! Nothing here prints: progress is reported to a sink that the command line installs.

pub mod cloud;
pub mod digest;
pub mod fault;
pub mod hashpipe;
pub mod object_key;
pub mod output;
pub mod pread;
pub mod progress;
pub mod rules;
pub mod scratch;
