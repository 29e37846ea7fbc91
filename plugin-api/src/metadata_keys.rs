//! The file-level metadata keys a first-party reader gives the host facts under, declared once
//! here, where both sides of the boundary read them: the torch readers' byte order record, what
//! `torch.load` returns each tensor as, and a distributed checkpoint's items. (The reader and
//! the host both name these constants; a key is a fact's name, never text to parse.)

/// The input's `byteorder` record: `little`, `big`, `absent` or `legacy` (the torch readers').
pub const BYTEORDER_RECORD: &str = "socair.byteorder_record";

/// A tensor `torch.load` returns as more than a plain tensor, one entry a tensor, its value
/// `KIND:NAME` with KIND `parameter` (an `nn.Parameter` with `requires_grad=True`),
/// `parameter-frozen` (one with `requires_grad=False`) or `requires-grad` (a tensor with
/// `requires_grad=True`): for a loader that gives tensors as torch gives them (the Python
/// package's `socair.torch.load`). The torch readers'.
pub const TORCH_TENSOR_KIND: &str = "socair.torch_tensor_kind";

/// A distributed checkpoint's `.metadata` items, a JSON array (the torch-zip reader's
/// `dcp::Item`), which the host reads the `.distcp` files by.
pub const DCP_ITEMS: &str = "socair.dcp_items";
