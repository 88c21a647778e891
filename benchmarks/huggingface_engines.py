"""The Hugging Face transformers engines of `gpu_benchmark.py`, the reference.

PyTorch BERT as a careful PyTorch user runs it: `attn_implementation="sdpa"` (fused
attention), bf16 autocast over float32 weights, fused AdamW on CUDA with BERT's
weight-decay groups, gradient clipping at 1.0, eager or under `torch.compile`. Each
step moves the batch from the host; a timed window of `window` steps ends by fetching
the last loss (or logits), so that it includes the wait for the GPU but, like kbert's
`fit`, no host sync between the steps of a window.

Pretraining uses `BertForPreTraining`, which scores the vocabulary at every position
(the masked-LM labels are -100 outside the masked positions): that is the reference's
behaviour, and the work kbert avoids by scoring the masked positions only.
"""

import numpy as np
import torch
import transformers
from benchmark_data import NUM_CLASSES
from device_facts import device_description, peak_memory_reader
from attention_report import torch_attention
from timing import time_repeatedly

IGNORED_LABEL = -100


def _config(settings):
    return transformers.BertConfig(
        vocab_size=settings["vocabulary_size"],
        hidden_size=settings["hidden_size"],
        num_hidden_layers=settings["num_layers"],
        num_attention_heads=settings["num_heads"],
        intermediate_size=settings["intermediate_size"],
        max_position_embeddings=512,
        num_labels=NUM_CLASSES,
        attn_implementation="sdpa",
    )


def _optimizer(model, fused):
    # BERT's groups: no weight decay on biases and LayerNorm parameters.
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        (no_decay if name.endswith("bias") or "LayerNorm" in name else decay).append(parameter)
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=5e-5,
        eps=1e-6,
        fused=fused,
    )


def _host_inputs(workload, batch):
    inputs = {
        "input_ids": batch["token_ids"].astype(np.int64),
        "token_type_ids": batch["segment_ids"].astype(np.int64),
        "attention_mask": batch["padding_mask"].astype(np.int64),
    }
    if workload == "finetune":
        inputs["labels"] = batch["labels"].astype(np.int64)
    if workload == "pretraining":
        labels = np.full(batch["token_ids"].shape, IGNORED_LABEL, dtype=np.int64)
        np.put_along_axis(labels, batch["mask_positions"], batch["mask_ids"], axis=1)
        inputs["labels"] = labels
        inputs["next_sentence_label"] = batch["next_sentence_labels"].astype(np.int64)
    return inputs


def run(engine, workload, settings, batch):
    """Builds the model of `engine` ("hf-eager" or "hf-compile"), times `workload`."""
    on_gpu = torch.cuda.is_available()
    device = torch.device("cuda" if on_gpu else "cpu")
    torch.manual_seed(settings["seed"])
    config = _config(settings)
    if workload == "pretraining":
        model = transformers.BertForPreTraining(config)
    else:
        model = transformers.BertForSequenceClassification(config)
    model.to(device)
    training = workload in ("finetune", "pretraining")
    model.train(training)
    runnable = torch.compile(model) if engine == "hf-compile" else model
    host_inputs = _host_inputs(workload, batch)
    # bf16 autocast on the GPU; float32 on a CPU (the smoke run), as for the Keras engines.
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=on_gpu)

    def to_device():
        return {
            key: torch.from_numpy(value).to(device, non_blocking=True)
            for key, value in host_inputs.items()
        }

    if training:
        optimizer = _optimizer(model, fused=on_gpu)

        def step():
            optimizer.zero_grad(set_to_none=True)
            with autocast:
                loss = runnable(**to_device()).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            return loss

        def fetch(loss):
            return float(loss)

    else:

        def step():
            with torch.inference_mode(), autocast:
                return runnable(**to_device()).logits

        def fetch(logits):
            return logits.float().cpu().numpy()

    window = settings["window"]

    def steps():
        for _ in range(window - 1):
            step()
        return fetch(step())

    read_peak_memory = peak_memory_reader("torch")
    seconds = time_repeatedly(steps, settings["repeats"], settings["warmup"])
    return {
        "seconds": [value / window for value in seconds],
        "attention": torch_attention(lambda: fetch(step())),
        "step": f"eager loop ({window} steps a window)",
        "precision": "bf16 autocast" if on_gpu else "float32",
        "compiled": "torch.compile" if engine == "hf-compile" else "eager",
        "peak_memory_bytes": read_peak_memory(),
        "device": device_description("torch"),
        "compilations_during_timing": None,
    }
