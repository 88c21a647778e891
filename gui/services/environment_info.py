"""The versions, backend and device the app runs on, for the status bar and About."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class EnvironmentInfo:
    """What kbert runs on.

    Attributes:
        kbert_version: e.g. "0.1.0".
        keras_version: e.g. "3.15.1".
        backend: Keras' backend, e.g. "jax".
        device: the backend and device in words (`kbert.platform_support.describe_device`),
            e.g. "JAX on CPU".
        local_devices: how many devices data-parallel training would use
            (`kbert.training.distribution.local_device_count`).
    """

    kbert_version: str
    keras_version: str
    backend: str
    device: str
    local_devices: int = 1

    @classmethod
    def read(cls):
        """Imports Keras and asks it; call in a worker (the import takes seconds)."""
        import keras

        import kbert
        from kbert.platform_support import describe_device
        from kbert.training.distribution import local_device_count

        return cls(
            kbert_version=kbert.__version__,
            keras_version=keras.version(),
            backend=keras.config.backend(),
            device=describe_device(),
            local_devices=local_device_count(),
        )
