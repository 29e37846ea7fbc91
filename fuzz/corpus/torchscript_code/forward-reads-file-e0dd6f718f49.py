class FileReader(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.FileReader,
    x: Tensor) -> Tensor:
    y = torch.from_file("/etc/hostname", False, 4, dtype=0)
    _0 = torch.add(x, torch.sum(torch.to(y, 6)))
    return _0
