//! Every reader of this plugin gathers what it reads into the reading model's one
//! [`Reading`] (tensors bounded by the kit's described limit, unread tensors, findings by
//! severity, metadata). Its inline budget starts at 1x the input, so that with the input itself
//! and its decoded structure (at most 7x the input and 64 MiB by the wire pre-pass's
//! pessimistic estimate for TensorFlow's dialect, decode.rs) a read stays within the
//! 64 MiB + 8x every reader is held to. Here: how a located tensor is described.

use crate::tensor::{Data, Located};
use abi_stable::std_types::{ROption, RString, RVec};
use socair_plugin_api::{ByteOrder, ByteRange, TensorDescriptor};
pub use socair_plugin_kit::reading::{listed, Reading};

/// Adds a located tensor named `name` to `out`; `file` names the file holding its bytes when
/// that is not the one opened.
pub fn located(
    out: &mut Reading,
    name: &str,
    t: Located,
    byte_order: ByteOrder,
    file: Option<&str>,
    outside: bool,
) {
    let (ranges, inline) = match t.bytes {
        Data::Range(offset, len) => (vec![ByteRange { offset, len }], None),
        Data::Inline(b) => (Vec::new(), Some(RVec::from(b))),
    };
    out.tensors.push(TensorDescriptor {
        name: name.into(),
        dtype: t.dtype.name.into(),
        element_type: t.dtype.element.map(RString::from).into(),
        shape: t.shape.into(),
        ranges: ranges.into(),
        byte_order,
        origin: ROption::RNone,
        strides: ROption::RNone,
        file: file.map(RString::from).into(),
        inline: inline.into(),
        outside_model: outside,
    });
}
