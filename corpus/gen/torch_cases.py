"""Generate the PyTorch/XLA cases of the hlodiff real-data corpus.

Usage (from the repository root, with the torch virtualenv):

    /root/venvs/torch/bin/python corpus/gen/torch_cases.py               # all cases
    /root/venvs/torch/bin/python corpus/gen/torch_cases.py torch_dtype   # some cases

Each run is a separate child process (``--run CFG``) with PJRT_DEVICE=CPU,
XLA_HLO_DEBUG=1 (op_type / op_name / source_file / source_line metadata) and
``XLA_FLAGS=--xla_dump_to=corpus/<case>/run_<a|b>``.  Afterwards bulky sidecars
are removed and sanitize.py rewrites paths.  truth.json files were written by
reading the dumps; check_truth.py checks them.

NOTE: line numbers of this file are recorded in the dumps (source_line=...);
editing it moves them: regenerate and re-check.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)

DEFAULTS = dict(
    lr=0.01, seed=0, temperature=2.0, refine_steps=3, class_w_hot=2.0, batch=16,
    mlp_dtype="float32", squash_input=False, warmup=False,
)

CASES = {
    # runs that should share an executable but do not
    "torch_batch_size": dict(a=dict(batch=16), b=dict(batch=32)),
    "torch_dtype": dict(a=dict(mlp_dtype="float32"), b=dict(mlp_dtype="bfloat16")),
    "torch_op_added": dict(a=dict(squash_input=False), b=dict(squash_input=True)),
    "torch_loop_trip_count": dict(a=dict(refine_steps=3), b=dict(refine_steps=4)),
    # 1.0 is one of torch-xla's "special" scalars (kept as a constant); 2.0 is
    # not (it travels as a device-data parameter)
    "torch_special_scalar": dict(a=dict(temperature=1.0), b=dict(temperature=2.0)),
    # controls: torch-xla passes these values as device data (parameters)
    "torch_learning_rate": dict(a=dict(lr=0.01), b=dict(lr=0.02)),
    "torch_seed": dict(a=dict(seed=0), b=dict(seed=1)),
    "torch_frozen_small": dict(a=dict(class_w_hot=2.0), b=dict(class_w_hot=3.0)),
    "torch_extra_compilations": dict(a=dict(warmup=False), b=dict(warmup=True)),
}

D_IN, D_HIDDEN, N_CLASSES = 32, 64, 10


def run(cfg):
    import numpy as np
    import torch
    import torch.nn.functional as F
    import torch_xla

    torch.manual_seed(cfg["seed"])
    dev = torch_xla.device()
    mlp_dtype = getattr(torch, cfg["mlp_dtype"])
    rng = np.random.RandomState(1234)

    if cfg["warmup"]:
        # unrelated graphs first: module ids and graph ids shift
        v = torch.arange(5.0, device=dev)
        torch.cumsum(v * 3.0, 0).sum().item()
        torch.outer(torch.ones(3, device=dev), torch.ones(4, device=dev)).max().item()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(D_IN, D_HIDDEN)
            self.fc2 = torch.nn.Linear(D_HIDDEN, D_HIDDEN)
            self.out = torch.nn.Linear(D_HIDDEN, N_CLASSES)

        def forward(self, x):
            if cfg["squash_input"]:
                x = torch.tanh(x)
            z = F.relu(F.linear(x.to(mlp_dtype), self.fc1.weight.to(mlp_dtype),
                                self.fc1.bias.to(mlp_dtype))).float()
            z = F.dropout(z, p=0.1, training=True)
            z = self.fc2(z)
            for _ in range(cfg["refine_steps"]):
                z = z + 0.1 * torch.tanh(z)
            return self.out(z) / cfg["temperature"]

    model = Model().to(dev)
    # side program: an "init" graph (re-scales the weights) synced on its own
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    torch_xla.sync()

    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], foreach=False)
    class_weights = np.ones((N_CLASSES,), np.float32)
    class_weights[2] = cfg["class_w_hot"]
    cw = torch.tensor(class_weights, device=dev)

    b = cfg["batch"]
    x = torch.tensor(rng.standard_normal((b, D_IN)), dtype=torch.float32, device=dev)
    y = torch.tensor(rng.randint(0, N_CLASSES, (b,)), dtype=torch.long, device=dev)

    opt.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y, weight=cw)
    loss.backward()
    opt.step()
    torch_xla.sync()
    print("loss", loss.item())


BULKY = ("-buffer-assignment-values.txt", "-buffer-assignment.txt", ".ll", ".o", ".html",
         ".mlir", "-live-range.txt", "-memory-usage-report.txt")


def prune(d):
    for root, dirs, files in os.walk(d):
        for f in files:
            if f.endswith(BULKY) or root != d:
                os.remove(os.path.join(root, f))
    for root, dirs, files in os.walk(d, topdown=False):
        if root != d and not os.listdir(root):
            os.rmdir(root)


def compact(d):
    """Re-create d so its directory entry is small again after pruning."""
    tmp = d + ".compact"
    shutil.copytree(d, tmp)
    shutil.rmtree(d)
    os.rename(tmp, d)


def make_case(name):
    spec = CASES[name]
    case_dir = os.path.join(CORPUS, name)
    for run_id in ("a", "b"):
        cfg = dict(DEFAULTS)
        cfg.update(spec[run_id])
        out = os.path.join(case_dir, "run_" + run_id)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        env = dict(os.environ)
        env["XLA_FLAGS"] = "--xla_dump_to=%s" % out
        env["PJRT_DEVICE"] = "CPU"
        env["XLA_HLO_DEBUG"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
        subprocess.run([sys.executable, os.path.abspath(__file__), "--run", json.dumps(cfg)],
                       env=env, check=True)
        prune(out)
        compact(out)
    subprocess.run([sys.executable, os.path.join(HERE, "sanitize.py"), case_dir], check=True)


def main(argv):
    if argv[:1] == ["--run"]:
        run(json.loads(argv[1]))
        return
    for name in (argv or list(CASES)):
        print("==", name, flush=True)
        make_case(name)


if __name__ == "__main__":
    main(sys.argv[1:])
