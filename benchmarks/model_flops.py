"""Model FLOPs of BERT's workloads: the arithmetic the task needs, whatever an engine does.

Counted as multiply-adds x 2 of the matrix products; embeddings lookups, LayerNorm,
softmax and the optimiser update are left out (a few percent at BERT-base sizes).
For a batch of B sequences of L tokens, with N = num_layers * (4 H^2 + 2 H I) the
weights of the encoder's matrix products (query/key/value/output projections and the
two feed-forward layers; H = hidden size, I = intermediate size):

    forward   = 2 N B L  +  4 num_layers H L^2 B  +  2 head B
    training  = 3 x forward = 6 N B L + 12 num_layers H L^2 B + 6 head B

The L^2 term is attention (Q K^T and the weighted sum of V, 2 H L^2 each per layer
and sequence). `head` is the weights of the head's products per sequence: the pooler
(H^2) and the classifier (H C) or next-sentence layer (2 H); for pretraining also the
masked-LM transform and tied output layer (H^2 + H V) at each of the P masked
positions. An engine that scores every position (Hugging Face's BertForPreTraining)
does (L / P) times the head's work for the same result; that extra work is not
counted, so it shows as lower utilisation.
"""

WORKLOADS = ("finetune", "inference", "pretraining", "inference_long")
TRAINING_WORKLOADS = ("finetune", "pretraining")


def encoder_matmul_parameters(num_layers, hidden_size, intermediate_size):
    """N: weights of the encoder's matrix products (biases and LayerNorm left out)."""
    return num_layers * (4 * hidden_size * hidden_size + 2 * hidden_size * intermediate_size)


def head_matmul_parameters(workload, hidden_size, vocabulary_size, masked_positions, num_classes):
    """Weights of the head's matrix products used per sequence."""
    pooler = hidden_size * hidden_size
    if workload == "pretraining":
        masked_lm = masked_positions * (hidden_size * hidden_size + hidden_size * vocabulary_size)
        return pooler + 2 * hidden_size + masked_lm
    return pooler + hidden_size * num_classes


def model_flops(
    workload,
    num_layers,
    hidden_size,
    intermediate_size,
    vocabulary_size,
    batch_size,
    seq_length,
    masked_positions=20,
    num_classes=2,
):
    """Model FLOPs of one step of `workload` (see the module docstring for the formula).

    Args:
        workload: one of `WORKLOADS`: "finetune" (classifier training step),
            "inference" and "inference_long" (classifier forward pass),
            "pretraining" (masked-LM + next-sentence training step).
        num_layers, hidden_size, intermediate_size, vocabulary_size: the model's sizes.
        batch_size, seq_length: the batch's shape.
        masked_positions: masked-LM predictions per sequence (pretraining only).
        num_classes: classifier outputs (other workloads).

    Returns:
        A float.

    Example:

    >>> model_flops("inference", 12, 768, 3072, 30522, batch_size=1, seq_length=128)
    22348434432.0
    """
    if workload not in WORKLOADS:
        raise ValueError(f"`workload` must be one of {WORKLOADS}. Received: workload={workload!r}")
    sizes = dict(
        num_layers=num_layers,
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        vocabulary_size=vocabulary_size,
        batch_size=batch_size,
        seq_length=seq_length,
        num_classes=num_classes,
    )
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    encoder = encoder_matmul_parameters(num_layers, hidden_size, intermediate_size)
    head = head_matmul_parameters(
        workload, hidden_size, vocabulary_size, masked_positions, num_classes
    )
    forward = (
        2 * encoder * batch_size * seq_length
        + 4 * num_layers * hidden_size * seq_length**2 * batch_size
        + 2 * head * batch_size
    )
    return float(3 * forward if workload in TRAINING_WORKLOADS else forward)


def matmul_flops(size):
    """FLOPs of a (size x size) @ (size x size) matrix product."""
    return 2.0 * size**3
