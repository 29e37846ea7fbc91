def layer_norm(input: Tensor,
    normalized_shape: List[int],
    weight: Optional[Tensor]=None,
    bias: Optional[Tensor]=None,
    eps: float=1.0000000000000001e-05) -> Tensor:
  _0 = torch.layer_norm(input, normalized_shape, weight, bias, eps)
  return _0
def embedding(input: Tensor,
    weight: Tensor,
    padding_idx: Optional[int]=None,
    max_norm: Optional[float]=None,
    norm_type: float=2.,
    scale_grad_by_freq: bool=False,
    sparse: bool=False) -> Tensor:
  _1 = "AssertionError: Padding_idx must be within num_embeddings"
  if torch.__isnot__(padding_idx, None):
    padding_idx1 = unchecked_cast(int, padding_idx)
    if torch.gt(padding_idx1, 0):
      _2 = torch.ge(padding_idx1, torch.size(weight, 0))
      if _2:
        ops.prim.RaiseException(_1)
      else:
        pass
      padding_idx2 = padding_idx1
    else:
      if torch.lt(padding_idx1, 0):
        _3 = torch.neg(torch.size(weight, 0))
        if torch.lt(padding_idx1, _3):
          ops.prim.RaiseException(_1)
        else:
          pass
        padding_idx4 = torch.add(torch.size(weight, 0), padding_idx1)
        padding_idx3 = padding_idx4
      else:
        padding_idx3 = padding_idx1
      padding_idx2 = padding_idx3
    padding_idx0 = padding_idx2
  else:
    padding_idx0 = -1
  if torch.__isnot__(max_norm, None):
    input0 = torch.contiguous(input)
  else:
    input0 = input
  _4 = torch.embedding(weight, input0, padding_idx0, scale_grad_by_freq, sparse)
  return _4
