"""What a training step costs the host: `train_on_batch` against Keras' `fit` loop.

`train_on_batch` gathers every variable (weights, optimiser moments, metrics) into
the compiled call and assigns them back after it, and returns NumPy values, so each
step also waits for the device; `fit` carries the same state from step to step on the
device. The model has BERT-base's variables (12 layers: 500 arrays with AdamW's
moments) at a width (32) where the arithmetic is negligible, so the difference per
step is the host's work. The two are timed in alternation, `--rounds` rounds of
`--steps` steps each.

Usage:
    python benchmarks/host_overhead.py [--rounds 7] [--steps 20]
"""

import argparse
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from timing import interleaved_timings, summarize  # noqa: E402


def measure(rounds=7, steps=20, num_layers=12):
    """Median milliseconds per step of each way, and the number of state arrays."""
    import keras
    import numpy as np

    from kbert.models import BertBackbone, BertClassifier, BertConfig
    from kbert.training.optimization import create_optimizer

    config = BertConfig(
        vocabulary_size=512, hidden_size=32, num_layers=num_layers, num_heads=4,
        intermediate_size=64, max_positions=64,
    )
    model = BertClassifier(BertBackbone.from_config_object(config), num_classes=2)
    model.compile(optimizer=create_optimizer(total_steps=10_000), metrics=[])
    rng = np.random.default_rng(0)
    x = {
        "token_ids": rng.integers(5, 512, (8, 16)).astype("int32"),
        "segment_ids": np.zeros((8, 16), "int32"),
        "padding_mask": np.ones((8, 16), "int32"),
    }
    y = rng.integers(0, 2, 8).astype("int32")

    class RepeatedBatch(keras.utils.PyDataset):
        def __len__(self):
            return steps

        def __getitem__(self, index):
            return x, y

    def on_batch():
        for _ in range(steps):
            model.train_on_batch(x, y)

    def fit():
        model.fit(RepeatedBatch(), epochs=1, verbose=0)

    seconds = interleaved_timings({"train_on_batch": on_batch, "fit": fit}, rounds, warmup=1)
    state = (
        len(model.trainable_variables) + len(model.non_trainable_variables)
        + len(model.optimizer.variables) + len(model.metrics_variables)
    )
    return {
        "state_arrays": state,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "ms_per_step": {
            name: 1000 * summarize(values)["median"] / steps for name, values in seconds.items()
        },
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default: 7)")
    parser.add_argument("--steps", type=int, default=20, help="steps a round (default: 20)")
    args = parser.parse_args(argv)
    result = measure(args.rounds, args.steps)
    for name, value in result["ms_per_step"].items():
        print(f"{name:<16}{value:>8.2f} ms/step")
    print(f"{result['state_arrays']} state arrays; load average {result['load_average']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
