"""Where Adam adds epsilon, as names (no Keras import: the CLI's parser reads them).

- "keras": to sqrt(v) before the bias correction (every Keras and TensorFlow Adam:
  Kingma and Ba's "epsilon hat").
- "torch": to the bias-corrected sqrt(v_hat), as `torch.optim.AdamW` and transformers'
  Trainer do.

The two differ by a factor sqrt(1 - beta_2^t) on epsilon, most in the first steps.
(The original BERT's AdamWeightDecayOptimizer corrects no bias at all.)
"""

EPSILON_STYLES = ("keras", "torch")
