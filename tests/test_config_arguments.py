"""A setting is declared once: every `FineTuningConfig` / `PretrainingConfig` field has
help, an option in its command whose default is the field's, and comes back from the
parsed arguments unchanged."""

import argparse
import dataclasses

import pytest

from kbert.cli import build_parser
from kbert.commands.config_arguments import add_config_arguments
from kbert.commands.config_arguments import config_from_arguments
from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.pretraining.pretraining_config import PretrainingConfig

COMMANDS = {
    "finetune": (
        FineTuningConfig,
        ["--task", "classification", "--model", "m", "--train", "t", "--output", "o"],
    ),
    "pretrain": (PretrainingConfig, ["--data", "d", "--output", "o", "--size", "tiny"]),
}


def _subparser(command):
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return parser, action.choices[command]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_field_has_help_and_an_option_with_its_default(command):
    config_class, _ = COMMANDS[command]
    _, subparser = _subparser(command)
    options = {action.dest: action for action in subparser._actions}
    for field in dataclasses.fields(config_class):
        assert field.metadata.get("help", "").strip(), f"{field.name} has no help"
        assert field.name in options, f"`kbert {command}` has no option for {field.name}"
        action = options[field.name]
        assert action.help and field.metadata["help"].rstrip(".") in action.help
        assert action.default == field.default, field.name
        if "choices" in field.metadata:
            assert tuple(action.choices) == tuple(field.metadata["choices"])
        # The app's tooltips and the docstring read the same help.
        assert f"{field.name}: " in config_class.__doc__


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_options_give_the_class_defaults(command):
    config_class, required = COMMANDS[command]
    parser, _ = _subparser(command)
    args = parser.parse_args([command, *required])
    assert config_from_arguments(config_class, args) == config_class()


def test_flags_that_differ_from_the_field_names():
    parser, _ = _subparser("finetune")
    args = parser.parse_args(
        ["finetune", *COMMANDS["finetune"][1], "--gradient-accumulation", "4", "--clip-norm", "0",
         "--adam-epsilon-style", "torch", "--data-parallel", "--max-length", "64"]
    )
    config = config_from_arguments(FineTuningConfig, args)
    assert config.gradient_accumulation_steps == 4
    assert config.clip_norm is None  # 0 turns clipping off
    assert config.adam_epsilon_style == "torch" and config.data_parallel
    assert config.max_length == 64
    assert config_from_arguments(FineTuningConfig, args, seed=7).seed == 7


def test_bad_values_are_refused_as_before(capsys):
    parser, _ = _subparser("pretrain")
    with pytest.raises(SystemExit):
        parser.parse_args(["pretrain", *COMMANDS["pretrain"][1], "--optimizer", "sgd"])
    assert "invalid choice: 'sgd'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["pretrain", *COMMANDS["pretrain"][1], "--steps", "many"])
    assert "invalid int value: 'many'" in capsys.readouterr().err
    args = parser.parse_args(["pretrain", *COMMANDS["pretrain"][1], "--steps", "0"])
    with pytest.raises(ValueError, match="steps=0"):
        config_from_arguments(PretrainingConfig, args)


def test_an_unknown_field_is_named():
    with pytest.raises(ValueError, match="'epoch'"):
        add_config_arguments(argparse.ArgumentParser(), FineTuningConfig, fields=("epoch",))
