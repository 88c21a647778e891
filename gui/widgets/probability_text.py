"""A probability as the app writes it, with enough digits to tell two apart."""


def probability_text(probability):
    """The text of `probability` (a float in [0, 1]) wherever the app shows one.

    From 1 % up, a percentage with one decimal ("41.2 %"); from 0.1 % to 1 %, with two
    ("0.54 %"); under 0.1 %, the probability itself in scientific notation with two
    significant digits ("1.5e-09"), so that the tiny probabilities of multi-piece
    words (1.48e-9 against 1.41e-20) do not all read "0.0 %". Exactly 0 is "0".
    """
    probability = float(probability)
    if probability >= 0.01:
        return f"{100 * probability:.1f} %"
    if probability >= 0.001:
        return f"{100 * probability:.2f} %"
    if probability == 0:
        return "0"
    return f"{probability:.1e}"
