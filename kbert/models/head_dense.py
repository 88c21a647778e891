"""The Dense layer of a task head, built as BERT builds its heads."""

import keras

from kbert.layers.host_truncated_normal import HostTruncatedNormal


def head_dense(backbone, units, name):
    """A Dense layer of `units` outputs for a head on `backbone`: its kernel drawn from a
    truncated normal of the backbone's `initializer_range`, as in BERT, and computing in
    the backbone's dtype policy."""
    return keras.layers.Dense(
        units,
        kernel_initializer=HostTruncatedNormal(stddev=backbone.bert_config.initializer_range),
        dtype=backbone.dtype_policy,
        name=name,
    )
