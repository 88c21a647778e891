"""keras-hub's serialised objects: what `keras.saving.serialize_keras_object` writes.

Read by class name only (never deserialised), written as keras-hub writes them, for
`keras_hub_config` and `keras_hub_tokenizer`.
"""

_PACKAGES = ("keras_hub", "keras_nlp")


def is_keras_hub_object(config):
    """Whether `config` is a Keras-serialised keras-hub (or keras-nlp) object."""
    name = config.get("registered_name") if isinstance(config, dict) else None
    return isinstance(name, str) and name.split(">")[0] in _PACKAGES


def is_keras_hub_class(config, class_name):
    """Whether `config` is keras-hub's (or keras-nlp's) serialised `class_name`."""
    return isinstance(config, dict) and config.get("registered_name") in {
        f"{package}>{class_name}" for package in _PACKAGES
    }


def serialized(module, class_name, config):
    """A Keras-serialised keras-hub object, as `keras.saving.serialize_keras_object` writes it."""
    return {
        "module": f"keras_hub.src.models.bert.{module}",
        "class_name": class_name,
        "config": config,
        "registered_name": f"keras_hub>{class_name}",
    }


def dtype_policy(name):
    """A serialised plain `keras.DTypePolicy` of the dtype `name`."""
    return {
        "module": "keras",
        "class_name": "DTypePolicy",
        "config": {"name": name},
        "registered_name": None,
    }
