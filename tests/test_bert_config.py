import pytest

from kbert.architecture.bert_config import BERT_SIZES, BertConfig


@pytest.mark.parametrize("size", sorted(BERT_SIZES))
def test_published_sizes(size):
    config = BertConfig.from_size(size, vocabulary_size=1000)
    layers, hidden = BERT_SIZES[size]
    assert (config.num_layers, config.hidden_size) == (layers, hidden)
    assert config.num_heads * 64 == hidden
    assert config.intermediate_size == 4 * hidden
    assert config.vocabulary_size == 1000


def test_published_size_values():
    assert BERT_SIZES == {
        "tiny": (2, 128),
        "mini": (4, 256),
        "small": (4, 512),
        "medium": (8, 512),
        "base": (12, 768),
        "large": (24, 1024),
    }


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("hidden_size", 100, "hidden_size=100, num_heads=12"),
        ("num_layers", 0, "num_layers=0"),
        ("vocabulary_size", -3, "vocabulary_size=-3"),
        ("max_positions", 2.5, "max_positions=2.5"),
        ("hidden_dropout", 1.0, "hidden_dropout=1.0"),
        ("attention_dropout", -0.1, "attention_dropout=-0.1"),
        ("layer_norm_epsilon", 0.0, "layer_norm_epsilon=0.0"),
        ("activation", "swish2", "activation='swish2'"),
        ("num_heads", True, "num_heads=True"),
    ],
)
def test_invalid_values_name_field_and_value(field, value, message):
    with pytest.raises(ValueError, match=f"`{field}`") as error:
        BertConfig(**{field: value})
    assert message in str(error.value)


def test_unknown_size_and_fields():
    with pytest.raises(ValueError, match="size='huge'"):
        BertConfig.from_size("huge")
    with pytest.raises(ValueError, match="hidden_dim"):
        BertConfig.from_dict({"hidden_dim": 3})


def test_dict_round_trip():
    config = BertConfig.from_size("mini", vocabulary_size=321, hidden_dropout=0.2)
    assert BertConfig.from_dict(config.to_dict()) == config
    assert config.head_size == 64
