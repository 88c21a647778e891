"""The same weights give the same outputs on JAX, TensorFlow and PyTorch."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from process_helpers import on_the_process_pass
from model_helpers import TINY, make_inputs

from kbert.models import BertBackbone, BertPretrainer

BACKENDS = ("jax", "tensorflow", "torch")


@pytest.mark.slow
@on_the_process_pass("spawns one process per backend")
def test_outputs_agree_across_backends(tmp_path):
    model = BertPretrainer(BertBackbone(**TINY))
    # Non-trivial LayerNorm parameters and biases, so that every weight matters.
    rng = np.random.default_rng(0)
    for variable in model.weights:
        variable.assign(rng.normal(0, 0.2, variable.shape).astype("float32"))
    model.save_to_preset(tmp_path / "preset")
    inputs = make_inputs(batch_size=3, sequence_length=12, num_masks=3)
    np.savez(tmp_path / "inputs.npz", **inputs)

    worker = Path(__file__).with_name("cross_backend_worker.py")
    results = {}
    for backend in BACKENDS:
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
        output = tmp_path / f"{backend}.npz"
        completed = subprocess.run(
            [sys.executable, str(worker), str(tmp_path / "preset"), str(tmp_path / "inputs.npz"),
             str(output)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert completed.returncode == 0, completed.stderr[-3000:]
        results[backend] = dict(np.load(output))

    real = inputs["padding_mask"].astype(bool)
    for name in ("sequence_output", "mlm_logits", "nsp_logits"):
        for other in BACKENDS[1:]:
            a, b = results["jax"][name], results[other][name]
            if name == "sequence_output":
                a, b = a[real], b[real]
            difference = np.abs(a - b).max()
            assert difference < 1e-5, f"{name}: jax vs {other} differ by {difference}"
