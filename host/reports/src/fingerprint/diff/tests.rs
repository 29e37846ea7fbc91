use super::*;

#[test]
fn layers_are_the_first_numeric_part() {
    assert_eq!(layer_of("blk.12.attn_q.weight"), Some(12));
    assert_eq!(layer_of("model.layers.3.mlp.up_proj.weight"), Some(3));
    assert_eq!(layer_of("transformer.h.0.attn.c_attn.weight"), Some(0));
    assert_eq!(layer_of("token_embd.weight"), None);
    assert_eq!(layer_of("a..b"), None);
}
