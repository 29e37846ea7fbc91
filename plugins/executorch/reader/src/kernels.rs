//! The operators ExecuTorch's own kernel libraries register (v1.4.1): the portable kernels
//! (kernels/portable/functions.yaml, custom_ops.yaml, et_copy_ops.yaml), the optimized ones
//! (kernels/optimized/optimized.yaml), the quantized ones (kernels/quantized/quantized.yaml),
//! the ATen-mode list (kernels/aten/functions.yaml, edge_dialect_aten_op.yaml) and the
//! primitive operators (kernels/prim_ops/register_prim_ops.cpp), one `namespace::name.overload`
//! a line in `executorch_kernels.txt`, extracted from those files at the tag.
//!
//! `Method::resolve_operator` (runtime/executor/method.cpp) looks each operator a kernel call
//! names up in the kernel registry by `name.overload` (`populate_operator_name`): the program
//! names native code the runtime was built with and carries none. An operator outside this
//! list is served only by a kernel someone else registered (a custom operator library), whose
//! native code socair cannot see.

/// The list, sorted.
const KERNELS: &str = include_str!("executorch_kernels.txt");

/// Whether ExecuTorch's own kernel libraries register `full_name` (`aten::addmm.out`).
pub fn is_executorch_kernel(full_name: &str) -> bool {
    KERNELS.lines().any(|line| line == full_name)
}

/// The name `populate_operator_name` builds: `name.overload`, or `name` when the overload is
/// empty.
pub fn full_name(name: &str, overload: &str) -> String {
    if overload.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{overload}")
    }
}

/// `populate_operator_name`'s buffer (`kTempBufferSizeForName`): a longer name is refused.
pub const MAX_OPERATOR_NAME: usize = 99;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_holds_the_portable_prim_and_quantized_kernels() {
        assert!(is_executorch_kernel("aten::addmm.out"));
        assert!(is_executorch_kernel("aten::permute_copy.out"));
        assert!(is_executorch_kernel("executorch_prim::et_view.default"));
        assert!(is_executorch_kernel(
            "quantized_decomposed::dequantize_per_tensor.out"
        ));
        assert!(is_executorch_kernel(
            "dim_order_ops::_to_dim_order_copy.out"
        ));
        assert!(!is_executorch_kernel("my_ns::addmm.out"));
        assert!(!is_executorch_kernel("aten::addmm"));
        assert_eq!(KERNELS.lines().count(), 280);
        assert_eq!(full_name("aten::sym_size", "int"), "aten::sym_size.int");
        assert_eq!(full_name("aten::x", ""), "aten::x");
    }
}
