"""Fill-mask latency on a CPU: kbert's `BertMaskedLM.fill_mask` against transformers'
`pipeline("fill-mask")`, with the same weights, on one short sentence.

What a desktop user feels per keystroke. Both models are the same randomly initialised
Hugging Face `BertForMaskedLM` (BERT-base by default, seeded; no download): saved with
`save_pretrained`, converted with `kbert.checkpoints.convert`, loaded by each library.
Their top-1 tokens must agree before anything is timed. The two are then called in
alternation (so that the machine's load affects both alike), after warm-up rounds
that include kbert's one-off compilation.

The figure that counts is `kbert / transformers`, the ratio of the median latencies
(target: at most 0.8 at BERT-base on an idle 2-core machine). `--bfloat16` adds a third
engine, kbert under "mixed_bfloat16", with its largest probability difference from
float32: kbert keeps float32 on a CPU unless bfloat16 is both faster and within 1e-2.

Usage:
    python benchmarks/cpu_fill_mask.py                   # BERT-base, 30 rounds
    python benchmarks/cpu_fill_mask.py --size tiny --rounds 5 --output fill_mask.json
    python benchmarks/cpu_fill_mask.py --bfloat16        # and kbert in bfloat16

kbert runs on JAX unless KERAS_BACKEND says otherwise; transformers on PyTorch.
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from random_preset import made_up_vocabulary  # noqa: E402
from timing import interleaved_timings, summarize  # noqa: E402

from kbert.architecture.bert_config import BERT_SIZES  # noqa: E402

DEFAULT_TEXT = "Elizabeth [MASK] the letter."


def write_huggingface_checkpoint(folder, size, vocabulary_size, seed, head="BertForMaskedLM",
                                 **config_settings):
    """A random transformers `head` (`BertForMaskedLM`) with a made-up vocabulary, as
    `save_pretrained` writes it; `config_settings` go to its `BertConfig` (`num_labels`)."""
    import torch
    import transformers

    os.makedirs(folder, exist_ok=True)
    vocabulary_path = os.path.join(folder, "vocab.txt")
    with open(vocabulary_path, "w", encoding="utf-8") as file:
        file.write("".join(token + "\n" for token in made_up_vocabulary(vocabulary_size)))
    num_layers, hidden_size = BERT_SIZES[size]
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=vocabulary_size,
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=hidden_size // 64,
        intermediate_size=4 * hidden_size,
        **config_settings,
    )
    getattr(transformers, head)(config).eval().save_pretrained(folder)
    transformers.BertTokenizerFast(vocab=vocabulary_path, do_lower_case=True).save_pretrained(
        folder
    )
    return folder


def load_both(checkpoint, preset):
    """`(kbert model, pipeline, load seconds of each)`; `preset` is written from `checkpoint`."""
    import transformers

    from kbert.checkpoints import convert
    from kbert.models import BertMaskedLM

    convert(checkpoint, preset)
    start = time.perf_counter()
    masked_lm = BertMaskedLM.from_preset(preset)
    kbert_load = time.perf_counter() - start
    start = time.perf_counter()
    pipeline = transformers.pipeline("fill-mask", model=checkpoint, device="cpu")
    pipeline_load = time.perf_counter() - start
    return masked_lm, pipeline, {"kbert": kbert_load, "transformers": pipeline_load}


def load_bfloat16(preset):
    """The kbert model of `preset` built under "mixed_bfloat16"."""
    from kbert.models import BertMaskedLM
    from kbert.training.optimization import precision_policy

    with precision_policy("mixed_bfloat16"):
        return BertMaskedLM.from_preset(preset)


def largest_probability_difference(model, reference, text):
    """The largest difference of any vocabulary probability at the text's masks."""
    from kbert.inference.model_io import pad_batch, softmax

    encoding = reference.tokenizer.encode(text)
    inputs = pad_batch(reference.tokenizer, [encoding], (len(encoding),))
    positions = np.flatnonzero(encoding.token_ids == reference.tokenizer.mask_token_id)
    inputs["mask_positions"] = positions[None, :].astype(np.int32)
    found, expected = (
        softmax(np.asarray(m.predict_on_batch(inputs), np.float32)) for m in (model, reference)
    )
    return float(np.abs(found - expected).max())


def cpu_flags():
    """The CPU's bfloat16-relevant feature flags (Linux), e.g. ["avx512_bf16"]."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            flags = next((line for line in file if line.startswith("flags")), "").split()
    except OSError:
        return []
    return sorted({flag for flag in flags if flag in ("avx512_bf16", "amx_bf16", "amx_tile")})


def top_tokens(masked_lm, pipeline, text, top_k=5):
    """The top-k token ids of each library at the text's single mask, best first."""
    candidates = masked_lm.fill_mask(text, top_k=top_k).masks[0].candidates
    kbert_ids = [candidate.token_id for candidate in candidates]
    pipeline_ids = [int(prediction["token"]) for prediction in pipeline(text, top_k=top_k)]
    return kbert_ids, pipeline_ids


def measure(
    size="base",
    vocabulary_size=30522,
    text=DEFAULT_TEXT,
    rounds=30,
    warmup=3,
    seed=0,
    bfloat16=False,
):
    """Builds both models and times them in alternation.

    Returns:
        A dict with the load seconds, both top-5 token lists, and per engine the median,
        p90 and minimum milliseconds per call, plus `ratio` (transformers' median
        over kbert's: above 1 means kbert is faster) and `kbert_over_transformers`
        (its inverse, the acceptance figure). With `bfloat16`, also the engine
        "kbert-bfloat16" and `bfloat16_probability_difference`.

    Raises:
        RuntimeError: when the two tokenizers or the two top-1 tokens differ (the
            conversion or one of the models is wrong; the timings would compare
            different things).
    """
    import keras

    with tempfile.TemporaryDirectory(prefix="kbert-fill-mask-") as scratch:
        checkpoint = write_huggingface_checkpoint(
            os.path.join(scratch, "huggingface"), size, vocabulary_size, seed
        )
        preset = os.path.join(scratch, "kbert")
        masked_lm, pipeline, load_seconds = load_both(checkpoint, preset)
        masked_lm_bf16 = load_bfloat16(preset) if bfloat16 else None
    kbert_input = masked_lm.tokenizer.encode(text).token_ids.tolist()
    pipeline_input = list(pipeline.tokenizer(text)["input_ids"])
    if kbert_input != pipeline_input:
        raise RuntimeError(
            f"The tokenizers disagree: kbert {kbert_input}, transformers {pipeline_input}. "
            f"Received: text={text!r}"
        )
    kbert_ids, pipeline_ids = top_tokens(masked_lm, pipeline, text)
    if kbert_ids[0] != pipeline_ids[0]:
        raise RuntimeError(
            f"The top-1 tokens differ, so the models are not the same: kbert ids {kbert_ids}, "
            f"transformers ids {pipeline_ids}. Received: text={text!r}"
        )
    top5 = {
        name: [masked_lm.tokenizer.id_to_token(token_id) for token_id in ids]
        for name, ids in (("kbert", kbert_ids), ("transformers", pipeline_ids))
    }
    engines = {"kbert": lambda: masked_lm.fill_mask(text), "transformers": lambda: pipeline(text)}
    if masked_lm_bf16 is not None:
        engines["kbert-bfloat16"] = lambda: masked_lm_bf16.fill_mask(text)
    seconds = interleaved_timings(engines, rounds=rounds, warmup=warmup)
    milliseconds = {}
    for name, values in seconds.items():
        summary = summarize(values)
        milliseconds[name] = {
            key: value if key == "runs" else 1000 * value for key, value in summary.items()
        }
    result = {
        "size": size,
        "vocabulary_size": vocabulary_size,
        "text": text,
        "kbert_backend": keras.config.backend(),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "load_seconds": load_seconds,
        "top5": top5,
        "milliseconds": milliseconds,
        "ratio": milliseconds["transformers"]["median"] / milliseconds["kbert"]["median"],
        "kbert_over_transformers": milliseconds["kbert"]["median"]
        / milliseconds["transformers"]["median"],
        "cpu_flags": cpu_flags(),
    }
    if masked_lm_bf16 is not None:
        result["bfloat16_probability_difference"] = largest_probability_difference(
            masked_lm_bf16, masked_lm, text
        )
    return result


def format_table(result):
    load = result["load_average"]
    load = "n/a" if load is None else " ".join(f"{value:.2f}" for value in load)
    lines = [
        f"fill-mask, BERT-{result['size']} (vocabulary {result['vocabulary_size']}), "
        f"{result['milliseconds']['kbert']['runs']} interleaved rounds, "
        f"{result['cpu_count']} CPUs, load average {load}",
        f"{'':<16}{'median ms':>10}{'p90 ms':>10}{'min ms':>10}{'load s':>10}",
    ]
    for name, figures in result["milliseconds"].items():
        load_seconds = result["load_seconds"].get(name)
        lines.append(
            f"{name:<16}{figures['median']:>10.1f}{figures['p90']:>10.1f}{figures['min']:>10.1f}"
            + ("" if load_seconds is None else f"{load_seconds:>10.2f}")
        )
    lines.append(
        f"kbert / transformers latency (median): {result['kbert_over_transformers']:.2f} "
        f"(target <= 0.80); transformers / kbert: {result['ratio']:.2f}x"
    )
    if "bfloat16_probability_difference" in result:
        lines.append(
            f"bfloat16: largest probability difference from float32 "
            f"{result['bfloat16_probability_difference']:.2g} (CPU flags: "
            f"{', '.join(result['cpu_flags']) or 'none'})"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(BERT_SIZES), default="base", help="(default: base)")
    parser.add_argument(
        "--vocabulary-size", type=int, default=30522, help="tokens (default: 30522)"
    )
    parser.add_argument("--text", default=DEFAULT_TEXT, help=f"(default: {DEFAULT_TEXT!r})")
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds (default: 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds (default: 3)")
    parser.add_argument(
        "--bfloat16", action="store_true", help="also time kbert under mixed_bfloat16"
    )
    parser.add_argument("--output", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    result = measure(
        args.size, args.vocabulary_size, args.text, args.rounds, args.warmup,
        bfloat16=args.bfloat16,
    )
    print(format_table(result))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
