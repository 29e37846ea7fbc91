class WithClasses(Module):
  __parameters__ = []
  __buffers__ = ["offset", ]
  offset : Tensor
  training : bool
  _is_full_backward_hook : Optional[bool]
  names : Dict[str, int]
  def forward(self: __torch__.WithClasses,
    x: Tensor,
    mode: __torch__.Mode) -> __torch__.Pair:
    s = __torch__.Scaler.__new__(__torch__.Scaler)
    _0 = (s).__init__(2., )
    _1 = (s).apply(x, )
    offset = self.offset
    y = torch.add(_1, offset)
    parts = annotate(List[Tensor], [])
    for i in range(2):
      _2 = torch.slice(y, 0, i, torch.add(i, 1))
      _3 = torch.append(parts, _2)
    if torch.eq(mode, __torch__.Mode.FAST):
      names = self.names
      y0 = torch.add(y, torch.len(names))
    else:
      y0 = y
    _4 = __torch__.Pair(torch.cat(parts), y0)
    return _4
class Mode(Enum):
  FAST = 1
  SLOW = 2
class Pair(NamedTuple):
  low : Tensor
  high : Tensor
class Scaler:
  factor : float
  def __init__(self: __torch__.Scaler,
    factor: float) -> NoneType:
    self.factor = factor
    return None
  def apply(self: __torch__.Scaler,
    x: Tensor) -> Tensor:
    factor = self.factor
    return torch.mul(x, factor)
