"""Small checkpoints in other formats, written by the reference libraries themselves."""

import json

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"word{i}" for i in range(27)]


def write_huggingface_folder(folder, architecture="BertForPreTraining", seed=0, **config):
    """A random transformers BERT saved with `save_pretrained`, plus an uncased vocab.txt.

    Stands in for a downloaded Hugging Face repository (1 layer, 16 wide by default).
    """
    import torch
    import transformers

    torch.manual_seed(seed)
    settings = dict(
        vocab_size=len(VOCABULARY),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=20,
        max_position_embeddings=16,
    )
    settings.update(config)
    getattr(transformers, architecture)(transformers.BertConfig(**settings)).save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    return folder
