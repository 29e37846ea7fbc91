class Embedding(Module):
  __parameters__ = ["weight", ]
  __buffers__ = []
  weight : Tensor
  training : bool
  _is_full_backward_hook : NoneType
  embedding_dim : Final[int] = 8
  norm_type : Final[float] = 2.
  max_norm : Final[NoneType] = None
  padding_idx : Final[NoneType] = None
  scale_grad_by_freq : Final[bool] = False
  num_embeddings : Final[int] = 10
  sparse : Final[bool] = False
  def forward(self: __torch__.torch.nn.modules.sparse.Embedding,
    input: Tensor) -> Tensor:
    _0 = __torch__.torch.nn.functional.embedding
    weight = self.weight
    _1 = _0(input, weight, None, None, 2., False, False, )
    return _1
