"""One harness that every registered kbert class goes through (keras-hub's idea, our code).

`run_layer_test` takes a layer or a model class and checks, in turn:

1. the config: it holds every constructor argument under its own name, and
   `keras.saving.serialize_keras_object` through `json.dumps` and back
   (`deserialize_keras_object` finds the class by its registered name), and
   `cls.from_config` on the JSON-loaded `get_config()`, give the same class and config;
2. symbolic vs eager: called on `keras.Input`s, the outputs have the structure, the
   shapes (batch left open) and the dtypes of the eager call's;
3. one `fit` step of a model around the layer (the model itself for a model) gives a
   finite loss and changes every trainable weight it should;
4. that model, saved as `.keras` and loaded by `keras.saving.load_model`, gives the
   same outputs;
5. every dtype policy builds, runs and gives finite outputs of the expected dtypes and
   float variables of the policy's variable dtype.

`run_object_test` takes a registered non-layer (optimizer, schedule, loss, metric,
initializer): its serialisation through JSON gives the same class, the same config,
and the same behaviour on a small input.

Imported by name (`from layer_harness import run_layer_test`), as tests/'s other
helper modules are.
"""

import json
import warnings

import keras
import numpy as np

POLICIES = ("float32", "bfloat16", "mixed_bfloat16")


def _as_json(value):
    """`value` as it comes back from a JSON file (tuples become lists, and so on)."""
    return json.loads(json.dumps(value))


def _numpy(structure):
    return keras.tree.map_structure(keras.ops.convert_to_numpy, structure)


def _dtype(tensor):
    return keras.backend.standardize_dtype(tensor.dtype)


def _is_float(dtype):
    return "float" in keras.backend.standardize_dtype(dtype)


def _arguments(init_kwargs, dtype):
    """The constructor arguments for `dtype`: `init_kwargs(dtype)` when it is a function
    (for arguments that must share the policy, such as a task's backbone), else the
    dict with `dtype` added."""
    if callable(init_kwargs):
        return init_kwargs(dtype)
    return {**init_kwargs, "dtype": dtype}


def _call(layer, inputs):
    """A model takes its input dict whole; a layer takes the dict as keyword arguments."""
    if isinstance(layer, keras.Model):
        return layer(inputs)
    return layer(**inputs)


def _symbolic_inputs(input_data):
    return {
        name: keras.Input(shape=value.shape[1:], dtype=str(value.dtype), name=name)
        for name, value in input_data.items()
    }


def _as_config_value(value):
    """A constructor argument as `get_config` should return it (objects serialised)."""
    try:
        return _as_json(value)
    except TypeError:
        return _as_json(keras.saving.serialize_keras_object(value))


def check_config_round_trip(layer, arguments=None):
    """Through JSON and back by the registered name and by `from_config`: one config,
    which holds each of the constructor's `arguments` (but the dtype) under its name."""
    config = _as_json(layer.get_config())
    serialized = json.dumps(keras.saving.serialize_keras_object(layer))
    clones = [
        keras.saving.deserialize_keras_object(json.loads(serialized)),
        type(layer).from_config(_as_json(layer.get_config())),
    ]
    for clone in clones:
        assert type(clone) is type(layer), (type(clone), type(layer))
        assert _as_json(clone.get_config()) == config
    for name, value in (arguments or {}).items():
        if name != "dtype":
            assert config.get(name) == _as_config_value(value), (name, config.get(name))


def check_symbolic_matches_eager(layer, input_data, eager_outputs=None):
    """Called on `keras.Input`s, `layer` states the outputs the eager call gives."""
    if eager_outputs is None:
        eager_outputs = _call(layer, input_data)
    symbolic_outputs = _call(layer, _symbolic_inputs(input_data))
    keras.tree.assert_same_structure(symbolic_outputs, eager_outputs)
    for symbolic, eager in zip(
        keras.tree.flatten(symbolic_outputs), keras.tree.flatten(eager_outputs)
    ):
        assert isinstance(symbolic, keras.KerasTensor), symbolic
        shape = tuple(eager.shape)
        assert symbolic.shape[0] in (None, shape[0]), (symbolic.shape, shape)
        assert tuple(symbolic.shape[1:]) == shape[1:], (symbolic.shape, shape)
        assert symbolic.dtype == _dtype(eager), (symbolic.dtype, _dtype(eager))


def _model_around(layer, input_data):
    """`layer` itself when it is a model, else a functional model of its float outputs
    (integer outputs take no loss)."""
    if isinstance(layer, keras.Model):
        return layer
    inputs = _symbolic_inputs(input_data)
    outputs = [
        output for output in keras.tree.flatten(_call(layer, inputs)) if _is_float(output.dtype)
    ]
    assert outputs, f"{type(layer).__name__} has no float output to fit"
    return keras.Model(inputs, outputs)


def check_fit_step(model, input_data, fit_targets=None, compile_kwargs=None, untrained=()):
    """One step of `fit`: a finite loss, and every trainable weight moves, except
    perhaps those whose path contains one of `untrained` (weights no loss reaches)."""
    if fit_targets is None:  # zeros for the mean squared error of every float output
        fit_targets = keras.tree.map_structure(np.zeros_like, _numpy(model(input_data)))
        compile_kwargs = {"loss": "mse", **(compile_kwargs or {})}
    before = {variable.path: _numpy(variable) for variable in model.trainable_variables}
    # Adam without weight decay: a weight moves only if its gradient reaches it.
    model.compile(optimizer=keras.optimizers.Adam(1e-2), **(compile_kwargs or {}))
    batch_size = len(next(iter(input_data.values())))
    with warnings.catch_warnings():
        # A layer without weights (DynamicMasking) still has to run in the train step.
        warnings.filterwarnings("ignore", message="The model does not have any trainable")
        history = model.fit(input_data, fit_targets, batch_size=batch_size, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all(), history.history
    after = {variable.path: _numpy(variable) for variable in model.trainable_variables}
    unchanged = [
        path
        for path in before
        if np.array_equal(before[path], after[path])
        and not any(fragment in path for fragment in untrained)
    ]
    assert not unchanged, f"no gradient reached {unchanged}"


def check_save_and_load(model, input_data, folder, atol=1e-6):
    """A `.keras` file of `model` loads back (safe mode) to the same outputs.

    The outputs are taken after saving, once from each model: a layer with random
    state (a seed generator) then draws from the same saved state in both.
    """
    path = folder / f"{model.name}.keras"
    model.save(path)
    expected = _numpy(model(input_data))
    restored = keras.saving.load_model(path, safe_mode=True)
    assert type(restored) is type(model)
    actual = _numpy(restored(input_data))
    keras.tree.assert_same_structure(actual, expected)
    for value, reference in zip(keras.tree.flatten(actual), keras.tree.flatten(expected)):
        np.testing.assert_allclose(value, reference, atol=atol)


def check_dtype_policy(layer, input_data, policy, float_output_dtype=None, float32_layers=()):
    """Runs `layer` built in `policy`: finite outputs, each float one of
    `float_output_dtype` (default: the policy's compute dtype), as the symbolic call
    says, and float variables of the policy's variable dtype, except those of the
    sublayers named in `float32_layers`, which stay float32 by design."""
    policy = keras.dtype_policies.get(policy)
    outputs = _call(layer, input_data)
    check_symbolic_matches_eager(layer, input_data, outputs)
    for output in keras.tree.flatten(outputs):
        if _is_float(output.dtype):
            assert _dtype(output) == (float_output_dtype or policy.compute_dtype), (
                policy.name, _dtype(output))
            values = _numpy(keras.ops.cast(output, "float32"))
            assert np.isfinite(values).all(), policy.name
    float_variables = [variable for variable in layer.variables if _is_float(variable.dtype)]
    for variable in float_variables:
        path_parts = variable.path.split("/")
        expected = "float32" if set(path_parts) & set(float32_layers) else policy.variable_dtype
        assert _dtype(variable) == expected, (policy.name, variable.path, _dtype(variable))


def run_layer_test(
    layer_class,
    init_kwargs,
    input_data,
    folder,
    fit_targets=None,
    compile_kwargs=None,
    untrained=(),
    float_output_dtype=None,
    float32_layers=(),
    policies=POLICIES,
    atol=1e-6,
):
    """Every check of this module on `layer_class`.

    Args:
        layer_class: a registered `keras.layers.Layer` or `keras.Model` subclass.
        init_kwargs: its constructor arguments: a dict (the harness adds `dtype`), or
            a function of the dtype policy name that returns them.
        input_data: dict of NumPy arrays, batch first: a model's input dict, or a
            layer's call arguments by name.
        folder: a `pathlib.Path` for the `.keras` file.
        fit_targets: the targets of a model's `fit` (its compiled loss); None: zeros
            for the mean squared error of the float outputs.
        compile_kwargs: more `compile` arguments for the fit step.
        untrained: path fragments of trainable weights that no loss reaches, which
            the fit step need not move.
        float_output_dtype: the dtype of every float output whatever the policy (a
            head that returns float32 logits); None for the policy's compute dtype.
        float32_layers: names of sublayers kept float32 under every policy.
        policies: the dtype policies to run.
        atol: tolerance of the saved model's outputs against the original's.
    """
    arguments = _arguments(init_kwargs, "float32")
    layer = layer_class(**arguments)
    eager_outputs = _call(layer, input_data)
    check_config_round_trip(layer, arguments)
    check_symbolic_matches_eager(layer, input_data, eager_outputs)
    model = _model_around(layer, input_data)
    check_fit_step(model, input_data, fit_targets, compile_kwargs, untrained)
    check_save_and_load(model, input_data, folder, atol)
    for policy in policies:
        check_dtype_policy(
            layer_class(**_arguments(init_kwargs, policy)),
            input_data,
            policy,
            float_output_dtype,
            float32_layers,
        )


def run_object_test(obj, behaviour):
    """A registered non-layer through JSON: the same class, config and behaviour.

    Args:
        obj: the object, made with non-default arguments where it has any.
        behaviour: a function of such an object that returns NumPy arrays (or a
            structure of them) from a small computation; the clone must give the same.
    """
    serialized = json.dumps(keras.saving.serialize_keras_object(obj))
    clone = keras.saving.deserialize_keras_object(json.loads(serialized))
    assert type(clone) is type(obj), (type(clone), type(obj))
    assert _as_json(clone.get_config()) == _as_json(obj.get_config())
    expected, actual = behaviour(obj), behaviour(clone)
    keras.tree.assert_same_structure(actual, expected)
    for value, reference in zip(keras.tree.flatten(actual), keras.tree.flatten(expected)):
        np.testing.assert_allclose(value, reference, rtol=1e-6)
