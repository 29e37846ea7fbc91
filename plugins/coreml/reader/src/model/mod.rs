//! A Core ML model file (`.mlmodel`, the `CoreML.Specification.Model` protobuf of coremltools
//! 9.0, also a model package's `Data/com.apple.CoreML/model.mlmodel`) read at wire level:
//! the kit's wire walk checks every byte by the generated table ([`crate::proto::schema`]),
//! and this visitor gives each message a role as the walk enters it:
//!
//! * every message's oneof groups: two members of one set is a FAIL (protobuf keeps the last,
//!   a reader that keeps the first sees another model);
//! * a model (the root, a pipeline's members): its type; the opaque ones (a serialized private
//!   model, the NaturalLanguage framework's `modelParameterData`) are a LEAD;
//! * a custom layer (`CustomLayerParams`) and a custom model (`CustomModel`): a LEAD naming the
//!   class Core ML instantiates from the app's code;
//! * a linked model (`LinkedModelFile`): judged as a link ([`links`]);
//! * a NeuralNetwork `WeightParams`: a tensor of this file ([`weights`]), named after its
//!   layer;
//! * a MIL `Value`: a tensor in the weights file or immediate ([`mil`]), named after the
//!   operation whose output it is.

pub mod found;
pub mod links;
pub mod mil;
pub mod roles;
pub mod visit;
pub mod weights;

use crate::proto::schema::MODEL;
use crate::proto::shallow;
use crate::proto::DIALECT;
use roles::{Role, Visit};
use socair_plugin_api::OpenedFile;
use socair_plugin_kit::protobuf::error::{ProtoError, MAX_PROTO_LEN};
use socair_plugin_kit::protobuf::walk::walk;

/// The format this reader reads.
pub const FORMAT: &str = "coreml";

/// The summary of a file that is not sound protobuf of Core ML's schema.
pub const UNSOUND: &str =
    "not a sound Core ML model: protobuf readers may disagree on what it holds";

/// Reads the model file `buf`.
pub fn read(buf: &[u8]) -> OpenedFile {
    let len = buf.len() as u64;
    if len > MAX_PROTO_LEN {
        return ProtoError::TooLarge { len }.refused(FORMAT, UNSOUND);
    }
    if buf.is_empty() {
        return ProtoError::Empty.refused(FORMAT, UNSOUND);
    }
    let mut visit = Visit::new(FORMAT, buf.len() as u64);
    let whole = (0, buf.len());
    visit.oneofs(buf, MODEL, whole, || "model".into());
    visit.model(buf, whole, "model (byte 0)");
    let version = shallow::last_varint(buf, whole, 1);
    let walked = match walk(buf, DIALECT, MODEL, Role::root(), &mut visit) {
        Ok(w) => w,
        Err(error) => {
            return ProtoError::Wire {
                message: "Model",
                error,
            }
            .refused(FORMAT, UNSOUND)
        }
    };
    visit.reading.walked(&walked);
    visit.finish(version)
}
