//! A reader that cannot know the name of the file it reads names a file beside it after it:
//! `{stem}` in a tensor's `file` stands for the opened file's name without its last extension
//! (a TensorFlow checkpoint's `ckpt.index` keeps its bytes in `ckpt.data-00000-of-00001`).
//! Expanded here for a directory's files and a container's members alike.

use socair_plugin_api::{
    abi_stable::std_types::{ROption, RString},
    OpenedFile,
};

/// What a descriptor's `file` may start with to stand for the opened file's own name without
/// its last extension (see the plugin API's `TensorDescriptor::file`).
pub const STEM: &str = "{stem}";

/// Replaces a leading [`STEM`] in each descriptor's `file` by the opened file's own name
/// without its last extension, so a reader that cannot know the name of the file it reads
/// can still name a file beside it after it (a TensorFlow checkpoint's `ckpt.index` keeps its
/// bytes in `ckpt.data-00000-of-00001`). The result is then an ordinary relative `file`.
pub(super) fn expand_stem(job_rel: &str, opened: &mut OpenedFile) {
    let name = job_rel.rsplit('/').next().unwrap_or(job_rel);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    for t in opened.tensors.iter_mut() {
        if let ROption::RSome(file) = &t.file {
            if let Some(rest) = file.as_str().strip_prefix(STEM) {
                t.file = ROption::RSome(RString::from(format!("{stem}{rest}")));
            }
        }
    }
}
