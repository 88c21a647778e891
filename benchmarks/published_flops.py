"""Model-FLOPs utilisation of a fine-tuning run on published data.

The useful work of a run is the training FLOPs of its examples at their own token
lengths (`model_flops.model_flops("finetune", ...)` per example and epoch): padding,
whatever an engine pads to, is not useful work, so an engine that pads less shows a
higher utilisation for the same wall time. The utilisation is that work over the
training wall time (loading, conversion and compilation included, as the table's time)
times the CPU's matrix-multiply rate for the engine's framework, measured in the same
run (`peak_matmul.run`: JAX for kbert, PyTorch for Trainer).
"""

import json

from model_flops import model_flops
from peak_matmul import run as time_matmul

# Each engine's framework, whose matrix product is its peak.
FRAMEWORKS = {"kbert": "jax", "trainer": "torch"}
PEAK_SETTINGS = {"seed": 0, "repeats": 30, "warmup": 5}


def model_sizes(model_folder):
    """(layers, hidden, intermediate, vocabulary) of a Hugging Face BERT folder."""
    config = json.loads((model_folder / "config.json").read_text(encoding="utf-8"))
    return (
        config["num_hidden_layers"],
        config["hidden_size"],
        config["intermediate_size"],
        config["vocab_size"],
    )


def token_lengths(model_folder, texts, max_length):
    """Each text's packed length in tokens (`[CLS] ... [SEP]`, cut at `max_length`)."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model_folder))
    encoded = tokenizer(list(texts), truncation=True, max_length=max_length)
    return [len(ids) for ids in encoded["input_ids"]]


def useful_flops(sizes, lengths, epochs, num_classes):
    """Training FLOPs of `lengths` (one per example) for `epochs`, without padding."""
    layers, hidden, intermediate, vocabulary = sizes
    per_epoch = sum(
        model_flops(
            "finetune", layers, hidden, intermediate, vocabulary,
            batch_size=1, seq_length=length, num_classes=num_classes,
        )
        for length in lengths
    )
    return epochs * per_epoch


def peak_flops_per_second(earlier=None):
    """Each framework's measured float32 matrix-multiply rate on this CPU, FLOP/s: the
    fastest call now, or the `earlier` rate where that was higher (a rate measured while
    something else ran is too low, so a run measures before and after its engines)."""
    rates = dict(earlier or {})
    for framework in sorted(set(FRAMEWORKS.values())):
        timing = time_matmul(framework, PEAK_SETTINGS)
        rate = timing["flops"] / min(timing["seconds"])
        rates[framework] = max(rate, rates.get(framework, 0.0))
    return rates


def utilisation(engine, flops, train_seconds, rates, frameworks=None):
    """`flops` over `train_seconds` at `engine`'s framework's peak, as a fraction (None
    where that framework's rate was not measured); `frameworks` overrides FRAMEWORKS
    (kbert's is the Keras backend it ran on)."""
    rate = rates.get({**FRAMEWORKS, **(frameworks or {})}[engine])
    return None if rate is None else flops / (train_seconds * rate)


def classification_flops(train_csv, model_folder, recipe):
    """The useful training FLOPs of a classification run on `train_csv` (text,label rows)."""
    import csv

    with open(train_csv, newline="", encoding="utf-8") as file:
        rows = [(row["text"], row["label"]) for row in csv.DictReader(file)]
    lengths = token_lengths(model_folder, [text for text, _ in rows], recipe["max_length"])
    classes = len({label for _, label in rows})
    return useful_flops(model_sizes(model_folder), lengths, recipe["epochs"], classes)


def add_utilisation(results, rates, frameworks=None):
    """Adds "mfu" to each run of `results` (task -> engine -> result) with "useful_flops"."""
    for engines in results.values():
        for engine, result in engines.items():
            if "useful_flops" in result:
                result["mfu"] = utilisation(
                    engine, result["useful_flops"], result["train_seconds"], rates, frameworks
                )
