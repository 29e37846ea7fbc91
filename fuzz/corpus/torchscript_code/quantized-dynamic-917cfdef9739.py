class LinearPackedParams(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  dtype : int
  _packed_params : __torch__.torch.classes.quantized.LinearPackedParamsBase
  def forward(self: __torch__.torch.ao.nn.quantized.modules.linear.LinearPackedParams,
    x: Tensor) -> Tensor:
    return x
  def _weight_bias(self: __torch__.torch.ao.nn.quantized.modules.linear.LinearPackedParams) -> Tuple[Tensor, Optional[Tensor]]:
    _0 = "Unsupported dtype on dynamic quantized linear!"
    _1 = uninitialized(Tuple[Tensor, Optional[Tensor]])
    dtype = self.dtype
    if torch.eq(dtype, 12):
      _packed_params = self._packed_params
      _3, _4 = ops.quantized.linear_unpack(_packed_params)
      _2 = (_3, _4)
    else:
      dtype0 = self.dtype
      if torch.eq(dtype0, 5):
        _packed_params0 = self._packed_params
        _6, _7 = ops.quantized.linear_unpack_fp16(_packed_params0)
        _5 = (_6, _7)
      else:
        ops.prim.RaiseException(_0, "builtins.RuntimeError")
        _5 = _1
      _2 = _5
    return _2
  def set_weight_bias(self: __torch__.torch.ao.nn.quantized.modules.linear.LinearPackedParams,
    weight: Tensor,
    bias: Optional[Tensor]) -> NoneType:
    _8 = "Unsupported dtype on dynamic quantized linear!"
    dtype = self.dtype
    if torch.eq(dtype, 12):
      _9 = ops.quantized.linear_prepack(weight, bias)
      self._packed_params = _9
    else:
      dtype1 = self.dtype
      if torch.eq(dtype1, 5):
        _10 = ops.quantized.linear_prepack_fp16(weight, bias)
        self._packed_params = _10
      else:
        ops.prim.RaiseException(_8, "builtins.RuntimeError")
    return None
