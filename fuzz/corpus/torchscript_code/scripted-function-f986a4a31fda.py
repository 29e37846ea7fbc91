class PlaceholderModule(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  def forward(self: __torch__.PlaceholderModule,
    x: Tensor,
    n: int) -> Tensor:
    i = 0
    x0 = x
    _0 = torch.lt(0, n)
    while _0:
      if bool(torch.gt(torch.sum(x0), 10)):
        _1, _2, _3 = False, i, x0
      else:
        x1 = torch.mul(x0, 2)
        i0 = torch.add(i, 1)
        _1, _2, _3 = torch.lt(i0, n), i0, x1
      _0, i, x0 = _1, _2, _3
    print("done", i)
    return x0
