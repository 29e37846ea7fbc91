class ModuleList(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  __annotations__["0"] = __torch__.torch.nn.modules.linear.___torch_mangle_9.Linear
  __annotations__["1"] = __torch__.torch.nn.modules.linear.___torch_mangle_9.Linear
  def __len__(self: __torch__.torch.nn.modules.container.ModuleList) -> int:
    return 2
class ModuleDict(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  a : __torch__.torch.nn.modules.linear.___torch_mangle_0.Linear
  def __len__(self: __torch__.torch.nn.modules.container.ModuleDict) -> int:
    return 1
  def __contains__(self: __torch__.torch.nn.modules.container.ModuleDict,
    key: str) -> bool:
    return torch.__contains__(["a"], key)
