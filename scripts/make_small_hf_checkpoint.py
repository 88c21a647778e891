"""Writes a small, randomly initialised Hugging Face `BertForMaskedLM` folder.

It stands in for a downloaded checkpoint (this machine has no hub access): the folder has
the same files a real one has (`config.json`, `model.safetensors`, `vocab.txt`).
Usage: python scripts/make_small_hf_checkpoint.py OUTPUT_FOLDER
"""

import pathlib
import string
import sys

import torch
import transformers

WORDS = (
    "the of and to in is was for on that with as by at from his her it an were which are "
    "this be has had one their not but or have they who first also its new after more "
    "capital city france paris london england country river king queen sat mat cat dog "
    "house garden book letter morning evening"
).split()


def main(folder):
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    characters = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocabulary = specials + characters + [f"##{c}" for c in string.ascii_lowercase] + WORDS
    (folder / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")

    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(vocabulary),
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=512,
        max_position_embeddings=128,
    )
    model = transformers.BertForMaskedLM(config).eval()
    model.save_pretrained(folder)
    tokenizer = transformers.BertTokenizerFast(vocab=str(folder / "vocab.txt"), do_lower_case=True)
    tokenizer.save_pretrained(folder)
    print(f"wrote a {sum(p.numel() for p in model.parameters()):,}-parameter BertForMaskedLM to {folder}")


if __name__ == "__main__":
    main(sys.argv[1])
