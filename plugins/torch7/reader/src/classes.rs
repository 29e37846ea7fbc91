//! What torch7 does with an object of each class name, and so what a file naming it is.
//!
//! torch7's `File:readObject` (torch/torch7 814ea4af, File.lua) builds an object of a class
//! with `torch.factory(className)`, which knows only classes a loaded package registered, and
//! then runs the class's `read` method if it has one (`getmetamethod(object, 'read')`), else
//! reads one object and copies its fields. torchfile 0.1.0 (torchfile.py `T7Reader.read_obj`)
//! reads its `type_handlers` (tensors, storages, `tds.Vec`, `tds.Hash`) by their layout and
//! every other class as one object.
//!
//! So a class's layout, and what loading it runs, is its package's:
//! * torch7's own tensors and storages (generic/Tensor.c and generic/Storage.c `read`: sizes,
//!   strides and offset, then the storage object; a count and the raw elements) are data;
//! * nn's modules and criteria (torch/nn 87268255, every `torch.class('nn.…')`) read one
//!   object with `Module:read` (Module.lua) or with no `read` at all; the few that add to it
//!   (BatchNormalization, GradientReversal, VolumetricMaxPooling, WeightNorm) only fix up
//!   fields of data they read. nn.GPU reads a header, calls cutorch, then the object: LEAD;
//! * torch7's Lua classes without `read` (`torch.CmdLine`, `torch.Tester`) are one object;
//! * `torch.Generator` reads `sizeof(THGenerator)` raw bytes (Generator.c
//!   `torch_Generator_read`), a size of the build: LEAD, the rest unread;
//! * torch7's file classes (`torch.File`, `torch.DiskFile`, `torch.MemoryFile`,
//!   `torch.PipeFile`, which runs a shell command) have no factory, so torch7 refuses them,
//!   while torchfile reads them as plain objects: a file naming one is a FAIL;
//! * CUDA classes need cutorch, and `tds` classes the tds package, whose `read` is theirs:
//!   LEAD, read as torchfile reads them;
//! * any other class is a package's this reader does not know: LEAD, its `read` unknown.

/// An element type of a storage: its torch7 name, socair's name and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elem {
    /// `Float`, `Double`, …
    pub torch: &'static str,
    /// The safetensors dtype name.
    pub dtype: &'static str,
    /// Bytes per element.
    pub size: u64,
}

/// torch7's element types (torch7 TH/THGenerate*Type.h), as a binary file holds them on a
/// 64-bit Linux build (`long` is 8 bytes).
const ELEMS: [Elem; 8] = [
    Elem {
        torch: "Byte",
        dtype: "U8",
        size: 1,
    },
    Elem {
        torch: "Char",
        dtype: "I8",
        size: 1,
    },
    Elem {
        torch: "Short",
        dtype: "I16",
        size: 2,
    },
    Elem {
        torch: "Int",
        dtype: "I32",
        size: 4,
    },
    Elem {
        torch: "Long",
        dtype: "I64",
        size: 8,
    },
    Elem {
        torch: "Float",
        dtype: "F32",
        size: 4,
    },
    Elem {
        torch: "Double",
        dtype: "F64",
        size: 8,
    },
    Elem {
        torch: "Half",
        dtype: "F16",
        size: 2,
    },
];

/// What a class name is to torch7 and torchfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// `torch.<E>Tensor` (or `torch.Cuda<E>Tensor`, `cuda` set).
    Tensor { elem: Elem, cuda: bool },
    /// `torch.<E>Storage` (or `torch.Cuda<E>Storage`).
    Storage { elem: Elem, cuda: bool },
    /// A class of torch7 or nn whose body is one object read as data.
    Data,
    /// `tds.Vec` / `tds.Hash` (`hash` set): torchfile's layout, the tds package's reader.
    Tds { hash: bool },
    /// A class whose layout is neither one object nor known here: reading stops (the reason).
    Opaque(&'static str),
    /// A torch7 file class: FAIL.
    FileClass,
    /// Any other class: LEAD, read as torchfile reads it (one object).
    Unknown,
}

/// Every class `torch.class` declares in torch/nn at 872682558c48ee661ebff693aa5a41fcdefa7873
/// (`git grep "torch.class('nn."`), sorted.
const NN_CLASSES: &[&str] = &[
    "Abs",
    "AbsCriterion",
    "Add",
    "AddConstant",
    "BCECriterion",
    "BatchNormalization",
    "Bilinear",
    "Bottle",
    "CAdd",
    "CAddTable",
    "CAddTensorTable",
    "CDivTable",
    "CMaxTable",
    "CMinTable",
    "CMul",
    "CMulTable",
    "CReLU",
    "CSubTable",
    "Clamp",
    "ClassNLLCriterion",
    "ClassSimplexCriterion",
    "Collapse",
    "Concat",
    "ConcatTable",
    "Constant",
    "Container",
    "Contiguous",
    "Convert",
    "Copy",
    "Cosine",
    "CosineDistance",
    "CosineEmbeddingCriterion",
    "Criterion",
    "CriterionTable",
    "CrossEntropyCriterion",
    "Decorator",
    "DepthConcat",
    "DistKLDivCriterion",
    "DistanceRatioCriterion",
    "DontCast",
    "DotProduct",
    "Dropout",
    "ELU",
    "Euclidean",
    "Exp",
    "FeatureLPPooling",
    "FlattenTable",
    "GPU",
    "GatedLinearUnit",
    "GradientReversal",
    "HardShrink",
    "HardTanh",
    "HingeEmbeddingCriterion",
    "Identity",
    "Index",
    "IndexLinear",
    "JoinTable",
    "Kmeans",
    "L1Cost",
    "L1HingeEmbeddingCriterion",
    "L1Penalty",
    "LayerNormalization",
    "LeakyReLU",
    "Linear",
    "LinearTHNN",
    "LinearWeightNorm",
    "Log",
    "LogSigmoid",
    "LogSoftMax",
    "LookupTable",
    "MM",
    "MSECriterion",
    "MV",
    "MapTable",
    "MarginCriterion",
    "MarginRankingCriterion",
    "MaskedSelect",
    "Max",
    "Maxout",
    "Mean",
    "Min",
    "MixtureTable",
    "Module",
    "ModuleCriterion",
    "Mul",
    "MulConstant",
    "MultiCriterion",
    "MultiLabelMarginCriterion",
    "MultiLabelSoftMarginCriterion",
    "MultiMarginCriterion",
    "NaN",
    "Narrow",
    "NarrowTable",
    "Normalize",
    "OneHot",
    "PReLU",
    "Padding",
    "PairwiseDistance",
    "Parallel",
    "ParallelCriterion",
    "ParallelTable",
    "PartialLinear",
    "PixelShuffle",
    "Power",
    "PrintSize",
    "Profile",
    "RReLU",
    "ReLU",
    "ReLU6",
    "Replicate",
    "Reshape",
    "Select",
    "SelectTable",
    "Sequential",
    "Sigmoid",
    "SmoothL1Criterion",
    "SoftMarginCriterion",
    "SoftMax",
    "SoftMin",
    "SoftPlus",
    "SoftShrink",
    "SoftSign",
    "SparseLinear",
    "SpatialAdaptiveAveragePooling",
    "SpatialAdaptiveMaxPooling",
    "SpatialAutoCropMSECriterion",
    "SpatialAveragePooling",
    "SpatialBatchNormalization",
    "SpatialClassNLLCriterion",
    "SpatialContrastiveNormalization",
    "SpatialConvolution",
    "SpatialConvolutionLocal",
    "SpatialConvolutionMM",
    "SpatialConvolutionMap",
    "SpatialCrossMapLRN",
    "SpatialDepthWiseConvolution",
    "SpatialDilatedConvolution",
    "SpatialDilatedMaxPooling",
    "SpatialDivisiveNormalization",
    "SpatialDropout",
    "SpatialFractionalMaxPooling",
    "SpatialFullConvolution",
    "SpatialFullConvolutionMap",
    "SpatialLPPooling",
    "SpatialLogSoftMax",
    "SpatialMaxPooling",
    "SpatialMaxUnpooling",
    "SpatialReflectionPadding",
    "SpatialReplicationPadding",
    "SpatialSoftMax",
    "SpatialSubSampling",
    "SpatialSubtractiveNormalization",
    "SpatialUpSamplingBilinear",
    "SpatialUpSamplingNearest",
    "SpatialZeroPadding",
    "SplitTable",
    "Sqrt",
    "Square",
    "Squeeze",
    "StochasticGradient",
    "Sum",
    "Tanh",
    "TanhShrink",
    "TemporalConvolution",
    "TemporalDynamicKMaxPooling",
    "TemporalMaxPooling",
    "TemporalRowConvolution",
    "TemporalSubSampling",
    "Threshold",
    "Transpose",
    "Unsqueeze",
    "UpSampling",
    "View",
    "VolumetricBatchNormalization",
    "VolumetricConvolution",
    "VolumetricDilatedConvolution",
    "VolumetricDilatedMaxPooling",
    "VolumetricDropout",
    "VolumetricFractionalMaxPooling",
    "VolumetricFullConvolution",
    "VolumetricMaxPooling",
    "VolumetricMaxUnpooling",
    "VolumetricReplicationPadding",
    "WeightNorm",
    "WeightedEuclidean",
    "WeightedMSECriterion",
    "WhiteNoise",
    "ZeroGrad",
    "ZipTable",
    "ZipTableOneToMany",
];

/// The element type named `name` (`Float`, …).
fn elem(name: &str) -> Option<Elem> {
    ELEMS.iter().copied().find(|e| e.torch == name)
}

/// What `name` is (see the module's comment).
pub fn classify(name: &[u8]) -> Class {
    let Ok(name) = std::str::from_utf8(name) else {
        return Class::Unknown;
    };
    if let Some(rest) = name.strip_prefix("torch.") {
        let (cuda, rest) = match rest.strip_prefix("Cuda") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        // cutorch names its float tensor `torch.CudaTensor`.
        let rest = match rest {
            "Tensor" if cuda => "FloatTensor",
            "Storage" if cuda => "FloatStorage",
            other => other,
        };
        if let Some(e) = rest.strip_suffix("Tensor").and_then(elem) {
            return Class::Tensor { elem: e, cuda };
        }
        if let Some(e) = rest.strip_suffix("Storage").and_then(elem) {
            return Class::Storage { elem: e, cuda };
        }
        return match name {
            "torch.CmdLine" | "torch.Tester" => Class::Data,
            "torch.File" | "torch.DiskFile" | "torch.MemoryFile" | "torch.PipeFile" => {
                Class::FileClass
            }
            "torch.Generator" => Class::Opaque(
                "torch7's Generator.c `torch_Generator_read` reads sizeof(THGenerator) raw bytes, a size of the build that wrote it (torchfile reads one object instead)",
            ),
            _ => Class::Unknown,
        };
    }
    if let Some(rest) = name.strip_prefix("nn.") {
        if rest == "GPU" {
            return Class::Opaque(
                "nn's GPU.lua `GPU:read` reads a header, switches cutorch's device and then the module (torchfile reads one object instead)",
            );
        }
        if NN_CLASSES.binary_search(&rest).is_ok() {
            return Class::Data;
        }
        return Class::Unknown;
    }
    match name {
        "tds.Vec" => Class::Tds { hash: false },
        "tds.Hash" => Class::Tds { hash: true },
        _ => Class::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_what_their_packages_make_them() {
        assert!(NN_CLASSES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(NN_CLASSES.len(), 190);
        assert!(matches!(
            classify(b"torch.FloatTensor"),
            Class::Tensor {
                elem: Elem { dtype: "F32", .. },
                cuda: false
            }
        ));
        assert!(matches!(
            classify(b"torch.CudaTensor"),
            Class::Tensor {
                elem: Elem { dtype: "F32", .. },
                cuda: true
            }
        ));
        assert!(matches!(
            classify(b"torch.LongStorage"),
            Class::Storage {
                elem: Elem { size: 8, .. },
                ..
            }
        ));
        assert_eq!(classify(b"nn.Linear"), Class::Data);
        assert_eq!(classify(b"nn.Sequential"), Class::Data);
        assert!(matches!(classify(b"nn.GPU"), Class::Opaque(_)));
        assert_eq!(classify(b"nn.Evil"), Class::Unknown);
        assert_eq!(classify(b"torch.PipeFile"), Class::FileClass);
        assert_eq!(classify(b"torch.QuadTensor"), Class::Unknown);
        assert_eq!(classify(b"cudnn.SpatialConvolution"), Class::Unknown);
        assert_eq!(classify(b"tds.Hash"), Class::Tds { hash: true });
        assert_eq!(classify(&[0xff, 0xfe]), Class::Unknown);
    }
}
