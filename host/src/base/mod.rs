//! What every other room may use, and which uses nothing of the crate itself: the object
//! storage client ([`cloud`]), hex digests,
//! JSON documents and atomic writes, the rule-set registry, the hashing pipe, progress
//! counters and the fault-injection points of the crash tests.
//!
//! Nothing here prints: progress is reported to a sink that the command line installs.

pub mod cloud;
pub mod digest;
pub mod fault;
pub mod hashpipe;
pub mod output;
pub mod progress;
pub mod rules;
pub mod scratch;
