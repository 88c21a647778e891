"""What length buckets save on a short text: one forward pass padded to its bucket, to
16 (the smallest bucket before the 8-token one), 128 and 512 tokens.

Times `BertMaskedLM.predict_on_batch` (the compiled call `fill_mask` makes) on one
sentence with one mask, the lengths called in alternation (so that the machine's load
affects them alike), after a warm-up that compiles each length once. Without buckets,
a model compiled once for a fixed shape would pad every keystroke's text to that
shape.

Usage:
    python benchmarks/length_bucket_effect.py --model PRESET [--repeats 30]
"""

import argparse
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from timing import interleaved_timings, summarize  # noqa: E402

DEFAULT_TEXT = "Elizabeth [MASK] the letter."
PADDED_LENGTHS = (16, 128, 512)


def measure(model, text=DEFAULT_TEXT, repeats=30):
    """Median and p90 milliseconds per padded length: `{length: {...}}`."""
    import numpy as np

    from kbert.inference.model_io import model_buckets, pad_batch
    from kbert.models import BertMaskedLM

    masked_lm = BertMaskedLM.from_preset(model)
    tokenizer = masked_lm.tokenizer
    encodings = tokenizer.encode_batch([text])
    bucketed = pad_batch(tokenizer, encodings, model_buckets(masked_lm))
    lengths = [bucketed["token_ids"].shape[1]]
    lengths += [length for length in PADDED_LENGTHS if length > lengths[0]]
    lengths = [length for length in lengths if length <= masked_lm.bert_config.max_positions]
    mask_positions = np.argwhere(bucketed["token_ids"][0] == tokenizer.mask_token_id)[:1].T
    calls = {}
    for length in lengths:
        inputs = {
            key: np.pad(value, ((0, 0), (0, length - value.shape[1])))
            for key, value in bucketed.items()
        }
        inputs["mask_positions"] = mask_positions.astype(np.int32)
        calls[length] = lambda inputs=inputs: masked_lm.predict_on_batch(inputs)
    results = {}
    for length, seconds in interleaved_timings(calls, repeats, warmup=2).items():
        summary = summarize(seconds)
        results[length] = {"median_ms": 1000 * summary["median"], "p90_ms": 1000 * summary["p90"]}
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="demo", help="preset folder or name (default: demo)")
    parser.add_argument("--text", default=DEFAULT_TEXT, help=f"(default: {DEFAULT_TEXT!r})")
    parser.add_argument("--repeats", type=int, default=30, help="timed calls (default: 30)")
    args = parser.parse_args(argv)
    results = measure(args.model, args.text, args.repeats)
    bucket = min(results)
    print(f"{'padded to':<12}{'median ms':>10}{'p90 ms':>10}")
    for length, figures in results.items():
        label = f"{length} (bucket)" if length == bucket else str(length)
        print(f"{label:<12}{figures['median_ms']:>10.1f}{figures['p90_ms']:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
