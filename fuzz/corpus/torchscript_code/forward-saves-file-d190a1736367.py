class Saver(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.Saver,
    x: Tensor) -> Tensor:
    torch.save(x, "/tmp/socair-leak.pt")
    return x
