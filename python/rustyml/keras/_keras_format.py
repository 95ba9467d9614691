"""Keras 3's own model files: ``.keras`` archives and ``.weights.h5`` weight files.

A ``.keras`` archive is a zip of ``metadata.json`` (``keras_version``, ``date_saved``),
``config.json`` (the model serialized as Keras serializes objects: ``module``,
``class_name``, ``config``, plus the model's ``build_config`` and ``compile_config``) and
``model.weights.h5``. In the h5 file each layer of ``model.layers`` owns the group
``layers/<snake_case class name>[_<k>]`` (``k`` counting earlier layers of that class in
``model.layers``: a ``Sequential`` lists no ``InputLayer``, a functional model does), its
arrays at ``vars/0``, ``vars/1``... in the layer's weight order; a recurrent layer keeps
them in its ``cell``, a ``Bidirectional`` in ``forward_layer/cell`` and
``backward_layer/cell``, a ``TimeDistributed`` in its ``layer``. A ``.weights.h5`` file is
that h5 file alone.

This module translates between Keras's configs and rustyml's: reading drops the keys
Keras writes whose values change nothing here (no constraint, a float32 dtype policy, no
statefulness...) and refuses any other value with ``NotImplementedError`` naming the key and
the layer; writing adds the keys Keras expects and drops rustyml-only ones (a weight
initialisation ``seed`` Keras's layer has no argument for).

The optimizer's running state (moments, step count) is neither read nor written: a model
loaded here, or by Keras from a file written here, starts training with fresh optimizer state
(Keras warns that it skips the optimizer's variables). ``h5py`` is imported when such a file
is used.
"""

import datetime
import inspect
import io
import json
import os
import re
import zipfile

import numpy as np

from rustyml.neural_network import layers as layers_module
from rustyml.neural_network import losses as losses_module
from rustyml.neural_network import optimizers as optimizers_module

_CONFIG = "config.json"
_METADATA = "metadata.json"
_WEIGHTS = "model.weights.h5"
# what metadata.json names as the writer's Keras version: the format this module writes
_KERAS_VERSION = "3.15.1"
_RECURRENT = ("SimpleRNN", "LSTM", "GRU")
_CELL_NAMES = {"SimpleRNN": "simple_rnn_cell", "LSTM": "lstm_cell", "GRU": "gru_cell"}


def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "reading or writing Keras's .keras / .weights.h5 files needs h5py: "
            "pip install h5py (or rustyml[keras])"
        ) from None
    return h5py


def snake_case(name):
    """Keras's snake case of a class name: ``GlobalAveragePooling2D`` ->
    ``global_average_pooling2d``, ``LSTM`` -> ``lstm``."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _policy(name="float32"):
    return {
        "module": "keras",
        "class_name": "DTypePolicy",
        "config": {"name": name},
        "registered_name": None,
    }


def _policy_name(dtype):
    if isinstance(dtype, dict):
        return (dtype.get("config") or {}).get("name")
    return dtype


# --- reading Keras layer configs ---------------------------------------------------------

# Keys Keras writes whose value here changes nothing: key -> the neutral values.
_NEUTRAL = {
    "kernel_constraint": (None,),
    "bias_constraint": (None,),
    "recurrent_constraint": (None,),
    "embeddings_constraint": (None,),
    "depthwise_constraint": (None,),
    "pointwise_constraint": (None,),
    "alpha_constraint": (None,),
    "beta_constraint": (None,),
    "gamma_constraint": (None,),
    "alpha_regularizer": (None,),
    "beta_regularizer": (None,),
    "gamma_regularizer": (None,),
    "activity_regularizer": (None,),
    "quantization_config": (None,),
    "lora_rank": (None,),
    "lora_alpha": (None,),
    "stateful": (False,),
    "unroll": (False,),
    "use_cudnn": ("auto", False),
    "data_format": ("channels_last", None),
    "groups": (1,),
    "sparse": (False,),
    "ragged": (False,),
    "synchronized": (False,),
    "center": (True,),
    "scale": (True,),
    "rms_scaling": (False,),
    "noise_shape": (None,),
    "output_padding": (None,),
    "input_length": (None,),
    "max_value": (None,),
    "threshold": (0.0, 0),
    "seed": (None,),
    "return_state": (False,),
    "zero_output_for_mask": (False,),
    "weights": (None,),
    "build_config": (None,),
    "renorm": (False,),
    "renorm_clipping": (None,),
}
# keys that only matter when another key is set: key -> (that key, its neutral value)
_ONLY_WITH = {"renorm_momentum": ("renorm", False)}
# per class: keys whose neutral value is the layer's fixed behaviour here
_CLASS_NEUTRAL = {
    "BatchNormalization": {"axis": (-1, [-1])},
    "GroupNormalization": {"axis": (-1, [-1])},
    "ReLU": {"negative_slope": (0.0, 0)},
    "Softmax": {"axis": (-1, [-1])},
}
# initializers of weights whose starting values rustyml fixes (they are loaded anyway)
_FIXED_INITIALIZERS = {
    "beta_initializer": "Zeros",
    "gamma_initializer": "Ones",
    "moving_mean_initializer": "Zeros",
    "moving_variance_initializer": "Ones",
}


def _initializer_class(value):
    if isinstance(value, dict):
        return value.get("class_name")
    if isinstance(value, str):
        return "".join(part.capitalize() for part in value.split("_"))
    return None


def _accepted_keys(cls):
    params = set(inspect.signature(cls.__init__).parameters) - {"self", "args", "kwargs"}
    if layers_module._takes_initializers(cls):
        from rustyml.neural_network import initializers

        params |= set(initializers._ARGUMENT_WEIGHTS)
    from rustyml.neural_network import regularizers

    params |= set(regularizers.layer_arguments(cls.__name__))
    return params


def _is_neutral(class_name, key, value):
    if key in _FIXED_INITIALIZERS:
        return _initializer_class(value) == _FIXED_INITIALIZERS[key] and not (
            isinstance(value, dict) and (value.get("config") or {})
        )
    neutral = _CLASS_NEUTRAL.get(class_name, {}).get(key, _NEUTRAL.get(key))
    # a bool equals 0 or 1 in Python; only the same kind of value is neutral
    return neutral is not None and any(
        value is n or (type(value) is not bool and type(n) is not bool and value == n)
        for n in neutral
    )


def _prelu_alpha(value, layer_name):
    """Keras's ``alpha_initializer`` of PReLU as rustyml's constant."""
    kind = _initializer_class(value)
    if kind == "Zeros":
        return 0.0
    if kind == "Constant":
        return float((value.get("config") or {}).get("value", 0.0))
    raise NotImplementedError(
        f"PReLU {layer_name!r}: alpha_initializer {kind!r} is not implemented in rustyml "
        "(a constant is)"
    )


def layer_config_from_keras(entry):
    """``{"class_name", "config"}`` of the rustyml layer a Keras layer entry describes;
    ``NotImplementedError`` for a class or a key value rustyml does not have."""
    if not isinstance(entry, dict) or not isinstance(entry.get("config"), dict):
        raise ValueError(f"a layer entry must be a dict with a 'config' dict, got {entry!r}")  # noqa: TRY004 - a file's contents: bad data
    class_name = entry.get("class_name")
    config = dict(entry["config"])
    name = config.get("name")
    cls = layers_module._REGISTRY.get(class_name)
    if cls is None:
        raise NotImplementedError(
            f"layer {name!r}: Keras layer class {class_name!r} is not implemented in rustyml"
        )
    where = f"{class_name} layer {name!r}"
    dtype = _policy_name(config.pop("dtype", None))
    if dtype not in (None, "float32"):
        raise NotImplementedError(
            f"{where}: dtype {dtype!r} is not implemented in rustyml (networks compute in float32)"
        )
    trainable = config.pop("trainable", True)
    accepted = _accepted_keys(cls)
    out = {}
    for key, value in config.items():
        if key == "name":
            out[key] = value
        elif key in ("layer", "backward_layer") and class_name in (
            "Bidirectional",
            "TimeDistributed",
        ):
            continue
        elif class_name == "PReLU" and key == "alpha_initializer":
            out[key] = _prelu_alpha(value, name)
        elif key in accepted and not (key == "data_format" and value is None):
            out[key] = value
        elif key in _ONLY_WITH and config.get(_ONLY_WITH[key][0]) == _ONLY_WITH[key][1]:
            continue
        elif not _is_neutral(class_name, key, value):
            raise NotImplementedError(f"{where}: {key}={value!r} is not implemented in rustyml")
    if class_name in ("Bidirectional", "TimeDistributed"):
        inner = config.get("layer")
        out["layer"] = layer_config_from_keras(inner)
        if class_name == "Bidirectional":
            _check_backward(where, inner, config.get("backward_layer"))
    if "trainable" in accepted:
        out["trainable"] = bool(trainable)
    elif not trainable:
        out["__frozen__"] = True
    return {"class_name": class_name, "config": out}


def _check_backward(where, forward, backward):
    """Keras's ``backward_layer``: rustyml runs a copy of the forward layer backwards, so the
    backward layer must be that copy (its name and direction aside)."""
    if backward is None:
        return

    def core(entry):
        config = dict(entry.get("config") or {})
        for key in ("name", "go_backwards"):
            config.pop(key, None)
        for key, value in list(config.items()):
            if isinstance(value, dict):
                value = dict(value)
                value.pop("shared_object_id", None)
                config[key] = value
        return entry.get("class_name"), config

    if core(forward) != core(backward):
        raise NotImplementedError(
            f"{where}: a backward_layer that differs from the forward layer is not implemented "
            "in rustyml (it runs a copy of the forward layer backwards)"
        )


def layer_from_keras(entry):
    """The rustyml layer a Keras layer entry describes."""
    spec = layer_config_from_keras(entry)
    return _instantiate(spec)


def _instantiate(spec):
    config = dict(spec["config"])
    frozen = config.pop("__frozen__", False)
    if "layer" in config:
        config["layer"] = _instantiate(config["layer"])
    cls = layers_module._REGISTRY[spec["class_name"]]
    try:
        layer = cls.from_config(config)
    except TypeError as exc:
        raise ValueError(f"{spec['class_name']} {config.get('name')!r}: {exc}") from None
    if frozen:
        layer.trainable = False
    return layer


# --- writing Keras layer configs ---------------------------------------------------------

# Keras layers whose constructor takes no ``seed`` (rustyml's seeds the weight draws)
_SEEDED_IN_KERAS = (
    "Dropout",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "GaussianNoise",
    "GaussianDropout",
    "SimpleRNN",
    "LSTM",
    "GRU",
)
# Keras's layers with a data_format argument (Cropping1D and UpSampling1D have none)
_DATA_FORMAT_CLASSES = re.compile(
    r"Conv|Pooling|UpSampling[23]D|ZeroPadding|Cropping[23]D|^Flatten$"
)


def _keras_object(module, class_name, config, **extra):
    return {
        "module": module,
        "class_name": class_name,
        "config": config,
        "registered_name": None,
        **extra,
    }


def layer_to_keras(layer, name, input_shape=None):
    """The Keras 3 entry of ``layer`` (``module``, ``class_name``, ``config``,
    ``registered_name``, ``build_config`` when ``input_shape`` is known)."""
    class_name = type(layer).__name__
    config = layer.get_config()
    config.pop("input_shape", None)
    config["name"] = name
    config["trainable"] = bool(getattr(layer, "trainable", True))
    config["dtype"] = _policy()
    if class_name.startswith("SpatialDropout"):
        # Keras's spatial dropouts take no trainable argument (they have no weights)
        del config["trainable"]
    if class_name not in _SEEDED_IN_KERAS:
        config.pop("seed", None)
    if class_name == "PReLU":
        config["alpha_initializer"] = _keras_object(
            "keras.initializers", "Constant", {"value": config["alpha_initializer"]}
        )
    if class_name == "ZeroPadding1D" or class_name == "Cropping1D":
        key = "padding" if class_name == "ZeroPadding1D" else "cropping"
        config[key] = list(config[key][0])
    if _DATA_FORMAT_CLASSES.search(class_name) and "data_format" not in config:
        config["data_format"] = "channels_last"
    if class_name in ("Bidirectional", "TimeDistributed"):
        inner = layer.layer
        inner_name = inner.name or snake_case(type(inner).__name__)
        if class_name == "Bidirectional":
            inner_name = f"forward_{inner_name}"
        config["layer"] = layer_to_keras(inner, inner_name)
    entry = _keras_object("keras.layers", class_name, config)
    if input_shape is not None:
        entry["build_config"] = {"input_shape": [None, *input_shape]}
    return entry


# --- models: configs ---------------------------------------------------------------------


def _layer_names(layers):
    """Each layer's name, or a Keras-style one (``dense``, ``dense_1``...) unique in the
    model for an unnamed layer."""
    taken = {layer.name for layer in layers if getattr(layer, "name", None)}
    counts, names = {}, []
    for layer in layers:
        if getattr(layer, "name", None):
            names.append(layer.name)
            continue
        base = snake_case(type(layer).__name__)
        while True:
            k = counts.get(base, 0)
            counts[base] = k + 1
            candidate = base if k == 0 else f"{base}_{k}"
            if candidate not in taken:
                break
        taken.add(candidate)
        names.append(candidate)
    return names


def _sequential_input_shapes(model):
    """Each layer's per-sample input shape in a built Sequential."""
    shapes = [tuple(model._input_shape)]
    for row in model._built().layer_summaries()[:-1]:
        shapes.append(tuple(row[2]))
    return shapes


def sequential_to_keras(model):
    model._built()
    shapes = _sequential_input_shapes(model)
    names = _layer_names(model.layers)
    batch_shape = [None, *model._input_shape]
    entries = [
        _keras_object(
            "keras.layers",
            "InputLayer",
            {
                "batch_shape": batch_shape,
                "dtype": "float32",
                "sparse": False,
                "ragged": False,
                "name": "input_layer",
                "optional": False,
            },
        )
    ]
    entries += [
        layer_to_keras(layer, name, shape)
        for layer, name, shape in zip(model.layers, names, shapes)
    ]
    config = {
        "name": model.name,
        "trainable": bool(getattr(model, "trainable", True)),
        "dtype": _policy(),
        "layers": entries,
        "build_input_shape": batch_shape,
    }
    return _keras_object("keras", "Sequential", config, build_config={"input_shape": batch_shape})


def functional_layer_order(model):
    """``model.layers`` as Keras orders a functional model's layers (its h5 groups follow
    this order): by depth from the outputs, deepest first; within a depth, by when a
    depth-first walk from the outputs first reaches the layer."""
    from rustyml.keras._functional import InputLayer

    first_seen = {}
    post_order = []
    done = set()

    def visit(layer, node):
        key = (id(layer), node)
        if key in done:
            return
        first_seen.setdefault(id(layer), len(first_seen))
        if not isinstance(layer, InputLayer):
            for t in layer._calls[node][0]:
                visit(*t._keras_history)
        done.add(key)
        post_order.append((layer, node))

    outputs = model._outputs
    if model._out_kind == "dict":
        # Keras flattens a dict of outputs in sorted key order
        outputs = [t for _, t in sorted(zip(model._out_keys, outputs), key=lambda kv: kv[0])]
    for t in outputs:
        visit(*t._keras_history)
    node_depth, layer_depth = {}, {}
    for layer, node in reversed(post_order):
        depth = node_depth.setdefault((id(layer), node), 0)
        depth = max(depth, layer_depth.get(id(layer), 0))
        layer_depth[id(layer)] = depth
        node_depth[(id(layer), node)] = depth
        if not isinstance(layer, InputLayer):
            for t in layer._calls[node][0]:
                parent = (id(t._keras_history[0]), t._keras_history[1])
                node_depth[parent] = max(depth + 1, node_depth.get(parent, 0))
    for t in model._inputs:
        layer = t._keras_history[0]
        if id(layer) not in layer_depth:
            layer_depth[id(layer)] = 0
            first_seen[id(layer)] = -1
    by_id = {id(layer): layer for layer in model.layers}
    return [
        by_id[i]
        for i in sorted(by_id, key=lambda i: (-layer_depth.get(i, 0), first_seen.get(i, 0)))
    ]


def functional_to_keras(model):
    ours = model.get_config()
    by_name = {entry["name"]: entry for entry in ours["layers"]}
    order = functional_layer_order(model)
    entries = []
    for layer in order:
        ours_entry = by_name[layer.name]
        if ours_entry["class_name"] == "InputLayer":
            entry = _keras_object("keras.layers", "InputLayer", dict(ours_entry["config"]))
        else:
            first_call = layer._calls[min(n for (lid, n) in model._local if lid == id(layer))]
            shapes = [t.shape for t in first_call[0]]
            entry = layer_to_keras(layer, layer.name)
            entry["build_config"] = {
                "input_shape": [list(s) for s in shapes] if first_call[1] else list(shapes[0])
            }
        entry["name"] = layer.name
        entry["inbound_nodes"] = ours_entry["inbound_nodes"]
        entries.append(entry)
    config = {
        "name": model.name,
        "trainable": bool(model.trainable),
        "layers": entries,
        "input_layers": ours["input_layers"],
        "output_layers": ours["output_layers"],
    }
    return _keras_object(
        "keras.src.models.functional", "Functional", config, build_config={"input_shape": None}
    )


def model_to_keras(model):
    from rustyml.keras._functional import Model

    if isinstance(model, Model):
        return functional_to_keras(model)
    return sequential_to_keras(model)


def model_from_keras(serialized):
    """The rustyml model (unbuilt weights: fresh) a Keras model config describes, and the
    layer order Keras lists ``model.layers`` in (for its h5 groups)."""
    from rustyml.keras._functional import Model
    from rustyml.keras.models import Sequential

    if not isinstance(serialized, dict) or not isinstance(serialized.get("config"), dict):
        raise ValueError("not a Keras model config: a dict with 'class_name' and 'config'")  # noqa: TRY004 - a file's contents: bad data
    class_name = serialized.get("class_name")
    config = serialized["config"]
    if class_name == "Sequential":
        return _sequential_from_keras(config, Sequential)
    if class_name in ("Functional", "Model"):
        return _functional_from_keras(config, Model)
    raise NotImplementedError(
        f"Keras model class {class_name!r} is not implemented in rustyml (Sequential and "
        "functional models are; a subclassed model's code cannot be read from a file)"
    )


def _sequential_from_keras(config, cls):
    entries = config.get("layers")
    if not isinstance(entries, list):
        raise ValueError("a Keras Sequential config needs a 'layers' list")  # noqa: TRY004 - a file's contents: bad data
    input_shape = None
    if entries and entries[0].get("class_name") == "InputLayer":
        input_cfg = entries[0].get("config") or {}
        shape = input_cfg.get("batch_shape") or [None, *input_cfg.get("shape", [])]
        input_shape = tuple(shape[1:])
        entries = entries[1:]
    elif config.get("build_input_shape"):
        input_shape = tuple(config["build_input_shape"][1:])
    layers = [layer_from_keras(entry) for entry in entries]
    if input_shape is None:
        build = (entries[0].get("build_config") or {}).get("input_shape") if entries else None
        if build:
            input_shape = tuple(build[1:])
    model = cls(layers, name=config.get("name"))
    if input_shape is not None:
        model._input_shape = layers_module._shape_tuple(input_shape, "input_shape", "Sequential")
    if config.get("trainable") is False:
        model.trainable = False
    return model


# Operations (not layers) Keras records in a functional graph to compute the masks of
# Embedding(mask_zero=True) and Masking: ``not_equal(x, value)``, then for Masking
# ``any(..., axis=-1)``, passed as a layer call's ``mask``. rustyml's graph derives those
# masks itself, so these entries are dropped once recognised.
_MASK_OPS = ("NotEqual", "Any")


def _tensor_key(arg):
    if isinstance(arg, dict) and arg.get("class_name") == "__keras_tensor__":
        return tuple(arg["config"]["keras_history"][:2])
    return None


def _entry_name(entry):
    return entry.get("name") or (entry.get("config") or {}).get("name")


def _check_mask_ops(entries):
    """The names of the mask operations among ``entries``; ``NotImplementedError`` for an
    operation rustyml cannot stand in for."""
    ops = {_entry_name(e): e for e in entries if e.get("class_name") in _MASK_OPS}
    if not ops:
        return set()
    # where each Embedding(mask_zero) / Masking layer takes its input, and its mask kind
    sources = {}
    for e in entries:
        cfg = e.get("config") or {}
        for node in e.get("inbound_nodes") or []:
            key = _tensor_key((node.get("args") or [None])[0])
            if e.get("class_name") == "Embedding" and cfg.get("mask_zero"):
                sources[(key, "NotEqual", 0.0)] = True
            elif e.get("class_name") == "Masking":
                sources[(key, "Any", float(cfg.get("mask_value", 0.0)))] = True

    def origin(name):
        op = ops[name]
        args = op["inbound_nodes"][0]["args"]
        if op["class_name"] == "Any":
            cfg = op.get("config") or {}
            inner = _tensor_key(args[0])
            if cfg.get("axis") not in (-1, [-1]) or cfg.get("keepdims") or inner is None:
                return None
            inner_op = ops.get(inner[0])
            if inner_op is None or inner_op["class_name"] != "NotEqual":
                return None
            key, _, value = origin(inner[0]) or (None, None, None)
            return key, "Any", value
        if len(args) != 2 or not isinstance(args[1], (int, float)):
            return None
        return _tensor_key(args[0]), "NotEqual", float(args[1])

    for e in entries:
        if e.get("class_name") in _MASK_OPS:
            continue
        for node in e.get("inbound_nodes") or []:
            args = node.get("args") or []
            flat = args[0] if args and isinstance(args[0], list) else args
            for arg in flat:
                key = _tensor_key(arg)
                if key is not None and key[0] in ops:
                    raise NotImplementedError(
                        f"layer {_entry_name(e)!r} takes the output of the operation "
                        f"{key[0]!r}; operations in a functional graph are not implemented "
                        "in rustyml"
                    )
            key = _tensor_key((node.get("kwargs") or {}).get("mask"))
            if key is None:
                continue
            if key[0] not in ops or sources.get(origin(key[0])) is None:
                raise NotImplementedError(
                    f"layer {_entry_name(e)!r} is called with a mask ({key[0]!r}) other than "
                    "an Embedding(mask_zero=True) or Masking mask, which rustyml derives itself"
                )
    return set(ops)


def _keras_layer_names(serialized):
    """The names of a functional config's layers in ``model.layers`` order (the mask
    operations Keras records are not layers)."""
    entries = serialized["config"]["layers"]
    return [_entry_name(e) for e in entries if e.get("class_name") not in _MASK_OPS]


def _functional_from_keras(config, cls):
    entries = config.get("layers")
    if not isinstance(entries, list):
        raise ValueError("a Keras functional config needs a 'layers' list")  # noqa: TRY004 - a file's contents: bad data
    mask_ops = _check_mask_ops(entries)
    ours = []
    frozen = set()
    for entry in entries:
        name = _entry_name(entry)
        if name in mask_ops:
            continue
        if entry.get("class_name") == "InputLayer":
            cfg = dict(entry.get("config") or {})
            for key in ("sparse", "ragged", "optional"):
                if cfg.pop(key, False):
                    raise NotImplementedError(
                        f"InputLayer {name!r}: {key}=True is not implemented in rustyml"
                    )
            ours.append(
                {"class_name": "InputLayer", "name": name, "config": cfg, "inbound_nodes": []}
            )
            continue
        spec = layer_config_from_keras(entry)
        if spec["config"].pop("__frozen__", False):
            frozen.add(name)
        for node in entry.get("inbound_nodes", []):
            # the training flag Keras records is set by fit / predict here, as in Keras
            extra = {
                k: v
                for k, v in (node.get("kwargs") or {}).items()
                if v is not None and k not in ("training", "mask")
            }
            if extra:
                raise NotImplementedError(
                    f"layer {name!r} is called with arguments {sorted(extra)}, which rustyml's "
                    "functional models do not take"
                )
        ours.append(
            {
                "class_name": spec["class_name"],
                "name": name,
                "config": spec["config"],
                "inbound_nodes": entry.get("inbound_nodes", []),
            }
        )
    our_config = {
        "name": config.get("name"),
        "trainable": config.get("trainable", True),
        "layers": ours,
        "input_layers": config.get("input_layers"),
        "output_layers": config.get("output_layers"),
    }
    nested = [e for e in ours if isinstance(e["config"].get("layer"), dict)]
    for e in nested:
        # the wrapped layer as an object: Model.from_config deserializes rustyml configs
        e["config"]["layer"] = _instantiate(e["config"]["layer"])
    model = cls.from_config(our_config)
    for layer in model.layers:
        if layer.name in frozen:
            layer.trainable = False
    return model


# --- compile settings --------------------------------------------------------------------

_OPTIMIZER_NEUTRAL = {
    "name": None,  # any
    "use_ema": (False,),
    "ema_overwrite_frequency": (None,),
    "loss_scale_factor": (None,),
    "gradient_accumulation_steps": (None,),
}


def _loss_from_keras(value):
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise NotImplementedError(f"loss {value!r} is not implemented in rustyml")
    class_name = value.get("class_name")
    cls = getattr(losses_module, str(class_name), None)
    if not (isinstance(cls, type) and issubclass(cls, losses_module.Loss)):
        raise NotImplementedError(f"Keras loss {class_name!r} is not implemented in rustyml")
    config = dict(value.get("config") or {})
    config.pop("name", None)
    dtype = _policy_name(config.pop("dtype", None))
    if dtype not in (None, "float32"):
        raise NotImplementedError(f"loss {class_name}: dtype {dtype!r} is not implemented")
    for key, neutral in (("label_smoothing", 0.0), ("axis", -1), ("ignore_class", None)):
        if key in config:
            v = config.pop(key)
            if v != neutral:
                raise NotImplementedError(
                    f"loss {class_name}: {key}={v!r} is not implemented in rustyml"
                )
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = set(config) - accepted
    if unknown:
        raise NotImplementedError(
            f"loss {class_name}: arguments {sorted(unknown)} are not implemented in rustyml"
        )
    return cls(**config)


def _losses_from_keras(value):
    if isinstance(value, list):
        return [_loss_from_keras(v) for v in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _loss_from_keras(v) for k, v in value.items()}
    return _loss_from_keras(value)


def _metric_from_keras(value):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return [_metric_from_keras(v) for v in value]
    if isinstance(value, dict) and "class_name" in value:
        name = (value.get("config") or {}).get("name") or snake_case(value["class_name"])
        return name
    if isinstance(value, dict):
        return {k: _metric_from_keras(v) for k, v in value.items()}
    raise NotImplementedError(f"metric {value!r} is not implemented in rustyml")


def optimizer_from_keras(value):
    if isinstance(value, str):
        return optimizers_module.get(value)
    if not isinstance(value, dict):
        raise NotImplementedError(f"optimizer {value!r} is not implemented in rustyml")
    class_name = value.get("class_name")
    config = dict(value.get("config") or {})
    for key, neutral in _OPTIMIZER_NEUTRAL.items():
        if key in config:
            v = config.pop(key)
            if neutral is not None and v not in neutral:
                raise NotImplementedError(
                    f"optimizer {class_name}: {key}={v!r} is not implemented in rustyml"
                )
    config.pop("ema_momentum", None)  # only read with use_ema, refused above
    lr = config.get("learning_rate")
    if isinstance(lr, dict):
        config["learning_rate"] = {"class_name": lr.get("class_name"), "config": lr.get("config")}
    return optimizers_module.get({"class_name": class_name, "config": config})


def compile_from_keras(model, compile_config):
    """Compiles ``model`` with the optimizer, losses and metrics Keras's ``compile_config``
    names (Keras-serialized objects or names)."""
    config = dict(compile_config)
    kwargs = {}
    if config.get("loss_weights") is not None:
        kwargs["loss_weights"] = config["loss_weights"]
    if config.get("weighted_metrics"):
        raise NotImplementedError("compile(weighted_metrics=...) is not implemented in rustyml")
    model.compile(
        optimizer=optimizer_from_keras(config.get("optimizer", "rmsprop")),
        loss=_losses_from_keras(config.get("loss")),
        metrics=_metric_from_keras(config.get("metrics")),
        **kwargs,
    )


# Keras's losses with a from_logits argument
_FROM_LOGITS_LOSSES = (
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
)


def _loss_to_keras(loss):
    config = {"name": loss.name, "reduction": getattr(loss, "reduction", "sum_over_batch_size")}
    params = inspect.signature(type(loss).__init__).parameters
    if type(loss).__name__ in _FROM_LOGITS_LOSSES:
        config["from_logits"] = loss.from_logits
    if "delta" in params:
        config["delta"] = loss.delta
    return _keras_object("keras.losses", type(loss).__name__, config)


def _optimizer_to_keras(optimizer):
    config = optimizers_module.serialize(optimizer)["config"]
    config.pop("weight_decay_rule", None)
    config.pop("learning_rate_schedule", None)
    schedule = getattr(optimizer, "_schedule", None)
    if schedule is not None:
        config["learning_rate"] = _keras_object(
            "keras.optimizers.schedules", type(schedule).__name__, schedule.get_config()
        )
    if type(optimizer).__name__ != "AdamW" and config.get("weight_decay") == 0.0:
        config["weight_decay"] = None
    config = {
        "name": snake_case(type(optimizer).__name__),
        **config,
        "use_ema": False,
        "ema_momentum": 0.99,
        "ema_overwrite_frequency": None,
        "loss_scale_factor": None,
        "gradient_accumulation_steps": None,
    }
    return _keras_object("keras.optimizers", type(optimizer).__name__, config)


def compile_to_keras(model):
    """Keras's ``compile_config`` of a compiled model, or ``None``."""
    from rustyml.keras._functional import Model

    if model._compiled is None:
        return None
    if isinstance(model, Model):
        losses = model._compiled[2]
        keys = model._output_keys()
        if len(losses) == 1:
            loss = _loss_to_keras(losses[0])
        elif model._out_kind == "dict":
            loss = {k: _loss_to_keras(lo) for k, lo in zip(keys, losses)}
        else:
            loss = [_loss_to_keras(lo) for lo in losses]
        weights = model._compiled[3]
        loss_weights = None if all(w == 1.0 for w in weights) else list(weights)
        metrics = model._compiled[5]
    else:
        loss = _loss_to_keras(model.loss)
        loss_weights = None
        metrics = model._metrics_arg
    return {
        "optimizer": _optimizer_to_keras(model.optimizer),
        "loss": loss,
        "loss_weights": loss_weights,
        "metrics": _metrics_to_keras(metrics),
        "weighted_metrics": None,
        "run_eagerly": False,
        "steps_per_execution": 1,
        "jit_compile": True,
    }


def _metrics_to_keras(metrics):
    if metrics is None or isinstance(metrics, str):
        return metrics
    if isinstance(metrics, dict):
        return {k: _metrics_to_keras(v) for k, v in metrics.items()}
    if isinstance(metrics, (list, tuple)):
        return [_metrics_to_keras(m) for m in metrics]
    name = getattr(metrics, "name", None)
    if isinstance(name, str):
        return name
    raise NotImplementedError(
        f"writing the metric {metrics!r} to a .keras file is not implemented in rustyml "
        "(metrics given by name are)"
    )


# --- weights -----------------------------------------------------------------------------


def _vars_groups(layer, prefix, name=None):
    """The h5 groups holding ``layer``'s arrays, in its weight order, with each group's
    ``name`` attribute, and the other groups Keras writes for it."""
    class_name = type(layer).__name__
    name = name or layer.name or snake_case(class_name)
    if class_name in _RECURRENT:
        return [(f"{prefix}/cell/vars", _CELL_NAMES[class_name])], [(f"{prefix}/vars", name)]
    if class_name == "Bidirectional":
        inner = layer.layer
        inner_name = inner.name or snake_case(type(inner).__name__)
        cell = _CELL_NAMES[type(inner).__name__]
        return (
            [
                (f"{prefix}/forward_layer/cell/vars", cell),
                (f"{prefix}/backward_layer/cell/vars", cell),
            ],
            [
                (f"{prefix}/vars", name),
                (f"{prefix}/forward_layer/vars", f"forward_{inner_name}"),
                (f"{prefix}/backward_layer/vars", f"backward_{inner_name}"),
            ],
        )
    if class_name == "TimeDistributed":
        inner, empty = _vars_groups(layer.layer, f"{prefix}/layer")
        return inner, [(f"{prefix}/vars", name), *empty]
    return [(f"{prefix}/vars", name)], []


def _layer_prefixes(layers):
    counts, out = {}, []
    for layer in layers:
        base = snake_case(type(layer).__name__)
        k = counts.get(base, 0)
        counts[base] = k + 1
        out.append(f"layers/{base}" if k == 0 else f"layers/{base}_{k}")
    return out


def _model_layers_and_arrays(model):
    """``(layers in Keras's model.layers order, {id(layer): its arrays})``."""
    from rustyml.keras._functional import Model

    arrays = list(model.get_weights())
    counts = model._layer_weight_counts()
    per_layer, at = {}, 0
    for layer, n in zip(model.layers, counts):
        per_layer[id(layer)] = arrays[at : at + n]
        at += n
    order = functional_layer_order(model) if isinstance(model, Model) else list(model.layers)
    return order, per_layer


def write_weights(model, target):
    """Writes ``model``'s weights in Keras's h5 layout to ``target`` (a path or a binary
    file object)."""
    h5py = _h5py()
    order, per_layer = _model_layers_and_arrays(model)
    names = _layer_names(order)
    with h5py.File(target, "w") as f:
        for layer, name, prefix in zip(order, names, _layer_prefixes(order)):
            groups, empty = _vars_groups(layer, prefix, name)
            arrays = per_layer.get(id(layer), [])
            # a Bidirectional lists the forward layer's arrays, then the backward layer's
            half = len(arrays) // len(groups)
            for k, (path, gname) in enumerate(groups):
                g = f.require_group(path)
                g.attrs["name"] = gname
                for i, a in enumerate(arrays[k * half : (k + 1) * half]):
                    g.create_dataset(str(i), data=np.asarray(a, dtype=np.float32))
            for path, gname in empty:
                f.require_group(path).attrs["name"] = gname
        f.require_group("vars").attrs["name"] = model.name


def _read_group(f, path):
    if path not in f:
        return []
    group = f[path]
    h5py = _h5py()
    if not isinstance(group, h5py.Group):
        raise ValueError(f"{path} in the weights file is not a group")  # noqa: TRY004 - a file's contents: bad data
    keys = sorted(group.keys(), key=lambda k: int(k) if k.isdigit() else -1)
    if any(not k.isdigit() for k in keys) or keys != [str(i) for i in range(len(keys))]:
        raise ValueError(f"{path} in the weights file holds unexpected entries {keys}")
    return [np.asarray(group[k][()]) for k in keys]


def read_weights(model, source, keras_order=None):
    """Loads the weights of a Keras h5 weights file (``source``: a path or a binary file
    object) into ``model``; every array is checked before any is set, so a refused file
    leaves the model unchanged. ``keras_order``: the layer names in the order Keras listed
    ``model.layers`` when it wrote the file (default: the order Keras lists them for this
    model)."""
    h5py = _h5py()
    order, per_layer = _model_layers_and_arrays(model)
    if keras_order is not None:
        by_name = {layer.name: layer for layer in model.layers}
        try:
            order = [by_name[n] for n in keras_order]
        except KeyError as exc:
            raise ValueError(f"the weights file names layer {exc} the model lacks") from None
    new = {}
    try:
        f = h5py.File(source, "r")
    except OSError as exc:
        raise ValueError(f"not a readable HDF5 weights file: {exc}") from None
    with f:
        if "layers" not in f:
            raise ValueError("not a Keras weights file: it has no 'layers' group")
        for layer, prefix in zip(order, _layer_prefixes(order)):
            expected = per_layer.get(id(layer), [])
            groups, _ = _vars_groups(layer, prefix)
            got = []
            for path, _ in groups:
                got += _read_group(f, path)
            where = f"layer {layer.name!r} ({type(layer).__name__}, {prefix})"
            if len(got) != len(expected):
                raise ValueError(
                    f"{where}: the file holds {len(got)} weight arrays, the layer has "
                    f"{len(expected)}"
                )
            for i, (a, b) in enumerate(zip(got, expected)):
                if tuple(a.shape) != tuple(b.shape):
                    raise ValueError(
                        f"{where}: weight {i} has shape {tuple(a.shape)} in the file, the "
                        f"layer's has shape {tuple(b.shape)}"
                    )
            new[id(layer)] = got
    arrays = []
    for layer in model.layers:
        arrays += new.get(id(layer), per_layer[id(layer)])
    model.set_weights(arrays)


# --- archives ----------------------------------------------------------------------------


def save_archive(model, path):
    """Writes ``model`` as a Keras 3 ``.keras`` archive (config, compile settings and
    weights; no optimizer state). Written beside the target and renamed into place, so a
    failed save leaves an earlier file whole."""
    serialized = model_to_keras(model)
    compile_config = compile_to_keras(model)
    if compile_config is not None:
        serialized["compile_config"] = compile_config
    weights = io.BytesIO()
    write_weights(model, weights)
    metadata = {
        "keras_version": _KERAS_VERSION,
        "written_by": "rustyml",
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
    }
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            zf.writestr(_METADATA, json.dumps(metadata))
            zf.writestr(_CONFIG, json.dumps(serialized))
            zf.writestr(_WEIGHTS, weights.getvalue())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_archive(path, compile=True):
    """The model a Keras 3 ``.keras`` archive holds, with its weights (and, with
    ``compile``, its compile settings)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not a .keras archive (not a zip file)")
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        if _CONFIG not in names:
            raise ValueError(f"{path} is not a .keras archive: it has no {_CONFIG}")
        try:
            serialized = json.loads(zf.read(_CONFIG))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: unreadable {_CONFIG}: {exc}") from None
        weights = zf.read(_WEIGHTS) if _WEIGHTS in names else None
    if weights is None:
        raise NotImplementedError(
            f"{path}: only archives holding {_WEIGHTS} are read by rustyml (not .npz weights)"
        )
    model = model_from_keras(serialized)
    _ensure_built(model)
    if compile and serialized.get("compile_config"):
        compile_from_keras(model, serialized["compile_config"])
    keras_order = None
    if serialized.get("class_name") != "Sequential":
        keras_order = _keras_layer_names(serialized)
    read_weights(model, io.BytesIO(weights), keras_order)
    return model


def _ensure_built(model):
    from rustyml.keras._functional import Model

    if not isinstance(model, Model):
        if model._input_shape is None:
            raise ValueError("the Keras Sequential config gives no input shape")
        model.build()


def model_from_json(text):
    """The model Keras's ``model.to_json()`` describes (weights fresh)."""
    try:
        serialized = json.loads(text)
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"model_from_json: not a JSON model config: {exc}") from None
    model = model_from_keras(serialized)
    return model


def save_weights(model, filepath, overwrite=True):
    """``model.save_weights``: Keras 3's ``.weights.h5`` file."""
    path = os.fspath(filepath)
    if not path.endswith(".weights.h5"):
        raise ValueError(
            f"save_weights: the filename must end in .weights.h5 (Keras 3's weights file), "
            f"got {path!r}"
        )
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"save_weights: {path} exists and overwrite=False")
    data = io.BytesIO()
    write_weights(model, data)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data.getvalue())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_weights(model, filepath):
    """``model.load_weights``: a Keras 3 ``.weights.h5`` file (or the weights of a ``.keras``
    archive)."""
    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    if path.endswith(".keras"):
        with zipfile.ZipFile(path) as zf:
            data = zf.read(_WEIGHTS)
        read_weights(model, io.BytesIO(data))
        return
    if not path.endswith(".weights.h5"):
        raise ValueError(
            f"load_weights: the filename must end in .weights.h5 or .keras, got {path!r}"
        )
    with open(path, "rb") as f:
        data = f.read()
    read_weights(model, io.BytesIO(data))
