//! A plugin's exports, written once: [`export_plugin!`](crate::export_plugin) declares the root
//! module and its four entry points from the plugin's name, rule sets, readers, writers and
//! encoders, and the adapters here ([`Guarded`]) run every trait method inside
//! [`guard`], so that no panic unwinds into the host.
//!
//! A first-party plugin implements the plain traits [`Reader`], [`Writer`] and [`Encoder`]
//! (Rust slices and `Result`s, no `R*` types, no `guard` of its own); the adapters convert at
//! the boundary. The manifest's formats and encoder names are read from those values, so the
//! manifest cannot list a format no reader reads.

use abi_stable::{
    sabi_trait::TD_Opaque,
    std_types::{ROption, RResult, RSlice, RSliceMut, RString, Tuple2},
};
use socair_plugin_api::{
    guard, ByteOrder, ByteSourceRef, FingerprintEncoder, FingerprintEncoderBox,
    FingerprintEncoder_TO, FormatReader, FormatReaderBox, FormatReader_TO, FormatWriter,
    FormatWriterBox, FormatWriter_TO, OpenedContainer, OpenedFile, OutputLayout, Placement,
    PlanTensor, PluginError, PluginErrorKind, PluginManifest, ReadOptions, RuleSetId,
    PLUGIN_API_VERSION,
};

/// A format reader as a first-party plugin writes it.
pub trait Reader: Send + Sync + 'static {
    /// The format's name, as `--from` names it.
    fn format(&self) -> &'static str;
    /// Whether the file whose first bytes are `head` (up to 4096) and whose length is
    /// `file_len` is of this format; cheap, and never an error (see `FormatReader::detect`).
    fn detect(&self, head: &[u8], file_len: u64) -> bool;
    /// Reads the file's structure (see `FormatReader::open`).
    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError>;
    /// Whether the file is of this format by a signature past its head (see
    /// `FormatReader::detect_past_head`); most formats have none.
    fn detect_past_head(&self, _source: &ByteSourceRef<'_>) -> bool {
        false
    }
    /// Reads a container and hands its members back to the host (see
    /// `FormatReader::open_container`); `None` for a reader that is not a container.
    fn open_container(
        &self,
        _source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
        _budget: u64,
    ) -> Option<Result<OpenedContainer, PluginError>> {
        None
    }
}

/// One tensor a writer is asked to place, as plain Rust values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTensor {
    /// Its name.
    pub name: String,
    /// Its dtype in the output format's own names (`F32`, `Q8_0`, …).
    pub dtype: String,
    /// Its logical shape, outermost first.
    pub shape: Vec<u64>,
    /// Its size in bytes.
    pub byte_len: u64,
}

/// A planned output file: what a writer returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Bytes at offset 0 (the header, through any padding before the data).
    pub header: Vec<u8>,
    /// `(input index, absolute offset)` for each tensor, in the order the file lays them out.
    pub placements: Vec<(usize, u64)>,
    /// The file's total length.
    pub total_len: u64,
}

/// A format writer as a first-party plugin writes it.
pub trait Writer: Send + Sync + 'static {
    /// The format's name.
    fn format(&self) -> &'static str;
    /// Plans the output for `tensors` with file-level `metadata`, kept in the given order.
    fn plan(
        &self,
        tensors: &[WriteTensor],
        metadata: &[(String, String)],
    ) -> Result<Plan, PluginError>;
}

/// A fingerprint encoder as a first-party plugin writes it.
pub trait Encoder: Send + Sync + 'static {
    /// The encoding's versioned name, such as `float32-le-bits/v1`.
    fn name(&self) -> &'static str;
    /// Output bytes per element of `element_type`, or none when the encoding does not apply.
    fn output_width(&self, element_type: &str) -> Option<u32>;
    /// Encodes whole elements of `input` into `output` (see `FingerprintEncoder::encode`).
    fn encode(
        &self,
        element_type: &str,
        byte_order: ByteOrder,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(), PluginError>;
}

/// A [`Reader`], [`Writer`] or [`Encoder`] behind the plugin API's traits, each method run
/// inside [`guard`].
#[derive(Debug, Clone, Copy)]
pub struct Guarded<T>(pub T);

impl<T: Reader> FormatReader for Guarded<T> {
    fn format(&self) -> RString {
        guard(|| Ok(RString::from(self.0.format())))
            .into_result()
            .unwrap_or_default()
    }

    fn detect(&self, head: RSlice<'_, u8>, file_len: u64) -> bool {
        guard(|| Ok(self.0.detect(head.as_slice(), file_len)))
            .into_result()
            .unwrap_or(false)
    }

    fn open(
        &self,
        source: ByteSourceRef<'_>,
        options: ReadOptions,
    ) -> RResult<OpenedFile, PluginError> {
        guard(|| self.0.open(&source, &options))
    }

    fn detect_past_head(&self, source: ByteSourceRef<'_>) -> bool {
        guard(|| Ok(self.0.detect_past_head(&source)))
            .into_result()
            .unwrap_or(false)
    }

    fn open_container(
        &self,
        source: ByteSourceRef<'_>,
        options: ReadOptions,
        budget: u64,
    ) -> RResult<OpenedContainer, PluginError> {
        guard(|| {
            self.0
                .open_container(&source, &options, budget)
                .unwrap_or_else(|| {
                    Err(PluginError::new(
                        PluginErrorKind::Unsupported,
                        socair_plugin_api::NOT_A_CONTAINER,
                    ))
                })
        })
    }
}

impl<T: Writer> FormatWriter for Guarded<T> {
    fn format(&self) -> RString {
        guard(|| Ok(RString::from(self.0.format())))
            .into_result()
            .unwrap_or_default()
    }

    fn plan(
        &self,
        tensors: RSlice<'_, PlanTensor>,
        metadata: RSlice<'_, Tuple2<RString, RString>>,
    ) -> RResult<OutputLayout, PluginError> {
        guard(|| {
            let tensors: Vec<WriteTensor> = tensors
                .iter()
                .map(|t| WriteTensor {
                    name: t.name.to_string(),
                    dtype: t.dtype.to_string(),
                    shape: t.shape.to_vec(),
                    byte_len: t.byte_len,
                })
                .collect();
            let metadata: Vec<(String, String)> = metadata
                .iter()
                .map(|Tuple2(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let plan = self.0.plan(&tensors, &metadata)?;
            Ok(OutputLayout {
                header: plan.header.into(),
                placements: plan
                    .placements
                    .into_iter()
                    .map(|(i, offset)| Placement {
                        tensor_index: i as u64,
                        offset,
                    })
                    .collect(),
                total_len: plan.total_len,
            })
        })
    }
}

impl<T: Encoder> FingerprintEncoder for Guarded<T> {
    fn name(&self) -> RString {
        guard(|| Ok(RString::from(self.0.name())))
            .into_result()
            .unwrap_or_default()
    }

    fn output_width(&self, element_type: RString) -> ROption<u32> {
        guard(|| Ok(self.0.output_width(element_type.as_str())))
            .into_result()
            .ok()
            .flatten()
            .into()
    }

    fn encode(
        &self,
        element_type: RString,
        byte_order: ByteOrder,
        input: RSlice<'_, u8>,
        mut output: RSliceMut<'_, u8>,
    ) -> RResult<(), PluginError> {
        guard(|| {
            self.0.encode(
                element_type.as_str(),
                byte_order,
                input.as_slice(),
                output.as_mut_slice(),
            )
        })
    }
}

/// The first `max` bytes of `source` (all of it when it is shorter), read in one call: what a
/// reader of a format without an index (protobuf, a flatbuffer) decodes from.
pub fn read_prefix(source: &ByteSourceRef<'_>, max: u64) -> Result<Vec<u8>, PluginError> {
    let len = source.file_len().min(max);
    let mut buf = vec![
        0u8;
        usize::try_from(len).map_err(|_| {
            PluginError::new(PluginErrorKind::InvalidInput, "file length over usize")
        })?
    ];
    source
        .read_at(0, RSliceMut::from_mut_slice(&mut buf))
        .into_result()?;
    Ok(buf)
}

/// `reader` as the plugin API's boxed trait object.
pub fn reader(reader: impl Reader) -> FormatReaderBox {
    FormatReader_TO::from_value(Guarded(reader), TD_Opaque)
}

/// `writer` as the plugin API's boxed trait object.
pub fn writer(writer: impl Writer) -> FormatWriterBox {
    FormatWriter_TO::from_value(Guarded(writer), TD_Opaque)
}

/// `encoder` as the plugin API's boxed trait object.
pub fn encoder(encoder: impl Encoder) -> FingerprintEncoderBox {
    FingerprintEncoder_TO::from_value(Guarded(encoder), TD_Opaque)
}

/// A rule set a plugin implements: `name` at `version`.
pub fn rule_set(name: &str, version: &str) -> RuleSetId {
    RuleSetId {
        name: name.into(),
        version: version.into(),
    }
}

/// The manifest of plugin `name` at `version`, built against this plugin-api.
pub fn manifest(
    name: &str,
    version: &str,
    formats_read: &[&str],
    formats_written: &[&str],
    rule_sets: impl IntoIterator<Item = RuleSetId>,
    encoders: &[&str],
) -> PluginManifest {
    let strings = |names: &[&str]| names.iter().map(|&n| RString::from(n)).collect();
    PluginManifest {
        name: name.into(),
        version: version.into(),
        plugin_api: PLUGIN_API_VERSION.into(),
        formats_read: strings(formats_read),
        formats_written: strings(formats_written),
        rule_sets: rule_sets.into_iter().collect(),
        encoders: strings(encoders),
    }
}

/// Declares a plugin: its root module (`#[export_root_module]`) and the four entry points the
/// host calls, each inside `guard`. The manifest's formats are the readers' and writers'
/// `format()`s, its encoders their `name()`s; its version is the plugin crate's own.
///
/// ```ignore
/// socair_plugin_kit::export_plugin! {
///     name: "gguf",
///     rule_sets: [],
///     readers: [GgufReader],
///     writers: [GgufWriter],
///     encoders: [],
/// }
/// ```
///
/// `rule_sets` is any expression that iterates over `RuleSetId`s (see [`rule_set`]); the
/// readers, writers and encoders are expressions of types implementing [`Reader`],
/// [`Writer`] and [`Encoder`], evaluated each time the host asks. The plugin crate depends on
/// `abi_stable` itself: the root-module attribute expands to `::abi_stable` paths.
#[macro_export]
macro_rules! export_plugin {
    (
        name: $name:expr,
        rule_sets: $rule_sets:expr,
        readers: [$($reader:expr),* $(,)?],
        writers: [$($writer:expr),* $(,)?],
        encoders: [$($encoder:expr),* $(,)?] $(,)?
    ) => {
        /// The root module: what the host finds in this library (`export_plugin!`).
        #[$crate::abi_stable::export_root_module]
        fn socair_root_module() -> $crate::api::PluginRoot_Ref {
            use $crate::abi_stable::prefix_type::PrefixTypeTrait;
            $crate::api::PluginRoot {
                manifest: socair_manifest,
                readers: socair_readers,
                writers: socair_writers,
                encoders: socair_encoders,
            }
            .leak_into_prefix()
        }

        #[$crate::abi_stable::sabi_extern_fn]
        fn socair_manifest() -> $crate::abi_stable::std_types::RResult<
            $crate::api::PluginManifest,
            $crate::api::PluginError,
        > {
            $crate::api::guard(|| {
                Ok($crate::export::manifest(
                    $name,
                    env!("CARGO_PKG_VERSION"),
                    &[$($crate::export::Reader::format(&$reader)),*],
                    &[$($crate::export::Writer::format(&$writer)),*],
                    $rule_sets,
                    &[$($crate::export::Encoder::name(&$encoder)),*],
                ))
            })
        }

        #[$crate::abi_stable::sabi_extern_fn]
        fn socair_readers() -> $crate::abi_stable::std_types::RResult<
            $crate::abi_stable::std_types::RVec<$crate::api::FormatReaderBox>,
            $crate::api::PluginError,
        > {
            $crate::api::guard(|| Ok(vec![$($crate::export::reader($reader)),*].into()))
        }

        #[$crate::abi_stable::sabi_extern_fn]
        fn socair_writers() -> $crate::abi_stable::std_types::RResult<
            $crate::abi_stable::std_types::RVec<$crate::api::FormatWriterBox>,
            $crate::api::PluginError,
        > {
            $crate::api::guard(|| Ok(vec![$($crate::export::writer($writer)),*].into()))
        }

        #[$crate::abi_stable::sabi_extern_fn]
        fn socair_encoders() -> $crate::abi_stable::std_types::RResult<
            $crate::abi_stable::std_types::RVec<$crate::api::FingerprintEncoderBox>,
            $crate::api::PluginError,
        > {
            $crate::api::guard(|| Ok(vec![$($crate::export::encoder($encoder)),*].into()))
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi_stable::std_types::RVec;
    use socair_plugin_api::{FingerprintEncoder, ReadAt};

    struct Panics;

    impl Reader for Panics {
        fn format(&self) -> &'static str {
            "panics"
        }
        fn detect(&self, head: &[u8], _file_len: u64) -> bool {
            #[allow(clippy::indexing_slicing)]
            let first = head[0];
            first == b'p'
        }
        fn open(
            &self,
            source: &ByteSourceRef<'_>,
            _options: &ReadOptions,
        ) -> Result<OpenedFile, PluginError> {
            panic!("opened {} bytes", source.size())
        }
    }

    impl Writer for Panics {
        fn format(&self) -> &'static str {
            "panics"
        }
        fn plan(
            &self,
            tensors: &[WriteTensor],
            metadata: &[(String, String)],
        ) -> Result<Plan, PluginError> {
            if tensors.is_empty() {
                return Err(PluginError::new(PluginErrorKind::InvalidInput, "no tensor"));
            }
            Ok(Plan {
                header: metadata.iter().flat_map(|(k, _)| k.bytes()).collect(),
                placements: vec![(0, 8)],
                total_len: 8 + tensors.iter().map(|t| t.byte_len).sum::<u64>(),
            })
        }
    }

    impl Encoder for Panics {
        fn name(&self) -> &'static str {
            "panics/v1"
        }
        fn output_width(&self, element_type: &str) -> Option<u32> {
            (element_type == "F32").then_some(4)
        }
        fn encode(
            &self,
            _element_type: &str,
            _byte_order: ByteOrder,
            input: &[u8],
            output: &mut [u8],
        ) -> Result<(), PluginError> {
            output.copy_from_slice(input);
            Ok(())
        }
    }

    #[test]
    fn a_panic_in_detect_is_no_claim() {
        let r = Guarded(Panics);
        assert!(FormatReader::detect(&r, RSlice::from_slice(b"p"), 1));
        assert!(!FormatReader::detect(&r, RSlice::from_slice(b""), 0));
        assert_eq!(FormatReader::format(&r).as_str(), "panics");
    }

    #[test]
    fn writers_see_plain_values_and_errors_cross_as_errors() {
        let w = Guarded(Panics);
        let t = PlanTensor {
            name: "w".into(),
            dtype: "F32".into(),
            shape: RVec::from(vec![2]),
            byte_len: 8,
        };
        let meta = [Tuple2(RString::from("key"), RString::from("v"))];
        let layout = FormatWriter::plan(
            &w,
            RSlice::from_slice(std::slice::from_ref(&t)),
            RSlice::from_slice(&meta),
        )
        .into_result()
        .unwrap();
        assert_eq!(layout.header.as_slice(), b"key");
        assert_eq!(
            layout.placements.as_slice(),
            &[Placement {
                tensor_index: 0,
                offset: 8
            }]
        );
        assert_eq!(layout.total_len, 16);
        let err = FormatWriter::plan(&w, RSlice::from_slice(&[]), RSlice::from_slice(&meta))
            .into_result()
            .unwrap_err();
        assert_eq!(err.kind, PluginErrorKind::InvalidInput);
    }

    #[test]
    fn encoders_cross_the_boundary_guarded() {
        let e = Guarded(Panics);
        assert_eq!(FingerprintEncoder::name(&e).as_str(), "panics/v1");
        assert_eq!(e.output_width("F32".into()), ROption::RSome(4));
        assert_eq!(e.output_width("I8".into()), ROption::RNone);
        let mut out = [0u8; 4];
        assert!(FingerprintEncoder::encode(
            &e,
            "F32".into(),
            ByteOrder::Little,
            RSlice::from_slice(&[1, 2, 3, 4]),
            RSliceMut::from_mut_slice(&mut out),
        )
        .is_ok());
        assert_eq!(out, [1, 2, 3, 4]);
        // A panic (slices of different lengths) comes back as an error, not an unwind.
        let err = FingerprintEncoder::encode(
            &e,
            "F32".into(),
            ByteOrder::Little,
            RSlice::from_slice(&[1, 2]),
            RSliceMut::from_mut_slice(&mut out),
        )
        .into_result()
        .unwrap_err();
        assert_eq!(err.kind, PluginErrorKind::Panicked);
    }

    #[test]
    fn the_manifest_lists_what_the_values_say() {
        let m = manifest(
            "p",
            "1.2.3",
            &[Reader::format(&Panics)],
            &[],
            [rule_set("socair-wo", "2")],
            &[Encoder::name(&Panics)],
        );
        assert_eq!(m.plugin_api.as_str(), PLUGIN_API_VERSION);
        assert_eq!(m.formats_read.as_slice(), &[RString::from("panics")]);
        assert!(m.formats_written.is_empty());
        assert_eq!(m.rule_sets.as_slice(), &[rule_set("socair-wo", "2")]);
        assert_eq!(m.encoders.as_slice(), &[RString::from("panics/v1")]);
    }
}
