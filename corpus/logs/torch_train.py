"""Tiny PyTorch/XLA training script for hlodiff testing; config as JSON argv[1]."""
import json
import sys

cfg = dict(opt="sgd", lr=0.05, wd=0.0, clip=None, compile=False, extra_mark=False,
           eval=False, middle=False, autocast=False, ls=0.0, sched=False, steps=3,
           batch=16, n_data=None, dropout=0.1, seed=0)
cfg.update(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})

import numpy as np
import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(cfg["seed"])
dev = torch_xla.device()
rng = np.random.RandomState(1234)
D_IN, D_H, N_CLS = 16, 32, 8


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(D_IN, D_H)
        self.drop = torch.nn.Dropout(cfg["dropout"])
        if cfg["middle"]:
            self.mid = torch.nn.Linear(D_H, D_H)
        self.fc2 = torch.nn.Linear(D_H, N_CLS)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = self.drop(h)
        if cfg["middle"]:
            h = F.relu(self.mid(h))
        return self.fc2(h)


model = Net().to(dev)
if cfg["eval"]:
    model.eval()
else:
    model.train()
if cfg["opt"] == "sgd":
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
elif cfg["opt"] == "adam":
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], foreach=False)
elif cfg["opt"] == "adamw":
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["wd"],
                            foreach=False)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5) if cfg["sched"] else None

n_data = cfg["n_data"] or cfg["batch"] * cfg["steps"]
X = rng.standard_normal((n_data, D_IN)).astype(np.float32)
Y = rng.randint(0, N_CLS, (n_data,))


def step(x, y):
    opt.zero_grad()
    if cfg["autocast"]:
        with torch.autocast("xla", dtype=torch.bfloat16):
            logits = model(x)
    else:
        logits = model(x)
    loss = F.cross_entropy(logits.float(), y, label_smoothing=cfg["ls"])
    loss.backward()
    if cfg["extra_mark"]:
        xm.mark_step()
    if cfg["clip"] is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
    opt.step()
    return loss


if cfg["compile"]:
    step = torch.compile(step, backend="openxla")

for i in range(0, n_data, cfg["batch"]):
    x = torch.tensor(X[i:i + cfg["batch"]], device=dev)
    y = torch.tensor(Y[i:i + cfg["batch"]], device=dev)
    loss = (lambda: step(x, y))() if __import__("os").environ.get("WRAP") else step(x, y)
    xm.mark_step()
    if sched is not None:
        sched.step()
print("loss", loss.item())
