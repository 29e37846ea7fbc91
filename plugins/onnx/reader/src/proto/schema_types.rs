//! The types of the generated field table ([`super::schema`]): the kit's, which every
//! protobuf reader's table uses.

pub use socair_plugin_kit::protobuf::schema::{Field, Kind, MessageSchema};
