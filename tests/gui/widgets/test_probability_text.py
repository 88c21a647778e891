"""Probabilities as the app writes them: enough digits to tell any two apart."""

from kbert_gui.widgets.probability_text import probability_text


def test_probabilities_keep_their_digits_down_to_scientific_notation():
    assert probability_text(1.0) == "100.0 %"
    assert probability_text(0.412) == "41.2 %"
    assert probability_text(0.01) == "1.0 %"
    assert probability_text(0.0054) == "0.54 %"
    assert probability_text(0.001) == "0.10 %"
    # Under 0.1 %: the probability itself, scientific, two significant digits.
    assert probability_text(0.00054) == "5.4e-04"
    # Two multi-piece words of "Score these words" that used to both read "0.0 %".
    assert probability_text(1.48e-9) == "1.5e-09"
    assert probability_text(1.41e-20) == "1.4e-20"
    assert probability_text(0.0) == "0"


def test_distinct_probabilities_read_differently_at_every_scale():
    values = [10.0**-exponent * mantissa for exponent in range(1, 25) for mantissa in (1.2, 3.4, 7.8)]
    texts = [probability_text(value) for value in values]
    assert len(set(texts)) == len(values)
    assert not any(text in ("0.0 %", "0.00 %") for text in texts)
