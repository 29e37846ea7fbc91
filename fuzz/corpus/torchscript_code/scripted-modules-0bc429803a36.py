class Blocks(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  layers : __torch__.torch.nn.modules.container.ModuleList
  heads : __torch__.torch.nn.modules.container.ModuleDict
  norm : __torch__.torch.nn.modules.normalization.LayerNorm
  emb : __torch__.torch.nn.modules.sparse.Embedding
  def forward(self: __torch__.Blocks,
    idx: Tensor,
    mask: Optional[Tensor]=None) -> Dict[str, Tensor]:
    emb = self.emb
    x = torch.mean((emb).forward(idx, ), [1])
    layers = self.layers
    _0 = getattr(layers, "0")
    _1 = getattr(layers, "1")
    x0 = torch.gelu((_0).forward(x, ))
    x1 = torch.gelu((_1).forward(x0, ))
    norm = self.norm
    x2 = (norm).forward(x1, )
    if torch.__isnot__(mask, None):
      mask0 = unchecked_cast(Tensor, mask)
      x3 = torch.mul(x2, mask0)
    else:
      x3 = x2
    out = annotate(Dict[str, Tensor], {})
    heads = self.heads
    a = heads.a
    _2 = torch.softmax((a).forward(x3, ), -1)
    torch._set_item(out, "a", _2)
    _3 = annotate(List[str], [])
    for i in range(3):
      _4 = torch.append(_3, str(i))
    names = torch.join(",", _3)
    if torch.gt(torch.len(names), 0):
      pass
    else:
      ops.prim.RaiseException("AssertionError: empty")
    return out
  def describe(self: __torch__.Blocks) -> str:
    layers = self.layers
    _3 = torch.format("blocks:{}", (layers).__len__())
    return _3
