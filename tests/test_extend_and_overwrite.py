"""`--resume` with more epochs (fine-tuning) or steps (pretraining) extends a run,
finished or not; `--overwrite` starts afresh in a folder that holds a run. Any other
change is still refused (tests/test_finetune_resume.py, tests/test_pretrain_loop.py)."""

import dataclasses

import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from pretraining_helpers import make_shards
from pretraining_helpers import tiny_config

from kbert.cli import main
from kbert.finetuning import ClassificationRecipe
from kbert.finetuning import FineTuner
from kbert.finetuning import FineTuningConfig
from kbert.pretraining.pretraining_config import PretrainingConfig
from kbert.pretraining.pretraining_loop import PretrainingLoop

SMALL_MODEL = dict(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=48, max_positions=16)
CONFIG = FineTuningConfig(epochs=1, batch_size=4, learning_rate=1e-3, seed=5, max_length=16)


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return make_tiny_preset(tmp_path_factory.mktemp("extend") / "preset", **SMALL_MODEL)


@pytest.fixture(scope="module")
def examples():
    return classification_examples(8, seed=3)


def fine_tune(preset, folder, examples, config, **options):
    tuner = FineTuner(ClassificationRecipe(), preset, folder, config)
    return tuner.run(examples, examples[:4], **options)


def test_more_epochs_extend_a_finished_fine_tuning_run(preset, examples, tmp_path):
    first = fine_tune(preset, tmp_path / "run", examples, CONFIG)
    assert (first.status, len(first.history), first.global_step) == ("completed", 1, 2)
    longer = fine_tune(preset, tmp_path / "run", examples, CONFIG.replace(epochs=3), resume=True)
    assert (longer.status, len(longer.history), longer.global_step) == ("completed", 3, 6)
    assert longer.history[0] == first.history[0]  # the first epoch is the finished run's
    with pytest.raises(ValueError, match="config.epochs: 3 then, 2 now"):
        fine_tune(preset, tmp_path / "run", examples, CONFIG.replace(epochs=2), resume=True)


def test_overwrite_starts_afresh_where_a_run_was(preset, examples, tmp_path):
    fine_tune(preset, tmp_path / "run", examples, CONFIG.replace(epochs=2))
    (tmp_path / "run" / "notes.txt").write_text("from the old run")
    again = fine_tune(preset, tmp_path / "run", examples, CONFIG, overwrite=True)
    assert (len(again.history), again.global_step) == (1, 2)
    assert not (tmp_path / "run" / "notes.txt").exists()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "thesis.tex").write_text("not a run")
    with pytest.raises(ValueError, match="holds no training run"):
        fine_tune(preset, tmp_path / "other", examples, CONFIG, overwrite=True)
    assert (tmp_path / "other" / "thesis.tex").exists()


def test_more_steps_extend_a_finished_pretraining_run(tmp_path):
    data, tokenizer = make_shards(tmp_path / "corpus", num_documents=8)
    config = PretrainingConfig(batch_size=4, steps=1, warmup_steps=0, checkpoint_every=None)

    def pretrain(config, **options):
        loop = PretrainingLoop(tmp_path / "run", config)
        return loop.run(data, backbone_config=tiny_config(tokenizer), tokenizer=tokenizer, **options)

    assert pretrain(config).global_step == 1
    extended = pretrain(dataclasses.replace(config, steps=3), resume=True)
    assert (extended.status, extended.global_step) == ("completed", 3)
    assert (tmp_path / "run" / "model" / "config.json").is_file()
    assert pretrain(config, overwrite=True).global_step == 1


def test_resume_and_overwrite_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        main(["finetune", "--task", "classification", "--model", "demo", "--train", "x.csv",
              "--output", "run", "--resume", "--overwrite"])
    assert "not allowed with argument" in capsys.readouterr().err
