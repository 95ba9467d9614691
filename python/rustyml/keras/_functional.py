"""Keras's functional API: ``keras.Input`` gives a symbolic tensor, calling a layer on
symbolic tensors records the call and returns its output tensor, and ``keras.Model(inputs,
outputs)`` turns the recorded graph into a native graph model (``NativeFunctional``, the
crate's ``neural_network::functional``), built from Keras 3's functional config (layers with
``inbound_nodes``, ``input_layers``, ``output_layers``).

Shapes are known when a layer is called: each call is checked by building the layer natively
for its input shapes, so a misfit (``Add`` of two shapes, a shared layer called on another
shape) is a ``ValueError`` naming the layer at the call, as in Keras.
"""

import json
import os
import re
import threading
import warnings

import numpy as np

from rustyml import _native
from rustyml.keras import _seeding
from rustyml.keras.layers import InputSpec
from rustyml.neural_network import _batches, _metrics, merge_layers
from rustyml.neural_network import _sample_weights as _sw
from rustyml.neural_network import layers as layers_module
from rustyml.neural_network import losses as losses_module
from rustyml.neural_network import optimizers as optimizers_module
from rustyml.neural_network._sequential import (
    _as_float32,
    _attach_callbacks,
    _call,
    _check_callbacks,
    _float32_contiguous,
    _frozen_layer_indices,
    _get_layer,
    _ModelFiles,
    _optional_steps,
    _Progress,
    _refuse_weighted_metrics,
    _split_by_trainability,
    _split_point,
)

_FORMAT = "rustyml.functional.v1"
_names_lock = threading.Lock()
_name_counts = {}


def _unique_name(base):
    """Keras's automatic names: ``dense``, ``dense_1``, ... unique in this process."""
    with _names_lock:
        n = _name_counts.get(base, 0)
        _name_counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def _snake(name):
    """``GlobalAveragePooling2D`` -> ``global_average_pooling2d``, as Keras names layers."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class KerasTensor:
    """A symbolic tensor: the output of one call of a layer (or a model input)."""

    def __init__(self, shape, layer, node_index):
        self.shape = (None, *shape)
        self.dtype = "float32"
        self._keras_history = (layer, node_index)

    @property
    def name(self):
        layer, node = self._keras_history
        return layer.name if node == 0 else f"{layer.name}_{node}"

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, name={self.name}>"

    def __bool__(self):
        raise TypeError("a symbolic tensor has no truth value (it holds no data)")

    def __array__(self, *args, **kwargs):
        raise TypeError(
            "a symbolic tensor (from keras.Input or a layer call) holds no data: build "
            "keras.Model(inputs, outputs) and call predict"
        )


class InputLayer:
    """The layer behind ``keras.Input``: a model input of a fixed per-sample shape."""

    trainable = False

    def __init__(self, shape, name):
        self.shape = tuple(shape)
        self.name = name
        self._calls = []

    @property
    def batch_shape(self):
        return (None, *self.shape)

    def get_config(self):
        return {
            "batch_shape": list(self.batch_shape),
            "dtype": "float32",
            "sparse": False,
            "ragged": False,
            "name": self.name,
            "optional": False,
        }

    def get_weights(self):
        return []

    def __repr__(self):
        return f"<InputLayer name={self.name}, shape={self.batch_shape}>"


class InputTensor(KerasTensor, InputSpec):
    """What ``keras.Input`` returns: a model input (symbolic), also accepted as the first
    entry of a ``Sequential``."""

    def __init__(self, shape, name=None):
        layer = InputLayer(shape, name or _unique_name("input_layer"))
        KerasTensor.__init__(self, shape, layer, 0)
        self._input_name = name


def _is_input(t):
    return isinstance(t._keras_history[0], InputLayer)


def _tensor_list(value, what):
    """``(kind, keys, tensors)`` of a tensor, list/tuple or dict of tensors."""
    if isinstance(value, KerasTensor):
        return "single", None, [value]
    if isinstance(value, dict):
        items = list(value.items())
        tensors = [v for _, v in items]
        kind, keys = "dict", [k for k, _ in items]
    elif isinstance(value, (list, tuple)):
        tensors, kind, keys = list(value), "list", None
    else:
        raise TypeError(
            f"{what} must be a symbolic tensor or a list or dict of them, got {value!r}"
        )
    if not tensors or not all(isinstance(t, KerasTensor) for t in tensors):
        raise TypeError(
            f"{what} must be symbolic tensors (from keras.Input or layer calls), got {value!r}"
        )
    return kind, keys, tensors


def _native_probe_config(layer, inputs, as_list):
    """A functional config of ``layer`` called once on inputs of the given shapes."""
    entries = []
    args = []
    for i, t in enumerate(inputs):
        name = f"__probe_input_{i}"
        entries.append(
            {
                "class_name": "InputLayer",
                "name": name,
                "config": {"batch_shape": [None, *t.shape[1:]], "name": name},
                "inbound_nodes": [],
            }
        )
        args.append(_tensor_ref(name, 0, t.shape))
    config = layers_module.serialize(layer)
    arg = args if as_list else args[0]
    entries.append(
        {
            "class_name": config["class_name"],
            "name": layer.name,
            "config": config["config"],
            "inbound_nodes": [{"args": [arg], "kwargs": {}}],
        }
    )
    return {
        "name": "probe",
        "seed": 0,
        "layers": entries,
        "input_layers": [[e["name"], 0, 0] for e in entries[:-1]],
        "output_layers": [[layer.name, 0, 0]],
    }


def _tensor_ref(layer_name, node, shape):
    return {
        "class_name": "__keras_tensor__",
        "config": {
            "shape": list(shape),
            "dtype": "float32",
            "keras_history": [layer_name, node, 0],
        },
    }


def call_layer(layer, inputs, *args, **kwargs):
    """``layer(inputs)`` on symbolic tensors: checks the call natively, records it, returns
    the output tensor."""
    if args:
        raise TypeError(f"{type(layer).__name__}: unexpected positional arguments {args!r}")
    training = kwargs.pop("training", None)
    kwargs.pop("mask", None)
    if kwargs:
        raise TypeError(f"{type(layer).__name__}: unexpected call arguments {sorted(kwargs)}")
    if training is not None:
        raise NotImplementedError(
            "calling a layer with training=... is not implemented in rustyml: fit trains and "
            "predict infers"
        )
    is_merge = type(layer).__name__ in merge_layers.MERGE_LAYERS
    as_list = isinstance(inputs, (list, tuple))
    tensors = list(inputs) if as_list else [inputs]
    if not tensors or not all(isinstance(t, KerasTensor) for t in tensors):
        raise TypeError(
            f"{type(layer).__name__}: rustyml layers compute inside a model: call the layer on "
            "symbolic tensors (keras.Input or other layers' outputs) and build "
            "keras.Model(inputs, outputs); calling a layer on arrays is not implemented"
        )
    if is_merge and not as_list:
        raise ValueError(
            f"a merge layer ({type(layer).__name__}) must be called on a list of tensors"
        )
    if not is_merge and len(tensors) != 1:
        raise ValueError(f"{type(layer).__name__} takes one tensor, got a list of {len(tensors)}")
    if layer.name is None:
        layer.name = _unique_name(_snake(type(layer).__name__))
    calls = layer.__dict__.setdefault("_calls", [])
    if calls and not is_merge:
        first = calls[0][0][0].shape
        if first != tensors[0].shape:
            raise ValueError(
                f"layer {layer.name!r} ({type(layer).__name__}) was called on tensors of shape "
                f"{first} and is now called on {tensors[0].shape}: a shared layer takes one shape"
            )
    try:
        probe = _native.neural_network.NativeFunctional(
            json.dumps(_native_probe_config(layer, tensors, as_list))
        )
    except ValueError as exc:
        message = str(exc).replace("__probe_input_", "input ")
        raise ValueError(f"calling layer {layer.name!r}: {message}") from None
    out_shape = tuple(probe.output_shapes()[0])
    node = len(calls)
    out = KerasTensor(out_shape, layer, node)
    calls.append((tensors, as_list, out))
    return out


def _structure(kind, keys, values):
    if kind == "single":
        return values[0]
    if kind == "dict":
        return dict(zip(keys, values))
    return list(values)


class Model(_ModelFiles):
    """Keras's functional ``Model(inputs, outputs)``: several inputs and outputs (a tensor,
    a list, or a dict of them), shared layers, merge layers. Trains through the same native
    engines, optimizers and losses as ``Sequential``, with its determinism (same seed, same
    bits at any thread count).

    Without a ``seed`` the weights come from the stream ``keras.utils.set_random_seed``
    starts (or fresh entropy when none was set)."""

    _FILE_FORMAT = _FORMAT

    def __init__(self, inputs=None, outputs=None, name=None, trainable=True, seed=None, **kwargs):
        if inputs is None or outputs is None:
            raise NotImplementedError(
                "keras.Model without inputs and outputs (subclassing Model) is not "
                "implemented in rustyml: build keras.Model(inputs, outputs) from keras.Input"
            )
        if kwargs:
            raise TypeError(f"Model: unexpected arguments {sorted(kwargs)}")
        self._in_kind, self._in_keys, self._inputs = _tensor_list(inputs, "inputs")
        self._out_kind, self._out_keys, self._outputs = _tensor_list(outputs, "outputs")
        for t in self._inputs:
            if not _is_input(t):
                raise ValueError(
                    f"model inputs must come from keras.Input, got {t!r} (a layer's output)"
                )
        if len({id(t) for t in self._inputs}) != len(self._inputs):
            raise ValueError("the same Input is given twice among the model's inputs")
        self.name = name or "functional"
        self.trainable = trainable
        self.seed = _seeding.next_seed() if seed is None else seed
        self._compiled = None
        self.stop_training = False
        self.history = None
        self._collect_graph()
        self._native = _native.neural_network.NativeFunctional(json.dumps(self._native_config()))
        layers_module.apply_adapted_statistics(
            self, self._native, self.layers, self._weight_counts()
        )
        layers_module.remember_model(self, self.layers)

    def _layer_weight_counts(self):
        """How many weight arrays each layer has (``get_weights`` lists them in order)."""
        return self._weight_counts()

    def load_weights(self, filepath):
        """Loads a Keras 3 ``.weights.h5`` file (written by Keras or ``save_weights``); a
        file that does not fit the model is refused and nothing changes."""
        from rustyml.keras import _keras_format

        _keras_format.load_weights(self, filepath)

    def _weight_counts(self):
        return [row[4] for row in self._native.layer_summaries()]

    def _load_adapted_statistics(self, layer):
        """Called by a ``Normalization`` of this model when it is adapted again."""
        if all(lay is not layer for lay in self.layers):
            return
        self._native.set_weights(
            layers_module.adapted_layer_weights(
                self._native, self.layers, self._weight_counts(), layer
            )
        )

    # -- the graph -------------------------------------------------------------------------
    def _collect_graph(self):
        """Every call the outputs depend on, inputs first then depth-first post-order; the
        layers in order of first use; Keras's per-model node numbering."""
        order, seen = [], set()
        for t in self._inputs:
            key = (id(t._keras_history[0]), 0)
            seen.add(key)
            order.append(t._keras_history)
        model_inputs = {id(t._keras_history[0]) for t in self._inputs}
        for out in self._outputs:
            stack = [(out._keras_history, False)]
            while stack:
                (layer, node), expanded = stack.pop()
                key = (id(layer), node)
                if expanded:
                    if key not in seen:
                        seen.add(key)
                        order.append((layer, node))
                    continue
                if key in seen:
                    continue
                if isinstance(layer, InputLayer):
                    if id(layer) not in model_inputs:
                        raise ValueError(
                            f"Graph disconnected: output {out.name!r} depends on Input "
                            f"{layer.name!r}, which is not among the model's inputs"
                        )
                    continue
                stack.append(((layer, node), True))
                tensors = layer._calls[node][0]
                for t in reversed(tensors):
                    stack.append((t._keras_history, False))
        self._nodes = order
        layers, ids = [], {}
        for layer, _ in order:
            if id(layer) not in ids:
                ids[id(layer)] = len(layers)
                layers.append(layer)
        names = [layer.name for layer in layers]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(
                f"layer names must be unique in a model: {sorted(dup)} name several layers"
            )
        self.layers = layers
        # Keras numbers each layer's calls within the model: the global call indices used,
        # in order
        used = {}
        for layer, node in order:
            used.setdefault(id(layer), set()).add(node)
        self._local = {
            (lid, node): i for lid, nodes in used.items() for i, node in enumerate(sorted(nodes))
        }

    def _ref(self, t):
        layer, node = t._keras_history
        return [layer.name, self._local[(id(layer), node)], 0]

    def _refs(self, kind, keys, tensors):
        refs = [self._ref(t) for t in tensors]
        if kind == "single":
            return refs[0]
        if kind == "dict":
            return dict(zip(keys, refs))
        return refs

    def get_config(self):
        """Keras 3's functional config (layers with ``inbound_nodes``, ``input_layers``,
        ``output_layers``), plus the model ``seed``."""
        entries = []
        for layer in self.layers:
            if isinstance(layer, InputLayer):
                entries.append(
                    {
                        "module": "keras.layers",
                        "class_name": "InputLayer",
                        "config": layer.get_config(),
                        "registered_name": None,
                        "name": layer.name,
                        "inbound_nodes": [],
                    }
                )
                continue
            spec = layers_module.serialize(layer)
            nodes = []
            calls = sorted((i, node) for (lid, node), i in self._local.items() if lid == id(layer))
            for _, node in calls:
                tensors, as_list, _ = layer._calls[node]
                args = [
                    {
                        "class_name": "__keras_tensor__",
                        "config": {
                            "shape": list(t.shape),
                            "dtype": "float32",
                            "keras_history": self._ref(t),
                        },
                    }
                    for t in tensors
                ]
                nodes.append({"args": [args if as_list else args[0]], "kwargs": {}})
            entries.append(
                {
                    "module": "keras.layers",
                    "class_name": spec["class_name"],
                    "config": spec["config"],
                    "registered_name": None,
                    "name": layer.name,
                    "inbound_nodes": nodes,
                }
            )
        return {
            "name": self.name,
            "trainable": self.trainable,
            "seed": self.seed,
            "layers": entries,
            "input_layers": self._refs(self._in_kind, self._in_keys, self._inputs),
            "output_layers": self._refs(self._out_kind, self._out_keys, self._outputs),
        }

    def _native_config(self):
        config = self.get_config()
        # the native side takes lists; the dict keys stay here
        config["input_layers"] = [self._ref(t) for t in self._inputs]
        config["output_layers"] = [self._ref(t) for t in self._outputs]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The model a ``get_config`` dict describes; a malformed config is a ``ValueError``."""
        if custom_objects:
            raise NotImplementedError("from_config(custom_objects=) is not implemented in rustyml")
        if not isinstance(config, dict) or not isinstance(config.get("layers"), list):
            raise ValueError("Model.from_config needs a dict with a 'layers' list")  # noqa: TRY004
        try:
            return cls._from_config(config)
        except (TypeError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"Model.from_config: invalid config: {exc}") from None

    @classmethod
    def _from_config(cls, config):
        tensors = {}
        pending = []
        for entry in config["layers"]:
            name = entry.get("name") or entry["config"]["name"]
            if entry["class_name"] == "InputLayer":
                shape = entry["config"].get("batch_shape")
                shape = shape[1:] if shape is not None else entry["config"]["shape"]
                t = InputTensor(tuple(shape), name=name)
                tensors[(name, 0)] = t
                continue
            layer_config = dict(entry["config"])
            layer_config["name"] = name
            layer = layers_module.deserialize(
                {"class_name": entry["class_name"], "config": layer_config}
            )
            for node in entry.get("inbound_nodes", []):
                pending.append((layer, name, node))
        count = {}
        while pending:
            progress = []
            for item in pending:
                layer, name, node = item
                arg = node["args"][0]
                refs = arg if isinstance(arg, list) else [arg]
                keys = [tuple(r["config"]["keras_history"][:2]) for r in refs]
                if all(k in tensors for k in keys):
                    ins = [tensors[k] for k in keys]
                    out = layer(ins if isinstance(arg, list) else ins[0])
                    tensors[(name, count.get(name, 0))] = out
                    count[name] = count.get(name, 0) + 1
                    progress.append(item)
            if not progress:
                missing = sorted({p[1] for p in pending})
                raise ValueError(
                    f"Model.from_config: the calls of layers {missing} refer to tensors no "
                    "layer produces (or form a cycle)"
                )
            pending = [p for p in pending if p not in progress]

        def resolve(refs, what):
            if isinstance(refs, dict):
                return {k: resolve(v, what) for k, v in refs.items()}
            if refs and isinstance(refs[0], str):
                key = (refs[0], refs[1])
                if key not in tensors:
                    raise ValueError(f"Model.from_config: {what} names unknown tensor {refs}")
                return tensors[key]
            return [resolve(r, what) for r in refs]

        return cls(
            resolve(config["input_layers"], "input_layers"),
            resolve(config["output_layers"], "output_layers"),
            name=config.get("name"),
            trainable=config.get("trainable", True),
            seed=config.get("seed"),
        )

    def to_json(self, **kwargs):
        """Keras 3's JSON of the model (what ``keras.models.model_from_json`` reads)."""
        from rustyml.keras import _keras_format

        return json.dumps(_keras_format.model_to_keras(self), **kwargs)

    # -- names and structure ---------------------------------------------------------------
    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def input_names(self):
        return [t._keras_history[0].name for t in self._inputs]

    @property
    def output_names(self):
        return [t._keras_history[0].name for t in self._outputs]

    def _output_keys(self):
        """How losses, metrics and targets name outputs: the dict keys, else layer names."""
        return list(self._out_keys) if self._out_kind == "dict" else self.output_names

    def get_layer(self, name=None, index=None):
        return _get_layer(self.layers, name, index)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            "calling a functional model (as a layer of another model, or on arrays) is not "
            "implemented in rustyml: use predict"
        )

    # -- weights ---------------------------------------------------------------------------
    def get_weights(self):
        return list(self._native.get_weights())

    def set_weights(self, weights):
        arrays = [_float32_contiguous(w) for w in weights]
        self._native.set_weights(arrays)

    @property
    def weights(self):
        return self.get_weights()

    @property
    def trainable_weights(self):
        return _split_by_trainability(self.layers, *self._arrays_and_names())[0]

    @property
    def non_trainable_weights(self):
        return _split_by_trainability(self.layers, *self._arrays_and_names())[1]

    def _arrays_and_names(self):
        return self._native.get_weights(), self._native.weight_names()

    def count_params(self):
        return sum(row[3] for row in self._native.layer_summaries())

    def summary(self, print_fn=print, **kwargs):
        rows = self._native.layer_summaries()
        width = 100
        lines = [
            f'Model: "{self.name}"',
            "-" * width,
            f"{'Layer (type)':<32}{'Output Shape':<22}{'Param #':>10}  Connected to",
            "=" * width,
        ]
        trainable = 0
        for layer, (name, kind, shapes, params, _) in zip(self.layers, rows):
            used = sorted((i, node) for (lid, node), i in self._local.items() if lid == id(layer))
            shape = " ".join(str((None, *s)) for s in shapes)
            sources = []
            for _, node in [] if isinstance(layer, InputLayer) else used:
                for t in layer._calls[node][0]:
                    src, n = t._keras_history
                    sources.append(f"{src.name}[{self._local[(id(src), n)]}][0]")
            connected = ", ".join(sources) or "-"
            label = f"{name} ({kind})".ljust(31) + " "
            lines.append(f"{label:<32}{shape:<22}{params:>10,}  {connected}")
            # a Normalization's weights are statistics, never trained
            if getattr(layer, "trainable", True) and not getattr(layer, "_statistics_only", False):
                trainable += params
        total = sum(r[3] for r in rows)
        lines += [
            "=" * width,
            f"Total params: {total:,}",
            f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}",
            "-" * width,
        ]
        for line in lines:
            print_fn(line)

    # -- compile ---------------------------------------------------------------------------
    def _per_output(self, value, what, default):
        """``value`` given once for every output, as a list in output order, or as a dict by
        output name: one entry per output."""
        keys = self._output_keys()
        if isinstance(value, dict):
            unknown = set(value) - set(keys)
            if unknown:
                raise ValueError(
                    f"{what} names outputs {sorted(unknown)}; the model's outputs are {keys}"
                )
            return [value.get(k, default) for k in keys]
        if isinstance(value, (list, tuple)):
            if len(value) != len(keys):
                raise ValueError(
                    f"{what} must have one entry per output ({len(keys)}: {keys}), got {len(value)}"
                )
            return list(value)
        return [value] * len(keys)

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, **kwargs):
        """Keras's ``compile``: one loss for every output, or a list / dict of losses;
        ``loss_weights`` scale each output's loss in the total; ``metrics`` by name (a list
        for a single output; a list of lists or a dict by output name for several)."""
        _refuse_weighted_metrics(kwargs.pop("weighted_metrics", None))
        if kwargs:
            raise NotImplementedError(
                f"compile arguments {sorted(kwargs)} are not implemented in rustyml"
            )
        if loss is None:
            raise ValueError("compile needs a loss (e.g. loss='mse')")
        opt = optimizers_module.get(optimizer)
        losses = [losses_module.get(entry) for entry in self._per_output(loss, "loss", None)]
        weights = self._per_output(
            1.0 if loss_weights is None else loss_weights, "loss_weights", 1.0
        )
        try:
            weights = [float(w) for w in weights]
        except (TypeError, ValueError):
            raise ValueError(f"loss_weights must be numbers, got {loss_weights!r}") from None
        keys = self._output_keys()
        if metrics is None:
            per_metrics = [[] for _ in keys]
        elif len(keys) == 1:
            per_metrics = [metrics if isinstance(metrics, (list, tuple)) else [metrics]]
        elif isinstance(metrics, dict):
            per_metrics = self._per_output(metrics, "metrics", [])
        elif isinstance(metrics, (list, tuple)) and all(
            isinstance(m, (list, tuple)) or m is None for m in metrics
        ):
            per_metrics = self._per_output(list(metrics), "metrics", [])
        else:
            raise ValueError(
                f"for a model with several outputs {keys}, metrics must be a dict by output "
                f"name or a list with one list per output, got {metrics!r}"
            )
        metric_fns = []
        for j, entry in enumerate(per_metrics):
            for log_name, fn in _metrics.resolve([m for m in (entry or [])]):
                prefix = "" if len(keys) == 1 else f"{keys[j]}_"
                metric_fns.append((j, prefix + log_name, fn))
        opt_json = json.dumps(optimizers_module.serialize(opt))
        losses_json = json.dumps([lo.get_config() for lo in losses])
        self._native.compile(opt_json, losses_json, weights)
        self._compiled = (opt_json, losses_json, losses, weights, metric_fns, metrics)
        self.optimizer = opt
        self.loss = losses[0] if len(losses) == 1 else losses
        opt._compiled_into(self)

    def _optimizer_learning_rate_changed(self, optimizer):
        if getattr(self, "optimizer", None) is optimizer:
            self._native.learning_rate = optimizer.learning_rate

    # -- data ------------------------------------------------------------------------------
    def _arrays(self, value, kind, keys, names, what):
        """One float32 array per input (or target), from an array, a list or a dict."""
        if isinstance(value, dict):
            lookup = keys if kind == "dict" else names
            unknown = set(value) - set(lookup)
            missing = [k for k in lookup if k not in value]
            if unknown or missing:
                raise ValueError(
                    f"{what}: the model's names are {lookup}; got keys {sorted(value)}"
                )
            arrays = [value[k] for k in lookup]
        elif isinstance(value, (list, tuple)) and (len(names) > 1 or len(value) == 1):
            arrays = list(value)
        else:
            arrays = [value]
        if len(arrays) != len(names):
            raise ValueError(
                f"the model has {len(names)} {what} ({names}), got {len(arrays)} arrays"
            )
        return arrays

    def _prepare_x(self, x):
        arrays = self._arrays(x, self._in_kind, self._in_keys, self.input_names, "inputs")
        out = []
        for name, a, shape in zip(self.input_names, arrays, self._native.input_shapes()):
            a = _as_float32(a, f"input {name!r}")
            if tuple(a.shape[1:]) != tuple(shape):
                raise ValueError(
                    f"input {name!r} has per-sample shape {tuple(a.shape[1:])} but the model "
                    f"expects {tuple(shape)}"
                )
            out.append(a)
        if len({len(a) for a in out}) != 1:
            raise ValueError(
                f"the inputs have different numbers of samples: {[len(a) for a in out]}"
            )
        return out

    def _prepare_y(self, y, n):
        keys = self._output_keys()
        arrays = self._arrays(y, self._out_kind, self._out_keys, keys, "outputs")
        out = []
        for key, a, loss, shape in zip(
            keys, arrays, self._compiled[2], self._native.output_shapes()
        ):
            if loss.name == "sparse_categorical_crossentropy":
                raw = np.asarray(a)
                if raw.ndim == 2 and raw.shape[1] == 1:
                    raw = raw[:, 0]
                if raw.ndim != 1:
                    raise ValueError(
                        f"target {key!r}: sparse_categorical_crossentropy needs integer labels "
                        f"of shape (n,), got {raw.shape}"
                    )
                labels = _as_float32(raw, f"target {key!r}")
                if not np.array_equal(labels, np.round(labels)) or (
                    labels.size and (labels.min() < 0 or labels.max() >= shape[-1])
                ):
                    raise ValueError(f"target {key!r}: labels must be integers in [0, {shape[-1]})")
                a = labels.reshape(-1, 1)
            else:
                a = _as_float32(a, f"target {key!r}")
                if a.ndim == 1 and tuple(shape) == (1,):
                    a = a.reshape(-1, 1)
                if tuple(a.shape[1:]) != tuple(shape):
                    raise ValueError(
                        f"target {key!r} has per-sample shape {tuple(a.shape[1:])} but the "
                        f"output has {tuple(shape)}"
                    )
            if len(a) != n:
                raise ValueError(f"target {key!r} has {len(a)} samples but the inputs have {n}")
            out.append(a)
        return out

    def _apply_trainable(self):
        self._native.set_trainable(
            [bool(getattr(layer, "trainable", True)) for layer in self.layers]
        )

    # -- training and inference ------------------------------------------------------------
    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_freq=1,
    ):
        """Keras's ``fit`` with arrays, lists or dicts of arrays; returns a ``History``
        (``loss``, each output's ``<name>_loss`` when there are several, metrics, and their
        ``val_`` counterparts on the epochs ``validation_freq`` selects).

        ``sample_weight`` weights each sample's loss (Keras's ``sum(w_i loss_i) /
        batch_size``): one array for every output, or a list / dict with one array (or
        ``None``) per output; ``class_weight`` (single-output models) turns ``{class:
        weight}`` into per-sample weights from the targets. ``validation_split`` splits the
        sample weights too; ``validation_data`` may carry its own as a third element.

        A step whose loss becomes NaN or infinite raises ``ValueError`` with the weights put
        back to their values before this call; with a ``TerminateOnNaN`` callback training
        stops after that batch instead, the weights as it left them.

        ``x`` may also be read batch by batch, as ``Sequential.fit`` reads it: a generator,
        an iterable or a ``PyDataset`` of ``(x, y)`` / ``(x, y, sample_weight)`` batches
        (each part an array, list or dict as for arrays), with ``steps_per_epoch`` and
        ``validation_steps`` as Keras 3's epochs count them."""
        self._check_compiled()
        batch_size = 32 if batch_size is None else int(batch_size)
        if _batches.is_batch_source(x):
            _refuse_outside_batches(y, sample_weight)
            return self._fit_batches(
                x,
                batch_size,
                epochs,
                verbose,
                callbacks,
                validation_data,
                shuffle,
                class_weight,
                initial_epoch,
                steps_per_epoch,
                validation_steps,
                validation_freq,
            )
        if steps_per_epoch is not None:
            raise ValueError(
                "steps_per_epoch applies to generators, PyDatasets and iterables; for "
                "in-memory arrays the epoch is the whole data"
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        validation_freq = _sw.check_validation_freq(validation_freq)
        class_weight = self._checked_class_weight(class_weight, sample_weight)
        cbs = _check_callbacks(callbacks)
        xs = self._prepare_x(x)
        ys = self._prepare_y(y, len(xs[0]))
        sws = self._sample_weights(sample_weight, len(xs[0]), "sample_weight")
        vws = None
        if validation_data is not None:
            if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
                raise ValueError(
                    "validation_data must be a tuple (x_val, y_val) or (x_val, y_val, "
                    "val_sample_weight)"
                )
            vx = self._prepare_x(validation_data[0])
            vy = self._prepare_y(validation_data[1], len(vx[0]))
            if len(validation_data) == 3:
                vws = self._sample_weights(validation_data[2], len(vx[0]), "val_sample_weight")
        elif validation_split:
            split_at = _split_point(len(xs[0]), validation_split)
            vx, xs = [a[split_at:] for a in xs], [a[:split_at] for a in xs]
            vy, ys = [a[split_at:] for a in ys], [a[:split_at] for a in ys]
            if sws is not None:
                vws = [None if w is None else w[split_at:] for w in sws]
                sws = [None if w is None else w[:split_at] for w in sws]
        else:
            vx = vy = None
        if class_weight is not None:
            sws = [_sw.class_weight_to_sample_weight(ys[0], class_weight)]
        terminators = _sw.terminating_callbacks(cbs)
        verbose = 1 if verbose == "auto" else verbose
        self._apply_trainable()
        n = len(xs[0])
        batch_size = min(batch_size, n)
        cbs, history = _attach_callbacks(self, cbs)
        before = self.get_weights()
        keys = self._output_keys()
        metric_fns = self._compiled[4]
        _call(cbs, "on_train_begin", None)
        for epoch in range(initial_epoch, epochs):
            _call(cbs, "on_epoch_begin", epoch, None)
            progress = _Progress(verbose, -(-n // batch_size), epoch, epochs)
            running = (
                _metrics.RunningMetrics(metric_fns, ys, self._compiled[2]) if metric_fns else None
            )
            loss, per, batches = self._native.train_epoch(
                xs, ys, batch_size, bool(shuffle), epoch, running.add if running else None, sws
            )
            if not np.isfinite(loss):
                if terminators:
                    _sw.report_non_finite(terminators, batches - 1, loss)
                else:
                    self.set_weights(before)
                    raise ValueError(
                        f"training diverged at epoch {epoch + 1}: the loss became {loss}; the "
                        "weights were put back to their values before fit (lower the learning "
                        "rate)"
                    )
            logs = _loss_logs(loss, keys, per, running)
            if vx is not None and _sw.should_validate(epoch, validation_freq):
                for k, v in self._evaluate_logs(vx, vy, max(batch_size, 256), vws).items():
                    logs["val_" + k] = v
            progress.finish(logs)
            _call(cbs, "on_epoch_end", epoch, logs)
            if self.stop_training:
                break
        _call(cbs, "on_train_end", None)
        self.history = history
        return history

    def _checked_class_weight(self, class_weight, sample_weight):
        """``class_weight`` checked as Keras checks it: not with ``sample_weight``, and for
        single-output models only."""
        if sample_weight is not None and class_weight is not None:
            raise ValueError(
                "sample_weight and class_weight cannot be given together: pass one of them"
            )
        class_weight = _sw.check_class_weight(class_weight)
        if class_weight is not None and len(self._output_keys()) > 1:
            raise ValueError(
                "class_weight is only supported for models with a single output (as in "
                "Keras); give sample_weight per output instead"
            )
        return class_weight

    # -- data read batch by batch -------------------------------------------------------
    def _epochs(self, x, what, batch_size, shuffle, steps, steps_name="steps"):
        src = _batches.source(
            x, None, what=what, batch_size=batch_size, shuffle=shuffle, seed=self.seed
        )
        return _batches.Epochs(src, _optional_steps(steps, steps_name))

    def _source_batch(self, raw, kind, need_y):
        """One batch of a source as the in-memory path converts and checks arrays."""
        bx, by, bw = _batches.unpack(raw, kind)
        xs = self._prepare_x(bx)
        if not need_y:
            return xs, None, None
        if by is None:
            raise ValueError(f"a {kind} batch for fit/evaluate must hold targets: (x, y)")
        n = len(xs[0])
        return xs, self._prepare_y(by, n), self._sample_weights(bw, n, "a batch's sample_weight")

    def _evaluate_batches(self, epochs_iter, index):
        """The logs of one pass over a batch source, each batch's values weighted by its
        size; ``None`` when it yields no batch."""
        sums, seen = {}, 0
        for raw in epochs_iter.epoch(index):
            xs, ys, sws = self._source_batch(raw, epochs_iter.src.kind, True)
            n = len(xs[0])
            for k, v in self._evaluate_logs(xs, ys, n, sws).items():
                sums[k] = sums.get(k, 0.0) + float(v) * n
            seen += n
        if seen == 0:
            return None
        return {k: v / seen for k, v in sums.items()}

    def _fit_batches(
        self,
        x,
        batch_size,
        epochs,
        verbose,
        callbacks,
        validation_data,
        shuffle,
        class_weight,
        initial_epoch,
        steps_per_epoch,
        validation_steps,
        validation_freq,
    ):
        """``fit`` on a batch source: each batch is one step of the native loop (so batches
        equal to an in-memory epoch's train to the same bits)."""
        validation_freq = _sw.check_validation_freq(validation_freq)
        class_weight = self._checked_class_weight(class_weight, None)
        keys = self._output_keys()
        cbs = _check_callbacks(callbacks)
        epochs_iter = self._epochs(
            x, "fit", batch_size, shuffle, steps_per_epoch, "steps_per_epoch"
        )
        kind = epochs_iter.src.kind
        if class_weight is not None and kind in ("generator", "iterable"):
            raise ValueError(
                f"class_weight is not supported when x is a {kind} (Keras refuses it there "
                "too): yield (x, y, sample_weight) batches, or use a PyDataset or arrays"
            )
        val_epochs = val_arrays = None
        if validation_data is not None:
            if _batches.is_batch_source(validation_data):
                val_epochs = self._epochs(
                    validation_data, "fit", batch_size, False, validation_steps, "validation_steps"
                )
            elif isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3):
                vx = self._prepare_x(validation_data[0])
                vy = self._prepare_y(validation_data[1], len(vx[0]))
                vws = None
                if len(validation_data) == 3:
                    vws = self._sample_weights(validation_data[2], len(vx[0]), "val_sample_weight")
                val_arrays = (vx, vy, vws)
            else:
                raise ValueError(
                    "validation_data must be a tuple (x_val, y_val[, val_sample_weight]), a "
                    f"generator, a PyDataset or an iterable of batches, got {validation_data!r}"
                )
        terminators = _sw.terminating_callbacks(cbs)
        verbose = 1 if verbose == "auto" else verbose
        self._apply_trainable()
        cbs, history = _attach_callbacks(self, cbs)
        before = self.get_weights()
        metric_fns = self._compiled[4]
        _call(cbs, "on_train_begin", None)
        for epoch in range(initial_epoch, epochs):
            running = (
                _metrics.RunningMetrics(metric_fns, None, self._compiled[2]) if metric_fns else None
            )
            total, per_total, seen, progress = 0.0, None, 0, None
            for step, raw in enumerate(epochs_iter.epoch(epoch)):
                xs, ys, sws = self._source_batch(raw, kind, True)
                if class_weight is not None:
                    if sws is not None:
                        raise ValueError(
                            "class_weight cannot be used with batches that carry their own "
                            "sample weights (x, y, sample_weight)"
                        )
                    sws = [_sw.class_weight_to_sample_weight(ys[0], class_weight)]
                if step == 0:
                    _call(cbs, "on_epoch_begin", epoch, None)
                    progress = _Progress(verbose, epochs_iter.total, epoch, epochs)
                n = len(xs[0])
                loss, per, _ = self._native.train_epoch(
                    xs, ys, n, False, epoch, running.batch_adder(ys) if running else None, sws
                )
                total += float(loss) * n
                per = [float(v) * n for v in per]
                per_total = per if per_total is None else [a + b for a, b in zip(per_total, per)]
                seen += n
                progress.update(step + 1, total / seen)
                if not np.isfinite(loss):
                    if not terminators:
                        self.set_weights(before)
                        raise ValueError(
                            f"training diverged at epoch {epoch + 1}: the loss became {loss}; "
                            "the weights were put back to their values before fit (lower the "
                            "learning rate)"
                        )
                    _sw.report_non_finite(terminators, step, loss)
                    if self.stop_training:
                        break
            if seen == 0:
                _batches.end_empty_epoch(kind, epoch == initial_epoch, stacklevel=3)
                break
            mean_loss = float(np.float32(total / seen))
            logs = _loss_logs(mean_loss, keys, [v / seen for v in per_total], running)
            if _sw.should_validate(epoch, validation_freq):
                vlogs = None
                if val_epochs is not None:
                    vlogs = self._evaluate_batches(val_epochs, epoch)
                    if vlogs is None:
                        warnings.warn(
                            f"validation_data ran out of batches: no val_ logs for epoch "
                            f"{epoch + 1}",
                            UserWarning,
                            stacklevel=3,
                        )
                elif val_arrays is not None:
                    vlogs = self._evaluate_logs(
                        *val_arrays[:2], max(batch_size, 256), val_arrays[2]
                    )
                for k, v in (vlogs or {}).items():
                    logs["val_" + k] = v
            progress.finish(logs, step + 1)
            _call(cbs, "on_epoch_end", epoch, logs)
            if self.stop_training:
                break
        _call(cbs, "on_train_end", None)
        self.history = history
        return history

    def _sample_weights(self, value, n, name):
        """Per-output float32 weights (or ``None`` per unweighted output; ``None`` for no
        weights at all) from one array for every output, or a list / dict per output."""
        if value is None:
            return None
        keys = self._output_keys()
        if len(keys) > 1 and isinstance(value, (list, tuple, dict)):
            entries = self._per_output(value, name, None)
        else:
            entries = [value] * len(keys)
        return [
            None if w is None else _sw.as_sample_weight(w, n, f"{name} for output {k!r}")
            for k, w in zip(keys, entries)
        ]

    def _evaluate_logs(self, xs, ys, batch_size, sample_weights=None):
        # a frozen layer's weights carry no regularization penalty, in evaluate too
        self._apply_trainable()
        loss, per = self._native.evaluate(xs, ys, batch_size, sample_weights)
        keys = self._output_keys()
        logs = _loss_logs(loss, keys, per, None)
        metric_fns = self._compiled[4]
        if metric_fns:
            preds = self._native.predict(xs, batch_size)
            losses = self._compiled[2]
            for j, name, fn in metric_fns:
                logs[name] = fn(ys[j], preds[j], losses[j].name, losses[j].from_logits)
        return logs

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        sample_weight=None,
        steps=None,
        return_dict=False,
    ):
        """The total loss (and each output's loss and the metrics, as Keras lists them);
        ``sample_weight`` weights the losses as in ``fit`` (metrics stay unweighted). ``x``
        may be a generator, iterable or ``PyDataset`` of batches (``steps`` caps them)."""
        self._check_compiled()
        if _batches.is_batch_source(x):
            _refuse_outside_batches(y, sample_weight)
            logs = self._evaluate_batches(self._epochs(x, "evaluate", 32, False, steps), 0)
            if logs is None:
                raise ValueError("evaluate: the data yielded no batches")
            return _as_returned(logs, return_dict)
        if steps is not None:
            raise ValueError("steps applies to generators, PyDatasets and iterables")
        xs = self._prepare_x(x)
        ys = self._prepare_y(y, len(xs[0]))
        sws = self._sample_weights(sample_weight, len(xs[0]), "sample_weight")
        logs = self._evaluate_logs(xs, ys, 32 if batch_size is None else int(batch_size), sws)
        return _as_returned(logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Keras's ``test_on_batch``: ``evaluate`` on ``x, y`` as one batch."""
        self._check_compiled()
        xs = self._prepare_x(x)
        ys = self._prepare_y(y, len(xs[0]))
        sws = self._sample_weights(sample_weight, len(xs[0]), "sample_weight")
        return _as_returned(self._evaluate_logs(xs, ys, max(len(xs[0]), 1), sws), return_dict)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """Keras's ``train_on_batch``: one optimizer step on ``x, y`` as a single batch, in
        the given order, weighted as in ``fit``. Returns the batch's loss before the step
        (with each output's loss and the metrics on the step's training-mode outputs when
        there are any, as ``evaluate`` lists them). A step whose loss becomes NaN or
        infinite raises ``ValueError`` and is undone."""
        self._check_compiled()
        class_weight = self._checked_class_weight(class_weight, sample_weight)
        keys = self._output_keys()
        xs = self._prepare_x(x)
        n = len(xs[0])
        ys = self._prepare_y(y, n)
        sws = self._sample_weights(sample_weight, n, "sample_weight")
        if class_weight is not None:
            sws = [_sw.class_weight_to_sample_weight(ys[0], class_weight)]
        self._apply_trainable()
        metric_fns = self._compiled[4]
        running = _metrics.RunningMetrics(metric_fns, ys, self._compiled[2]) if metric_fns else None
        before = self.get_weights()
        loss, per, _ = self._native.train_epoch(
            xs, ys, max(n, 1), False, 0, running.add if running else None, sws
        )
        if not np.isfinite(loss):
            self.set_weights(before)
            raise ValueError(
                f"train_on_batch: the loss became {loss}; the step was undone (lower the "
                "learning rate)"
            )
        return _as_returned(_loss_logs(loss, keys, per, running), return_dict)

    def predict(self, x, batch_size=None, verbose="auto", steps=None):
        """Inference outputs, in the structure the model's outputs were given in; ``x`` may
        be a generator, iterable or ``PyDataset`` of batches (each batch's targets ignored;
        ``steps`` caps the batches read)."""
        if _batches.is_batch_source(x):
            parts = []
            epochs_iter = self._epochs(x, "predict", 32, False, steps)
            for raw in epochs_iter.epoch(0):
                xs, _, _ = self._source_batch(raw, epochs_iter.src.kind, False)
                parts.append(self._native.predict(xs, len(xs[0])))
            if not parts:
                raise ValueError("predict: the data yielded no batches")
            outs = [np.concatenate([p[j] for p in parts]) for j in range(len(parts[0]))]
            return _structure(self._out_kind, self._out_keys, outs)
        if steps is not None:
            raise ValueError("steps applies to generators, PyDatasets and iterables")
        xs = self._prepare_x(x)
        outs = self._native.predict(xs, 32 if batch_size is None else int(batch_size))
        return _structure(self._out_kind, self._out_keys, outs)

    def predict_on_batch(self, x):
        return self.predict(x, batch_size=len(self._prepare_x(x)[0]))

    # -- pickling --------------------------------------------------------------------------
    def __getstate__(self):
        """The config, compile settings, frozen flags and weights (not the optimizer's running
        state: a copy continues training with fresh moments)."""
        state = {
            "config": self.get_config(),
            "weights": self.get_weights(),
            "frozen": _frozen_layer_indices(self.layers),
        }
        if self._compiled is not None:
            state["compile"] = {
                "optimizer": optimizers_module.serialize(self.optimizer),
                "loss": [lo.get_config() for lo in self._compiled[2]],
                "loss_weights": self._compiled[3],
                "metrics": self._compiled[5],
            }
        return state

    def __setstate__(self, state):
        model = type(self).from_config(state["config"])
        for i in state["frozen"]:
            model.layers[i].trainable = False
        if "compile" in state:
            c = state["compile"]
            model.compile(
                c["optimizer"],
                [losses_module.get(lo) for lo in c["loss"]],
                loss_weights=c["loss_weights"],
                metrics=c["metrics"],
            )
        model.set_weights(state["weights"])
        self.__dict__.update(model.__dict__)
        layers_module.remember_model(self, self.layers)
        if "compile" in state:
            self.optimizer._compiled_into(self)

    # -- files -----------------------------------------------------------------------------
    def save(self, path):
        """One safetensors file (rustyml's format, as ``Sequential.save``): the weights, the
        functional config and the compile settings in its metadata, with a digest. A path
        ending in ``.keras`` is written as Keras 3's ``.keras`` archive instead."""
        self._save_file(path)

    def _compile_metadata(self):
        return {
            "losses": self._compiled[1],
            "loss_weights": json.dumps(self._compiled[3]),
            "metrics": json.dumps(self._compiled[5]),
        }

    @classmethod
    def load(cls, path):
        """A model written by ``save``: predicts bit-identically, compiled as it was."""
        meta, weights, verified = _native.neural_network.load_safetensors(os.fspath(path))
        return cls._from_file(path, meta, weights, verified)

    @classmethod
    def _from_file(cls, path, meta, weights, verified):
        if meta.get("format") != _FORMAT or "config" not in meta:
            raise ValueError(f"{path} is not a rustyml functional model file")
        if not verified:
            warnings.warn(
                f"{path} holds no digest: its contents cannot be verified",
                UserWarning,
                stacklevel=3,
            )
        try:
            model = cls.from_config(json.loads(meta["config"]))
            for i in json.loads(meta.get("frozen_layers", "[]")):
                model.layers[i].trainable = False
            if "optimizer" in meta and "losses" in meta:
                losses = [losses_module.get(c) for c in json.loads(meta["losses"])]
                model.compile(
                    json.loads(meta["optimizer"]),
                    losses,
                    loss_weights=json.loads(meta.get("loss_weights", "null")),
                    metrics=json.loads(meta.get("metrics", "null")),
                )
            model.set_weights(weights)
        except (KeyError, TypeError, IndexError, AttributeError, RecursionError) as exc:
            raise ValueError(
                f"{path}: unreadable model config, compile state or weights: {exc}"
            ) from None
        return model


def _refuse_outside_batches(y, sample_weight):
    """A batch source carries its own targets and weights (Keras's rule)."""
    if y is not None or sample_weight is not None:
        raise ValueError(
            "with a generator, PyDataset or iterable x, the targets and sample weights "
            "come in its batches: do not pass y or sample_weight"
        )


def _loss_logs(loss, keys, per_output, running):
    """The logs of a step, an epoch or an evaluation: the loss, each output's loss (named by
    ``keys``) when there are several, then the metrics ``running`` has gathered."""
    logs = {"loss": loss}
    if len(keys) > 1:
        logs.update({f"{k}_loss": v for k, v in zip(keys, per_output)})
    if running:
        logs.update(running.results())
    return logs


def _as_returned(logs, return_dict):
    """Keras's return value for logs: the dict (its keys sorted, as Keras returns them), or
    the loss alone, or every value in order (loss, each output's loss, metrics)."""
    if return_dict:
        return dict(sorted(logs.items()))
    if len(logs) == 1:
        return logs["loss"]
    return list(logs.values())
