"""Queries a kbert masked-LM preset and checks it against the original transformers model.

Usage: python scripts/query_preset.py KBERT_PRESET HUGGINGFACE_FOLDER "text with [MASK]"
"""

import sys

import keras
import numpy as np
import torch
import transformers

from kbert.models import BertMaskedLM


def main(preset, huggingface_folder, text):
    model = BertMaskedLM.from_preset(preset)
    tokenizer = model.tokenizer
    batch = tokenizer([text])
    mask_positions = np.argwhere(batch["token_ids"][0] == tokenizer.mask_token_id)[:, 0]
    if len(mask_positions) == 0:
        raise SystemExit(f"The text has no [MASK] token: {text!r}")
    inputs = dict(batch, mask_positions=mask_positions[None].astype("int32"))
    logits = model.predict(inputs, verbose=0)[0]  # (P, V)

    print(f"kbert on {keras.config.backend()}: {text}")
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    for index, position in enumerate(mask_positions):
        best = np.argsort(-probabilities[index])[:5]
        ranked = ", ".join(
            f"{tokenizer.id_to_token(int(i))} {probabilities[index, i]:.3f}" for i in best
        )
        print(f"  [MASK] at token {position}: {ranked}")

    reference = transformers.BertForMaskedLM.from_pretrained(huggingface_folder).eval()
    with torch.no_grad():
        expected = reference(
            input_ids=torch.tensor(batch["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(batch["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(batch["padding_mask"], dtype=torch.long),
        ).logits[0, mask_positions].numpy()
    difference = float(np.abs(expected - logits).max())
    print(f"max |kbert - transformers| over the masked-LM logits: {difference:.2e}")
    if difference > 1e-4:
        raise SystemExit("kbert and transformers disagree")
    print("(the weights are random: the predictions show the pipeline, not knowledge)")


if __name__ == "__main__":
    main(*sys.argv[1:4])
