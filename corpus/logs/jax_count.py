"""Count JAX compilations with JAX's own bookkeeping, for the log corpus truth files.

Imported first by the jax_*.py log programs. It listens to ``jax.monitoring``:

* ``/jax/core/compile/jaxpr_trace_duration`` (fun_name): one trace;
* ``/jax/core/compile/backend_compile_duration`` (fun_name): one request for
  an executable (wraps ``compiler.compile_or_get_cached``);
* ``/jax/compilation_cache/cache_hits``: recorded inside that request when the
  executable came from the persistent cache (a load, not a compilation).

The program is named as XLA names the module (``jit(train_step)`` ->
``jit_train_step``, the same rule ``mlir.lower_jaxpr_to_module`` uses).
At exit the counts go to the side file given to ``install``; nothing is
printed into the log. ``note_cache_size`` adds ``jit(f)._cache_size()`` of
user functions as a cross-check.
"""
import atexit
import json
import os

import jax
from jax._src import monitoring
from jax._src.interpreters import mlir

_programs = {}
_order = []
_pending_hit = [False]
_cache_sizes = {}


def _module(fun_name):
    return mlir.sanitize_name(fun_name).rstrip("_")


def _entry(module):
    if module not in _programs:
        _programs[module] = {"compilations": 0, "cache_loads": 0, "traces": 0}
        _order.append(module)
    return _programs[module]


def _on_event(event, **kwargs):
    if event == "/jax/compilation_cache/cache_hits":
        _pending_hit[0] = True


def _on_duration(event, duration, **kwargs):
    name = kwargs.get("fun_name")
    if name is None:
        return
    if event == "/jax/core/compile/backend_compile_duration":
        entry = _entry(_module(name))
        entry["cache_loads" if _pending_hit[0] else "compilations"] += 1
        _pending_hit[0] = False
    elif event == "/jax/core/compile/jaxpr_trace_duration":
        _entry(_module(f"jit({name})"))["traces"] += 1


def note_cache_size(module, jitted):
    """Record ``jitted._cache_size()`` (entries in its C++ dispatch cache)."""
    _cache_sizes[module] = jitted._cache_size()


def _cache_files(cache_dir):
    return set(os.listdir(cache_dir)) if cache_dir and os.path.isdir(cache_dir) else set()


def install(side_file, user_programs, cache_dir=None):
    """Start counting; write the counts to ``side_file`` at exit.

    With ``cache_dir`` (the persistent compilation cache), the files this
    run added to it are listed too, per module (the name before the first '-').
    """
    before = _cache_files(cache_dir)
    monitoring.register_event_listener(_on_event)
    monitoring.register_event_duration_secs_listener(_on_duration)

    def write():
        programs = {}
        for module in _order:
            entry = dict(_programs[module])
            programs[module] = {"user_program": module in user_programs, **entry}
        for module in user_programs:
            programs.setdefault(module, {"user_program": True, "compilations": 0,
                                         "cache_loads": 0, "traces": 0})
        out = {
            "framework": "jax",
            "framework_version": f"jax {jax.__version__}, jaxlib {jax.lib.__version__}",
            "how_counted": (
                "jax.monitoring listeners inside the program: each "
                "/jax/core/compile/backend_compile_duration event (fun_name) is one executable "
                "request; it is a cache load when /jax/compilation_cache/cache_hits was recorded "
                "inside it, else a compilation; traces are /jax/core/compile/jaxpr_trace_duration "
                "events. Program = XLA module name (mlir.sanitize_name(fun_name).rstrip('_'))."
                + (" Cross-check: jit(f)._cache_size() of user functions in cache_size."
                   if _cache_sizes else "")),
            "programs": programs,
        }
        if _cache_sizes:
            out["cache_size"] = _cache_sizes
        if cache_dir:
            added = {}
            for name in sorted(_cache_files(cache_dir) - before):
                added.setdefault(name.split("-", 1)[0], []).append(name)
            out["persistent_cache_files_written"] = {k: len(v) for k, v in added.items()}
            out["persistent_cache_files_total"] = len(_cache_files(cache_dir))
        with open(side_file, "w") as stream:
            json.dump(out, stream, indent=1)

    atexit.register(write)
