class CustomOp(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.CustomOp,
    x: Tensor) -> Tensor:
    return ops.socair_fixture.exfiltrate(x)
