"""What to do about a finding: one line a practitioner would say, by kind and framework.

One table, so the advice stays consistent and easy to review. A rule names
the kind of finding it applies to, the framework (None: any), an optional
test on the finding, and the advice. The first rule that fits is used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..dumps.environment import HLO_DEBUG, is_version
from ..model import element_value, is_library_file
from .findings import (ARGUMENT_PASSING, ARGUMENT_SHARDING, DEVICE_MESH, EVERY_MATMUL, REWIRED,
                       RESULT_SHARDING, SHARDING_ANNOTATION, SIXTY_FOUR_BIT, Finding)
from .recompute import is_checkpointing
from .unroll import is_unrolling


@dataclass(frozen=True)
class Rule:
    kind: str | None  # None: any kind
    framework: str | None
    applies: Callable[[Finding], bool]
    advice: str


def _always(_: Finding) -> bool:
    return True


def _float_scalar(finding: Finding) -> bool:
    if finding.element_type is not None:  # an f32 prints 2.0 as "2"
        return _FLOATING.match(finding.element_type) is not None and _scalars(finding)
    try:
        return all(isinstance(element_value((v or "").strip()), float)
                   for v in (finding.old, finding.new))
    except (ValueError, AttributeError):
        return False


_PACKAGE = re.compile(r"(?:site|dist)-packages>?/([^/]+)")


def _library_stacks(finding: Finding) -> list[tuple]:
    """The call stacks of the finding's places, when every one of them is
    innermost in installed code (a flax Dropout's rate, a Keras layer's
    epsilon): the value is the library's setting, not a literal of the
    user's; [] when a place has no stack or the user's code is innermost."""
    stacks = [o.stack for o in finding.origins if o.stack]
    if not stacks or len(stacks) < len([o for o in finding.origins if o]) or not all(
            is_library_file(s[0].file) for s in stacks):
        return []
    return stacks


def _in_library(scalar: Callable[[Finding], bool],
                *packages: str) -> Callable[[Finding], bool]:
    """A value (a float, an integer: ``scalar``) set inside installed code; in
    one of ``packages`` when given."""
    def test(finding: Finding) -> bool:
        return scalar(finding) and bool(_library_stacks(finding)) and (
            not packages or any(p in _library(finding).split(", ") for p in packages))
    return test


def _library(finding: Finding) -> str:
    """The installed packages the value was set in, the one the user's code
    called first: ``transformers, flax``."""
    names: list[str] = []
    for stack in _library_stacks(finding):
        inner = []
        for frame in stack:
            if not is_library_file(frame.file):
                break
            found = _PACKAGE.search(frame.file.replace("\\", "/"))
            if found:
                inner.append(found.group(1).removesuffix(".py"))
        for name in reversed(inner):
            if name not in names:
                names.append(name)
    return ", ".join(names) or "an installed package"


def _integer_scalar(finding: Finding) -> bool:
    return (finding.element_type is None or _FLOATING.match(finding.element_type) is None) \
        and all((v or "").strip().lstrip("-").isdigit() for v in (finding.old, finding.new))


_FLOATING = re.compile(r"(f|bf|c)\d")  # f32, bf16, f8e4m3fn, c64: values print as "2" too


def _scalars(finding: Finding) -> bool:
    """Both values one number each (not an array or a tuple)."""
    return all(v and not v.lstrip().startswith(("{", "(")) for v in (finding.old, finding.new))


def _zero_or_one(finding: Finding) -> bool:
    return (finding.old or "").strip() in ("0", "1") or (finding.new or "").strip() in ("0", "1")


def _model_dimension(finding: Finding) -> bool:
    """Weights the step returns changed shape (findings.py says so in the summary)."""
    return finding.summary.startswith("model dimension ")


def _stacked_layers(finding: Finding) -> bool:
    """Layers stacked or unstacked between the runs (findings.py says so)."""
    return finding.summary.startswith(("layers stacked:", "layers unstacked:"))


def _loop_length(finding: Finding) -> bool:
    """An input's first dimension moved with a loop's bound (findings.py says so)."""
    return finding.summary.startswith("loop length ")


def _shrinks(finding: Finding) -> bool:
    """A dimension got smaller: what a short last batch looks like."""
    pairs = re.findall(r"(\d+) -> (\d+)", finding.summary)
    return bool(pairs) and all(int(n) < int(o) for o, n in pairs)


def _printed_once(finding: Finding) -> bool:
    """A constant printed in one run, {...} in the other."""
    return (finding.old == "{...}") != (finding.new == "{...}")


_SCALAR_CONSTANT = re.compile(r"constant\((.*?)\)[,)]")


def _scales_by_constant(finding: Finding) -> bool:
    """Ops added or removed that multiply or add a scalar constant: what a
    hyperparameter of 1 or 0 in one run leaves after folding. Not when they
    come with parameters of their own: folding takes ops away, never inputs
    (optax's momentum adds a trace per weight to the step's arguments, and
    ops that scale it by 0.9)."""
    text = finding.new or finding.old or ""
    return bool(_SCALAR_CONSTANT.search(text)) and any(
        opcode in text for opcode in ("multiply", "divide", "add", "subtract")) and not any(
        (place.new or place.old or "").startswith("parameter ") for place in finding.where)


def _folded_away(kind: str, scaling: str, other: str, code: str, value: str) -> Rule:
    """The advice for ops that scale or shift by a constant in run ``scaling``
    alone: a change to the code, or a value of 1 or 0 in run ``other``, whose
    multiply or add the lowering folds away. One wording for both directions."""
    return Rule(kind, None, _scales_by_constant,
                f"Run {scaling} scales or shifts by {{constant}} {{here}} and run {other} does "
                f"not: the model code {code}, or a value (a learning rate, a scale) {value} 1 or "
                f"0 in run {other}, where its multiply or add is folded away when the program is "
                "lowered. Pass such values as arguments.")


def _moved_inside(inside: str, other: str, code: str) -> Rule:
    """The advice for ops that run ``inside`` runs in a branch or loop body
    of its own (findings.py's op_moved: that side's value reads ``inside
    ...``). One wording for both directions."""
    def applies(finding: Finding) -> bool:
        return ((finding.new if inside == "b" else finding.old) or "").startswith("inside ")
    return Rule("op_moved", None, applies,
                f"These operations did not go: run {inside} runs them inside a branch or a loop "
                f"that run {other} does not have. The code {code} them under a condition (a "
                "loss-scale optimizer skips the update when the gradients are not finite: "
                "Keras' LossScaleOptimizer under mixed_float16, a tf.cond or lax.cond around "
                "the update) or in a loop; expected after that change, which compiles once.")


# The computations JAX's random functions are lowered into (jax.random.uniform
# is a call to _uniform, which calls threefry2x32).
_JAX_RANDOM = re.compile(r"(threefry2x32|_threefry\w*|_uniform|_bernoulli|_normal\w*|"
                         r"_truncated_normal|_randint|_random_bits|random_bits|_gamma\w*|"
                         r"_categorical|_gumbel|_permutation|_choice)(\.\d+)?")


def _inside_jax_random(finding: Finding) -> bool:
    """Is every place of the finding inside the code JAX's random functions
    lower to: the same Python code drawing its bits another way, as a
    flipped jax_threefry_partitionable does (a helper session's run read
    "dtype u64[4] -> u32[64]" with mixed-precision advice)? Names and source
    locations there are not bits drawn another way: the computation was
    traced first from another place (a Hugging Face Flax model's layers under
    jax.checkpoint: "metadata Dropout -> Dense" in _threefry_fold_in)."""
    return finding.kind != "metadata" and bool(finding.where) and all(
        _JAX_RANDOM.fullmatch(w.computation or "") for w in finding.where)


# A StableHLO constant of one value for a shaped tensor: ``dense<1> : tensor<4x16xi32>``.
_SPLAT = re.compile(r"stablehlo\.constant dense<[^\[\"<>][^<>]*> : tensor<\d+x")


def _splat_constant(finding: Finding) -> bool:
    """The first line that differs holds a splat constant of a shaped tensor
    on one side: an array of one value closed over, where the other run
    broadcasts it (hlodiff/dumps/mlir.py)."""
    return any(_SPLAT.search(side or "") for side in (finding.old, finding.new))


def _rewired(finding: Finding) -> bool:
    return finding.summary.startswith(REWIRED)


def _scalar(finding: Finding) -> bool:
    """A dtype change of a scalar (``bf16[] -> f32[]``): a value the code
    wrote, whose kind of number (weak or strong) decides the array's dtype."""
    return all(side is not None and re.fullmatch(r"\w+\[\](\{\})?", side)
               for side in (finding.old, finding.new))


def _sixty_four_bit(finding: Finding) -> bool:
    """Values widened to 64 bits in a run that alone has such (findings.py says so)."""
    return finding.summary.startswith(SIXTY_FOUR_BIT)


def _every_matmul(finding: Finding) -> bool:
    """A precision set on every matmul and convolution (findings.py says so)."""
    return finding.summary.startswith(EVERY_MATMUL)


def _argument_passing(finding: Finding) -> bool:
    """Reshapes the framework put around an argument (findings.py says so)."""
    return finding.summary.startswith(ARGUMENT_PASSING)


def _annotates(what: str) -> Callable[[Finding], bool]:
    """A sharding JAX gave an argument or the result (findings.py says so),
    where the summary names ``what`` (``typed PRNG key``, ``the result``)."""
    def test(finding: Finding) -> bool:
        return finding.summary.startswith(SHARDING_ANNOTATION) and what in finding.summary
    return test


def _arguments_only(finding: Finding) -> bool:
    """Added or removed: parameters and nothing else (no op reads them anew)."""
    return bool(finding.where) and all((w.new or w.old or "").startswith("parameter ")
                                       for w in finding.where)


def _argument_count(kind: str, more: str, fewer: str) -> tuple[Rule, Rule]:
    """The advice for an argument the program takes in run ``more`` only,
    with no op of its own: jax.jit leaves out what the function does not
    read unless keep_unused=True, so a function that reads it in one run
    only (another change replaced what read it: a Keras learning rate turned
    into a schedule leaves its variable unread), keep_unused, or a new
    argument, all look so."""
    return (
        Rule(kind, "jax", _arguments_only,
             f"The compiled program takes an argument in run {more} that it does not in run "
             f"{fewer}: jax.jit leaves out an argument the function does not read unless "
             f"keep_unused=True. Either the function reads it in run {more} only (another "
             "change replaced what read it, as a learning-rate schedule replaces the rate it "
             "was given: see the other findings), or keep_unused differs between the runs, or "
             "an unread argument was added to the step. Pass the same arguments with the same "
             "keep_unused in both runs, or expect one compilation for each."),
        Rule(kind, None, _arguments_only,
             f"The compiled program takes an argument in run {more} that it does not in run "
             f"{fewer}, and no operation changed with it: an argument nothing reads was added "
             "to the step, or is kept in one run only. Pass the same arguments in both runs."))


# What an input that weights or masks values the step computes anyway adds
# beside it: the multiply (a weight) or select (a mask), and the broadcasts,
# reshapes and converts that bring it to their shape.
_WEIGHTING = frozenset({"multiply", "divide", "select", "and", "broadcast", "reshape", "convert",
                        "bitcast", "copy", "transpose"})


def _weighted_by_new_arguments(finding: Finding) -> bool:
    """Added or removed: parameters, and ops beside them that only weight or
    mask by them. A layer added brings weights too, and ops of its own
    (a LayerNorm's reduce and rsqrt): no input given once."""
    texts = [(w.new or w.old or "") for w in finding.where]
    ops = [t.split(" ", 1)[0] for t in texts if not t.startswith("parameter ")]
    return len(ops) < len(texts) and bool(ops) and all(op in _WEIGHTING for op in ops)


def _argument_given(kind: str, more: str, fewer: str) -> Rule:
    """The advice for ops that come with arguments of their own in run
    ``more``: what an optional input given in one run only adds (Keras'
    fit(sample_weight=...) adds an f32[batch] argument and the multiply
    reading it); folding takes ops away, never inputs, so no value of 1 or
    0 does this. One wording for both directions."""
    return Rule(kind, None, _weighted_by_new_arguments,
                f"Run {more}'s program takes an argument that run {fewer}'s does not, and these "
                "operations only weight or mask by it: an input given in one run only, such as "
                "optional weights (Keras fit's sample_weight or class_weight, per-sample weights "
                "of a loss) or a mask. Expected when the runs are called so; pass the same "
                "arguments in both (weights of ones where none are wanted) to share one program.")


def _mesh(finding: Finding) -> bool:
    """A device mesh laid out otherwise (findings.py says so)."""
    return finding.summary.startswith(DEVICE_MESH)


def _returned(finding: Finding) -> bool:
    """A result returned with another sharding (findings.py says so)."""
    return finding.summary.startswith(RESULT_SHARDING)


def _placed(finding: Finding) -> bool:
    """Arguments given another sharding (findings.py says so)."""
    return finding.summary.startswith(ARGUMENT_SHARDING)


def _version(finding: Finding) -> bool:
    """A version difference, by what its detail starts with (a flag's value may
    hold the word: hlodiff/dumps/environment.py)."""
    return is_version(finding.detail)


def _says(*words: str) -> Callable[[Finding], bool]:
    """Do the finding's values hold one of ``words``?"""
    def test(finding: Finding) -> bool:
        text = f"{finding.old or ''} {finding.new or ''}"
        return any(word in text for word in words)
    return test


def _every(*tests: Callable[[Finding], bool]) -> Callable[[Finding], bool]:
    """Do all of ``tests`` hold?"""
    def test(finding: Finding) -> bool:
        return all(t(finding) for t in tests)
    return test


def _named(*words: str) -> Callable[[Finding], bool]:
    def test(finding: Finding) -> bool:
        text = " ".join(filter(None, [finding.detail, finding.summary] +
                               [o.op_name or "" for o in finding.origins]))
        return any(word in text for word in words)
    return test


RULES = (
    Rule(None, "jax", _inside_jax_random,
         "This differs inside the code JAX generates random bits with, not in the model's: "
         "the PRNG settings (jax_threefry_partitionable, jax_default_prng_impl) or the JAX "
         "version differ between the runs; set them alike in both runs."),
    Rule("environment", None, _version,
         "The runs used different framework or XLA versions: pin the same versions "
         "(and jaxlib/XLA build) in both, or expect every program to recompile."),
    Rule("environment", None, _named(HLO_DEBUG),
         "torch-xla writes op metadata with XLA_HLO_DEBUG=1 only, and its graph hash (its "
         "cache key) holds XLA_HLO_DEBUG and XLA_IR_DEBUG: set them alike in both runs."),
    # JAX sets some of XLA's options itself, from its own configuration
    # (jax/_src/compiler.py get_compile_options): a run with
    # JAX_DISABLE_MOST_OPTIMIZATIONS=1, its XLA_FLAGS the same, read "set the
    # same XLA_FLAGS in both" (a helper session's run)
    Rule("environment", "jax",
         _named("xla_backend_optimization_level", "xla_llvm_disable_expensive_passes"),
         "XLA's optimization level differs between the runs: JAX sets "
         "xla_backend_optimization_level=0 and xla_llvm_disable_expensive_passes itself when "
         "jax_disable_most_optimizations is on (JAX_DISABLE_MOST_OPTIMIZATIONS=1 in the "
         "environment, or jax.config.update), as XLA_FLAGS can. Set both alike in both runs "
         "(only the dump flags may differ)."),
    Rule("environment", "jax", _every(_named("xla_disable_hlo_passes"),
                                      _says("rematerialization")),
         "XLA's rematerialization pass is off in one run: JAX turns it off itself when "
         "jax_compiler_enable_remat_pass is False (JAX_COMPILER_ENABLE_REMAT_PASS=0 in the "
         "environment, or jax.config.update), as XLA_FLAGS=--xla_disable_hlo_passes can. Set "
         "both alike in both runs (only the dump flags may differ)."),
    Rule("environment", "jax", _named("flag", "debug_options"),
         "XLA's options differ between the runs: set the same XLA_FLAGS in both, and the "
         "same compiler_options to jax.jit where the code passes them (only the dump flags "
         "may differ)."),
    # TensorFlow sets some of XLA's options itself: enable_op_determinism sets
    # xla_gpu_deterministic_ops with the user's XLA_FLAGS the same
    Rule("environment", "tensorflow", _named("flag", "debug_options"),
         "XLA's options differ between the runs: set the same XLA_FLAGS in both (only the "
         "dump flags may differ), and the same TensorFlow settings that set XLA's options "
         "(tf.config.experimental.enable_op_determinism sets xla_gpu_deterministic_ops)."),
    Rule("environment", None, _named("flag", "debug_options"),
         "XLA_FLAGS differ between the runs: set the same flags in both (only the dump "
         "flags may differ)."),
    Rule("environment", None, _named("compile option device_assignment"),
         "The program was placed on other devices (its device assignment): JAX keys it, so "
         "the same program on another device compiles again; place it on the same devices "
         "in both runs."),
    Rule("environment", None, _named("compile option"),
         "JAX keys the compile options: set the same ones in both runs "
         "(jax_exec_time_optimization_effort, jax_memory_fitting_effort, jit's "
         "compiler_options)."),
    Rule("environment", None, _named("host device"),
         "The runs had different numbers of host devices "
         "(--xla_force_host_platform_device_count): JAX keys the device topology, so a "
         "program whose dump records it compiles again; set the same count in both runs."),
    Rule("environment", None, _named("device topology"),
         "The runs had devices of another kind or CPUs with other features: JAX keys the "
         "device topology, so a persistent cache shared between such machines misses."),
    Rule("environment", None, _always,
         "The runs compiled for different machines or devices: compare runs on the same "
         "platform and device count."),
    Rule("constant", "jax", _named("random", "threefry", "rng", "key"),
         "A PRNG seed or key is baked into the program: pass the key as an argument to the "
         "jitted function."),
    Rule("constant", "jax", _in_library(_float_scalar, "optax"),
         "A Python float set inside installed library code ({library}) is baked into the "
         "jitted function: a setting of an optimizer (a constructor argument: a learning "
         "rate, a momentum, a decay), not a value of your step. Each value compiles a "
         "program of its own: expected after changing it; to change it without recompiling, "
         "wrap the optimizer in optax.inject_hyperparams, which makes its values arguments."),
    Rule("constant", "jax", _in_library(_float_scalar),
         "A Python float set inside installed library code ({library}) is baked into the "
         "jitted function: a setting of the library's model or layer (a config field or a "
         "constructor argument: a dropout rate, an epsilon, a momentum), not a value of "
         "your step. Each value compiles a program of its own: expected after changing it; "
         "keep it the same in runs that should share one program."),
    Rule("constant", "jax", _float_scalar,
         "A Python float is baked into the jitted function: one it closes over, or a setting "
         "of a layer or optimizer (a dropout rate, a momentum, a schedule's values); each "
         "value compiles a program of its own. To change it without recompiling, pass it "
         "as an array argument (jnp.asarray), or mark it static on purpose."),
    Rule("constant", "tensorflow", _float_scalar,
         "A Python number is baked into the compiled step: one the tf.function captured, or "
         "a setting (a dropout rate, a momentum, a Keras optimizer's clip value); each value "
         "compiles a program of its own. To change it without recompiling, keep it in a "
         "tf.Variable or pass it as a tensor argument."),
    Rule("constant", "pytorch", _float_scalar,
         "A Python scalar is baked into the graph: keep it in a tensor on the device "
         "(torch.tensor(value, device=xla_device)) so it becomes a graph input."),
    Rule("constant", None, _in_library(_integer_scalar),
         "An integer set inside installed library code ({library}) is baked into the "
         "program: a setting of the library's optimizer, model or layer (a constructor "
         "argument: gradient accumulation steps, a loss scale's growth interval, a number of "
         "heads), not a value of your step. Each value compiles a program of its own: "
         "expected after changing it; keep it the same in runs that should share one program."),
    Rule("constant", None, _integer_scalar,
         "An integer baked into the program changed (a loop bound, a step count): pass it "
         "as an argument, or make it the same in both runs."),
    Rule("constant", None, _always,
         "A constant baked into the program changed: pass values that change between "
         "runs as arguments instead of closing over them."),
    Rule("constant_to_parameter", "pytorch", _zero_or_one,
         "torch-xla turns the scalars 0 and 1 into constants and other scalars into graph "
         "inputs: keep such scalars in device tensors."),
    Rule("constant_to_parameter", None, _always,
         "A value is a constant in one run and an argument in the other: pass it the same "
         "way in both (an argument is better: changing it then recompiles nothing)."),
    Rule("parameter_to_constant", None, _always,
         "A value is an argument in one run and a constant in the other: pass it the same "
         "way in both (an argument is better: changing it then recompiles nothing)."),
    Rule("parameter", "jax", _named("PRNG key data"),
         "A PRNG key's data changed size: JAX keys are u32[2] under threefry2x32 and u32[4] "
         "under rbg or unsafe_rbg: set the same jax_default_prng_impl (or the same impl= to "
         "jax.random.key) in both runs."),
    Rule("parameter", None, _model_dimension,
         "The model's own weights changed shape (a vocabulary, a width, a number of stacked "
         "layers): expected after a change to the model's configuration; each configuration "
         "compiles once."),
    Rule("parameter", None, _stacked_layers,
         "The same layers are one set of weights per layer in one run and stacked into one "
         "array per weight in the other (flax's nn.scan, a scan over layers, vmapped "
         "initialisation): a change to the model's code, which compiles once; the "
         "arguments are paired by position across the two layouts, so what else this "
         "report says of them is unreliable."),
    Rule("parameter", None, _loop_length,
         "A loop's length changed with this input's first dimension: the number of steps "
         "a lax.scan or fori_loop runs is a Python int baked into the program (scan's "
         "length, a sequence length, a loop bound), and each length compiles once. Pad "
         "sequences to a few fixed lengths (masking the padding), or make the length the "
         "same in both runs."),
    # a smaller batch is a short last batch only when the data is not a
    # multiple of the batch size: Keras' predict(batch_size=4) after 8, on 16
    # samples, read "as a short last batch does" (a helper session's run)
    Rule("parameter", None, _shrinks,
         "An input got smaller: the batch size differs between the runs, or this is the "
         "short last batch of an epoch (the data is not a multiple of the batch size). Feed "
         "the same batch size in both runs; for a last batch, use drop_remainder=True (or "
         "drop_last) or pad it to the full size."),
    Rule("parameter", None, _always,
         "Input shapes or dtypes changed: feed every step the same shapes (fixed batch "
         "size, padding or bucketing), or expect one compilation per shape."),
    Rule("parameter_order", "tensorflow", _always,
         "A TF capture versus an explicit argument changes the argument order: pass the "
         "value the same way (captured or as an argument) in both runs."),
    Rule("parameter_order", None, _always,
         "The program's arguments changed order: pass them in the same order and "
         "structure in both runs (a list or dict built by looping over a set changes order "
         "from process to process with PYTHONHASHSEED: build it in sorted order)."),
    # JAX makes every value 32-bit unless jax_enable_x64 is on: a run with
    # 64-bit values where the other has none is that switch, not the code
    # (a helper session's flax step read "keep such values Python scalars")
    Rule("dtype", "jax", _sixty_four_bit,
         "JAX computes in 64 bits only with jax_enable_x64 on, for the whole process: one "
         "run had it on (JAX_ENABLE_X64=1 in its environment, or "
         "jax.config.update('jax_enable_x64', True) in the script, a notebook or a library "
         "it imports) and the other off. The model code did not change here: set it alike "
         "in both runs."),
    Rule("dtype", None, _sixty_four_bit,
         "One run computes in 64 bits where the other has no 64-bit value at all: a "
         "process-wide default dtype (tf.keras.backend.set_floatx('float64'), "
         "torch.set_default_dtype(torch.float64)) or 64-bit inputs in that run. Set the "
         "same default dtype and feed the same dtypes in both runs."),
    Rule("dtype", "jax", _scalar,
         "A scalar's dtype changed: JAX gives a Python scalar (2.0) the dtype of the array "
         "it meets, and a NumPy scalar (np.float32(2.0)) or a jnp array its own, which "
         "promotes the array it meets (bf16 to f32). Keep such values Python scalars, or "
         "cast them to the array's dtype, {here}; or check mixed-precision settings."),
    Rule("dtype", None, _always,
         "A dtype changed: check mixed-precision settings and astype/casts {here}."),
    # a block wrapped in jax.checkpoint, or another policy, read "replaced: 8
    # ops by 170 ops" above a dozen renamed scopes (recompute.py)
    Rule("replaced", None, is_checkpointing,
         "What the backward pass recomputes instead of keeping changed: a block was wrapped "
         "in jax.checkpoint (jax.remat, flax's nn.remat, equinox's filter_checkpoint) in one "
         "run only, or its policy= (jax.checkpoint_policies) or prevent_cse= differs. "
         "Expected when you changed it, to trade memory for compute: the program recompiles "
         "once. If not, look for a checkpoint or remat switched by a configuration value."),
    # lax.scan's unroll= read "added: 43 ops (slice, call, concatenate, reshape,
    # get-tuple-element)" with advice about Python branches (unroll.py)
    Rule("replaced", None, is_unrolling,
         "The loop's unroll factor changed (jax.lax.scan's or fori_loop's unroll=, flax's "
         "nn.scan(unroll=)): it computes the same, with more or fewer steps to an "
         "iteration, but the compiled program differs. Expected when you changed it, to "
         "trade compile time and code size for speed: the program recompiles once. If not, "
         "look for an unroll= set from a configuration value {here}."),
    Rule("replaced", None, _always,
         "This part of the model was rewritten: expected after a code change; the program "
         "recompiles once for it."),
    Rule(None, "tensorflow", _argument_passing,
         "TensorFlow reshapes each argument it gets as a tensor, and not the value of a "
         "tf.Variable (a resource): this value reached the function as a tensor in the run "
         "with the reshape (a captured tf.constant or numpy array, or a tensor argument) "
         "and as a tf.Variable in the other. The model code did not change here: capture or "
         "pass the value the same way in both runs."),
    Rule(None, None, _argument_passing,
         "The framework adds this reshape of an argument itself (it has no op_name): the "
         "model code did not change here, the way this value reaches the compiled function "
         "did. Pass it the same way in both runs."),
    Rule(None, "jax", _annotates("(a typed PRNG key)"),
         "JAX annotates an argument so when it is a typed PRNG key (jax.random.key, flax's "
         "nnx.Rngs) and not when it is a raw uint32 key (jax.random.PRNGKey): the model code "
         "did not change here, the kind of key passed in did. Pass keys of one kind in both "
         "runs (jax.random.key_data and jax.random.wrap_key_data convert between them)."),
    Rule(None, "jax", _annotates("the result"),
         "JAX annotates the result so when jax.jit is given out_shardings: the model code "
         "did not change here. Give jax.jit the same out_shardings in both runs."),
    Rule(None, "jax", _annotates(""),
         "JAX annotates this argument with a sharding of its own: the model code did not "
         "change here, the way the argument is placed did (in_shardings, jax.device_put "
         "with a sharding). Place it the same way in both runs."),
    *_argument_count("op_added", "b", "a"),
    *_argument_count("op_removed", "a", "b"),
    _argument_given("op_added", "b", "a"),
    _argument_given("op_removed", "a", "b"),
    _moved_inside("b", "a", "now puts"),
    _moved_inside("a", "b", "no longer puts"),
    _folded_away("op_added", "b", "a", "adds it", "was"),
    _folded_away("op_removed", "a", "b", "no longer does it", "is"),
    # jax.jit traces a Python loop or branch on a static argument as often as
    # it runs: static_argnums' value is a configuration value too
    Rule("op_added", "jax", _always,
         "The model code adds operations here: expected after a code change; otherwise "
         "look for a Python branch or loop on a configuration value or on a static "
         "argument (jax.jit's static_argnums, static_argnames) {here}."),
    Rule("op_removed", "jax", _always,
         "The model code no longer runs these operations: expected after a code change; "
         "otherwise look for a Python branch or loop on a configuration value or on a "
         "static argument (jax.jit's static_argnums, static_argnames) {here}."),
    Rule("op_added", None, _always,
         "The model code adds operations here: expected after a code change; otherwise "
         "look for a Python branch on a configuration value {here}."),
    Rule("op_removed", None, _always,
         "The model code no longer runs these operations: expected after a code change; "
         "otherwise look for a Python branch on a configuration value {here}."),
    Rule("elided_constant", None, _printed_once,
         "One run printed this constant and the other did not (--xla_dump_large_constants "
         "in one run only): dump both runs with the same flags to compare like with like."),
    Rule("elided_constant", None, _named("module.mlir shows different values"),
         "A constant baked into the program changed (its values, from module.mlir): pass "
         "values that change between runs (weights, tables) as arguments instead of closing "
         "over them."),
    Rule("elided_constant", None, _always,
         "XLA printed this constant as {...}: dump again with "
         "XLA_FLAGS=--xla_dump_large_constants (or keep module.mlir) to compare its values."),
    Rule("stablehlo", None, _splat_constant,
         "JAX hashes the StableHLO, which differs here though XLA gets the same HLO: one run "
         "closes over an array of one repeated value (a jnp.ones mask or a jnp.zeros bias made "
         "outside the jitted function, a stablehlo.constant of that shape) and the other builds "
         "it inside (a broadcast): XLA makes both a broadcast. Build it the same way in both: "
         "inside the function, or passed as an argument."),
    Rule("stablehlo", None, _always,
         "JAX hashes the StableHLO, which differs here though XLA gets the same HLO: a "
         "Python scalar in one run and an array in the other (weak types), or outputs named "
         "otherwise; pass the same kinds of values and return the same structure in both."),
    Rule("metadata", None, _always,
         "Only names and source locations differ: this recompiles nothing by itself."),
    Rule("operands", None, _rewired,
         "The program computes the same operations, wired in another order: layers, loss "
         "terms or optimizer steps applied in another order by a change to the code; or, if "
         "the code did not change between the runs, an order that came from Python while "
         "tracing, typically a loop over a set, whose order changes from process to process "
         "(PYTHONHASHSEED): loop in a fixed order (sorted(...)) so every run traces the same "
         "program."),
    Rule("attribute", None, _mesh,
         "The device mesh the program is partitioned over has another shape or other axis "
         "names (jax.sharding.Mesh): JAX keys the program by it, and a mesh of another "
         "shape tiles every sharding on it over the devices otherwise, even with the same "
         "PartitionSpec. Build the mesh the same way "
         "in both runs (the same devices, reshaped alike, with the same axis names), or "
         "expect one compilation per mesh."),
    Rule("attribute", None, _returned,
         "The program returns its result with another sharding: jit's out_shardings (or a "
         "jax.lax.with_sharding_constraint on what it returns) differs between the runs, "
         "not the computation. Give the result the same sharding in both runs."),
    Rule("attribute", "jax", _placed,
         "These arguments arrive with another sharding: placed with jax.device_put and a "
         "sharding, given jit's in_shardings, or returned so by another jitted program. "
         "JAX keys a program by its arguments' shardings, even on one device; the model "
         "code did not change here. Place the arguments the same way in both runs."),
    Rule("attribute", None, _placed,
         "These arguments arrive with another sharding: the model code did not change "
         "here, the way the arguments are placed on the devices did. Place them the same "
         "way in both runs."),
    Rule("attribute", None, _says("outer_dimension_partitions"),
         "XLA splits this op across the CPU threads the process may use: the runs had "
         "different numbers of cores (taskset, a container's CPU limit, another machine). "
         "Run both with the same cores; the code did not change here."),
    Rule("attribute", None, _named("input_output_alias", "donat"),
         "Buffer donation differs: pass the same donate_argnums in both runs."),
    # tf2xla gives a MatMul, BatchMatMul, Conv or Einsum precision HIGHEST
    # exactly when TensorFloat-32 is off (tensorflow/compiler/tests/
    # tensor_float_32_test.py); no argument of those ops sets it (a helper
    # session's run read "look at the code where this op_name is built")
    Rule("attribute", "tensorflow", _named("operand_precision"),
         "The precision of matrix multiplications and convolutions changed: TensorFlow sets "
         "it for the whole process, not per op, from "
         "tf.config.experimental.enable_tensor_float_32_execution (False gives every matmul "
         "and convolution precision HIGHEST; True, the default, none). The model code did "
         "not change here: make the same call, or none, in both runs."),
    # jax_default_matmul_precision (or its context manager around the call)
    # sets the precision of every dot_general and convolution JAX traces that
    # has no precision= of its own; a flax step's five dots read "look at the
    # code at this line for a changed option" (a helper session's run)
    Rule("attribute", "jax", _every_matmul,
         "The precision of every matmul and convolution changed, not one layer's: JAX sets it "
         "for all of them from jax_default_matmul_precision (JAX_DEFAULT_MATMUL_PRECISION in "
         "the environment, jax.config.update('jax_default_matmul_precision', ...), or a "
         "`with jax.default_matmul_precision(...)` block around the call), in one run only or "
         "to another value. The model code did not change here: set it alike in both runs."),
    Rule("attribute", None, _always,
         "An attribute of an operation changed: look at the code {here} for a "
         "changed option (axis, precision, sharding)."),
    Rule("shape", None, _always,
         "A shape changed inside the program: look for a size computed from a Python "
         "value {here}."),
)


def advice_for(finding: Finding, framework: str | None) -> str:
    """The advice for ``finding`` in ``framework`` (``jax``, ``tensorflow``,
    ``pytorch`` or None), or "" when no rule fits."""
    for rule in RULES:
        if rule.kind in (None, finding.kind) and rule.framework in (None, framework) \
                and rule.applies(finding):
            advice = rule.advice.replace("{here}", _here(finding)).replace(
                "{constant}", _constant(finding))
            return advice.replace("{library}", _library(finding)) if "{library}" in advice \
                else advice
    return ""


def _constant(finding: Finding) -> str:
    """The scalar constant a finding names (``2``)."""
    found = _SCALAR_CONSTANT.search(finding.new or finding.old or "")
    return found.group(1) if found else "a constant"


def _here(finding: Finding) -> str:
    """Where to look, as far as the dump tells: a line only where one is shown."""
    if finding.origin.location:
        return "at this line"
    if finding.origin.op_name:
        return "where this op_name is built"
    return "in the model code"
