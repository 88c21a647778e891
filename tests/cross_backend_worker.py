"""Run by test_cross_backend.py in a fresh process per backend: load a preset, save outputs."""

import sys

import numpy as np

from kbert.models import BertPretrainer


def main(preset, inputs_path, output_path):
    inputs = dict(np.load(inputs_path))
    model = BertPretrainer.from_preset(preset)
    outputs = model.predict(inputs, verbose=0)
    sequence = model.backbone.predict(
        {key: inputs[key] for key in ("token_ids", "segment_ids", "padding_mask")}, verbose=0
    )
    np.savez(output_path, sequence_output=sequence["sequence_output"], **outputs)


if __name__ == "__main__":
    main(*sys.argv[1:4])
