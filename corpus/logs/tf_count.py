"""Count TensorFlow compilations with TF's and XLA's own bookkeeping, for the log corpus.

Imported by the tf_*.py log programs; writes a side file, prints nothing
into the log.

* traces: ``tf.function.experimental_get_tracing_count()``, and the concrete
  functions the tf.function holds (``_list_all_concrete_functions()``; their
  names are the ``__inference_NAME_N`` functions XLA compiles).
* compilations: XLA writes one ``module_NNNN.<module>.before_optimizations.txt``
  into ``--xla_dump_to`` (taken from XLA_FLAGS) for every module it compiles;
  the module name is the function name (``__inference_f_9`` ->
  ``a_inference_f_9__XlaMustCompile_true_...``). A persistent-cache load
  compiles nothing, so it writes no module.
* cache loads (only with ``--tf_xla_persistent_cache_directory``): TF keeps
  one file per executable there (``xla_compile_cache__<signature>__<cluster>__
  XLA_CPU_JIT.pb``, an XlaSerializedCacheEntry whose HloModuleProto names the
  function); a load reads that file. Files the run read but did not write
  (their access time moved past their modification time) are the loads.
"""
import atexit
import json
import os
import re
import sys

import tensorflow as tf

_DUMPED = re.compile(r"module_\d+\.(?P<module>.+?)\.before_optimizations\.txt")


def _dump_dir():
    for flag in os.environ.get("XLA_FLAGS", "").split():
        if flag.startswith("--xla_dump_to="):
            return flag.split("=", 1)[1]
    return None


def function_of_module(module):
    """The function an XLA module compiles: ``__inference_f_9``.

    From a dump file name (``a_inference_f_9__XlaMustCompile_true_..._.1``,
    or ``a_inference_f_9__.1`` when called from inside another function) or a
    persistent cache entry (``__inference_f_9[_XlaMustCompile=true,...]``).
    """
    name = re.sub(r"\.\d+$", "", module)
    match = re.fullmatch(r"(?P<function>.*?_\d+)(?:__.*|\[.*)?", name)
    name = match["function"] if match else name
    return "_" + name[1:] if name.startswith("a_") else name


def _varint(data, pos):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data):
    """(field number, wire type, value) of one protobuf message, wire format only."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def entry_function(path):
    """The function an XlaSerializedCacheEntry holds: hlo_module (2) -> name (1)."""
    # O_NOATIME: reading it here must not look like TF's own load of it later.
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOATIME", 0)), "rb") as stream:
        data = stream.read()
    for number, wire, value in _fields(data):
        if number == 2 and wire == 2:
            for inner, inner_wire, inner_value in _fields(value):
                if inner == 1 and inner_wire == 2:
                    return function_of_module(inner_value.decode())
    return None


def _cache_state(cache_dir):
    if not cache_dir or not os.path.isdir(cache_dir):
        return {}
    out = {}
    for name in os.listdir(cache_dir):
        st = os.stat(os.path.join(cache_dir, name))
        out[name] = (st.st_atime_ns, st.st_mtime_ns)
    return out


def tf_functions(root, seen=None):
    """Every tf.function reachable from ``root`` through closures and wrappers."""
    seen = set() if seen is None else seen
    if id(root) in seen:
        return []
    seen.add(id(root))
    found = []
    if isinstance(root, tf.types.experimental.PolymorphicFunction):
        found.append(root)
        root = getattr(root, "_python_function", None) or getattr(root, "python_function", None)
        if root is None:
            return found
    for cell in getattr(root, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if callable(value) or isinstance(value, tf.types.experimental.PolymorphicFunction):
            found += tf_functions(value, seen)
    wrapped = getattr(root, "__wrapped__", None)
    if wrapped is not None:
        found += tf_functions(wrapped, seen)
    return found


def install(side_file, functions, cache_dir=None, user=lambda label, fn: True, keras=False):
    """Count at exit. ``functions()`` returns [(label, tf.function)] to report.

    tf.function objects with the same label (one Python function wrapped
    again and again) are summed into one entry of ``functions``.
    """
    dump_dir = _dump_dir()
    before = _cache_state(cache_dir)

    def write():
        compiled = {}
        if dump_dir and os.path.isdir(dump_dir):
            for name in sorted(os.listdir(dump_dir)):
                match = _DUMPED.fullmatch(name)
                if match:
                    function = function_of_module(match["module"])
                    compiled[function] = compiled.get(function, 0) + 1
        loads = {}
        after = _cache_state(cache_dir)
        for name, (atime, mtime) in after.items():
            if name in before and atime > before[name][0] and atime > mtime:
                function = entry_function(os.path.join(cache_dir, name))
                loads[function] = loads.get(function, 0) + 1
        written = {}
        for name in set(after) - set(before):
            function = entry_function(os.path.join(cache_dir, name))
            written[function] = written.get(function, 0) + 1

        programs, groups = {}, {}
        for label, fn in functions():
            names = [cf.name.decode() if isinstance(cf.name, bytes) else cf.name
                     for cf in fn._list_all_concrete_functions()]
            is_user = user(label, fn)
            group = groups.setdefault(label, {"user_program": is_user, "compilations": 0,
                                              "cache_loads": 0, "traces": 0,
                                              "tf_function_objects": 0,
                                              "concrete_functions": []})
            group["traces"] += fn.experimental_get_tracing_count()
            group["tf_function_objects"] += 1
            for name in sorted(names, key=lambda n: int(n.rsplit("_", 1)[1])):
                entry = {"user_program": is_user, "compilations": compiled.pop(name, 0),
                         "cache_loads": loads.pop(name, 0), "traces": 1}
                programs[name] = entry
                group["concrete_functions"].append(name)
                group["compilations"] += entry["compilations"]
                group["cache_loads"] += entry["cache_loads"]
        for name in sorted(set(compiled) | set(loads)):   # compiled, but no tf.function known
            programs[name] = {"user_program": False, "compilations": compiled.get(name, 0),
                              "cache_loads": loads.get(name, 0)}
        out = {
            "framework": "tensorflow",
            "framework_version": f"tensorflow {tf.__version__}"
                                 + (f", keras {_keras_version()}" if keras else ""),
            "how_counted": (
                "traces: tf.function.experimental_get_tracing_count() and "
                "_list_all_concrete_functions() (one trace per concrete function __inference_*); "
                "compilations: XLA's module_NNNN.<module>.before_optimizations.txt files in the "
                "--xla_dump_to directory, one per compiled module, attributed to the function the "
                "module name carries"
                + ("; cache loads: persistent cache files (tf_xla_persistent_cache_directory) this "
                   "run read but did not write (access time moved past modification time), "
                   "attributed by the function named in the entry's HloModuleProto"
                   if cache_dir else "")
                + ". 'programs' are concrete functions (the names the framework compiles); "
                  "'functions' group them per tf.function (hlodiff normalises "
                  "a_inference_NAME_N to a_inference_NAME, which is this grouping)."),
            "programs": programs,
            "functions": groups,
        }
        if cache_dir:
            out["persistent_cache_files_written"] = written
            out["persistent_cache_files_total"] = len(after)
        with open(side_file, "w") as stream:
            json.dump(out, stream, indent=1)

    atexit.register(write)


def _keras_version():
    keras = sys.modules.get("keras")
    return getattr(keras, "__version__", None)
