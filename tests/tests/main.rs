//! The end-to-end tests, one binary: each module is one area, and runs the built `socair`
//! with its built plugins (`cargo build --workspace` first). One binary links once, where a
//! binary per area linked the test dependencies once per area.

mod common;

mod airlock;
mod archive;
mod boosters;
mod bounds;
mod chat_templates;
mod ci;
mod convert;
mod convert_v3;
mod dcp;
mod diff;
mod digest;
mod faults;
mod formats;
mod gguf;
mod hfcache;
mod hostile_pickles;
mod human;
mod joblib;
mod keras;
mod keras_convert;
mod legacy;
mod many;
mod modeldir_files;
mod native;
mod numpy;
mod oms;
mod onnx;
mod packaging;
mod paddle;
mod pins;
mod plugins;
mod pointers;
mod polyglot;
mod pt2;
mod py2;
mod readers;
mod remote_keys;
mod reviews;
mod scale;
mod skops;
mod structure;
mod template;
mod tensorflow;
mod tensors;
mod tokenizers;
mod torch;
mod torch_containers;
mod torch_tar;
mod training;
mod trust;
mod unread_files;
mod weights_only;
