class WithConstant(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.WithConstant,
    x: Tensor) -> Tensor:
    _0 = torch.to(CONSTANTS.c0, torch.device("cpu"), 6)
    return torch.add(x, torch.detach(_0))
