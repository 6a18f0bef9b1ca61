"""A PyTorch/XLA program that recompiles on purpose, for hlodiff's log scanner tests.

A Python float multiplied into a tensor is traced as a constant, so a new
value is a new graph; a new batch shape is another.
"""
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
w = torch.ones(4, 4, device=device)
for lr, batch in ((0.01, 2), (0.01, 2), (0.02, 2), (0.02, 3)):
    x = torch.ones(batch, 4, device=device)
    w = w - lr * torch.tanh(x.T @ (x @ w))
    xm.mark_step()
print(float(w.sum().cpu()))
