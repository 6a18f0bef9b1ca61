"""A small PyTorch/XLA training loop whose last, smaller batch compiles a second step graph.

Every program PyTorch/XLA compiles is named SyncTensorsGraph.N; each graph
is told apart by its hash. This run compiles: the parameter initialisation,
the training step for batch 4 and again for batch 2 (the recompilation), and
the read-back of the final loss (.item(), a sync in user code).
Counts go to the side file argv[1]: torch_xla.debug.metrics (CompileTime
samples, CachedCompile / UncachedCompile counters) read before and after
every sync point, and the pending graph's hash (torch_xla._XLAC._get_graph_hash).
Used for torch_debug_level1.log and torch_debug_level2.log.
"""
import json
import sys

import numpy as np
import torch
import torch_xla
import torch_xla.debug.metrics as met

counts = {}


def compiles():
    return (met.metric_data("CompileTime") or (0,))[0], met.counter_value("CachedCompile") or 0


def before_sync(tensors):
    """The counters, and the hash of the graph ``tensors`` are waiting on, before a sync.

    The hash (torch_xla._XLAC._get_graph_hash of these tensors) only tells the
    graphs apart; it is not the "Graph Hash" the debug output prints, which
    covers every live tensor. The sync itself stays in the program's own
    lines, so the Python frames in the log show no helper.
    """
    return torch_xla._XLAC._get_graph_hash(tensors).hex(), compiles()


def after_sync(role, state):
    """Book the compilations since ``before_sync`` to ``role`` and its graph."""
    graph, (before, cached_before) = state
    after, cached_after = compiles()
    entry = counts.setdefault(role, {"graphs": {}, "syncs": 0})
    entry["syncs"] += 1
    graph_entry = entry["graphs"].setdefault(graph, {"compilations": 0, "in_memory_cache_hits": 0})
    graph_entry["compilations"] += after - before
    graph_entry["in_memory_cache_hits"] += cached_after - cached_before


device = torch_xla.device()
torch.manual_seed(0)
model = torch.nn.Linear(4, 2, device=device)    # initialised on the device: a graph
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
state = before_sync(list(model.parameters()))
torch_xla.sync()
after_sync("init", state)
data = torch.tensor(np.linspace(-1, 1, 40, dtype=np.float32).reshape(10, 4)).to(device)
labels = torch.ones(10, 2).to(device)
for epoch in range(2):
    for start in range(0, 10, 4):                  # batches of 4, 4, then 2
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(torch.tanh(model(data[start:start + 4])),
                                            labels[start:start + 4])
        loss.backward()
        optimizer.step()
        state = before_sync([loss, *model.parameters()])
        torch_xla.sync()
        after_sync("train_step", state)
final = loss.detach() * 1.0
state = before_sync([final])
value = final.item()                               # a sync in user code
after_sync("readback", state)
print(value)
total, cached = compiles()
uncached = met.counter_value("UncachedCompile") or 0
with open(sys.argv[1], "w") as stream:
    json.dump({
        "framework": "pytorch",
        "framework_version": f"torch {torch.__version__}, torch_xla {torch_xla.__version__}",
        "how_counted": (
            "torch_xla.debug.metrics inside the program, read before and after every sync "
            "point: CompileTime TotalSamples (compilations), CachedCompile (graphs found in "
            "the in-memory compilation cache), UncachedCompile. Every graph PyTorch/XLA "
            "compiles is the HloModule SyncTensorsGraph.N, so 'programs' has one entry; "
            "'sync_points' splits it by the program's sync points, with graphs told apart by "
            "torch_xla._XLAC._get_graph_hash of the tensors synced there (not the Graph Hash "
            "the debug output prints)."),
        "programs": {"SyncTensorsGraph": {"user_program": True, "compilations": total,
                                          "cache_loads": 0, "in_memory_cache_hits": cached}},
        "sync_points": counts,
        "metrics": {"CompileTime_samples": total, "CachedCompile": cached,
                    "UncachedCompile": uncached},
    }, stream, indent=1)
