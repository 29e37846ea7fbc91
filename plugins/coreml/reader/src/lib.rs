//! socair's reader library for Core ML models, read without running anything, as coremltools
//! 9.0 writes them and Core ML loads them:
//!
//! * a model file (`.mlmodel`, and a model package's `Data/com.apple.CoreML/model.mlmodel`):
//!   the `CoreML.Specification.Model` protobuf, claimed by its field numbers ([`claim`]),
//!   walked strictly at wire level by the table generated from coremltools' descriptors
//!   ([`proto`]), its weights located ([`model`]: NeuralNetwork `WeightParams` in the file,
//!   MIL constants in the package's weights file) and judged: ordinary models PASS; custom
//!   layers and custom models (classes the app supplies) and opaque models are a LEAD; a
//!   linked model is judged as a link; a file protobuf readers may read differently is a FAIL;
//! * a model package's weights file (`weight.bin`, MIL blob storage, [`blob`]);
//! * a model package's `Manifest.json` ([`manifest`]).
//!
//! A model package (`.mlpackage`) is a directory: the host reads each of its files with the
//! reader that claims it, and resolves the tensors the model file places in the weights file.

pub mod blob;
pub mod claim;
#[doc(hidden)]
pub mod fuzzing;
pub mod manifest;
pub mod model;
pub mod proto;
pub mod readers;

pub use readers::{CoremlManifestReader, CoremlModelReader, CoremlWeightsReader};
