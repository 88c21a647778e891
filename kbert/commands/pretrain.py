"""`kbert pretrain`: masked-LM and next-sentence pretraining on shards."""

import signal
import sys

from kbert.commands import EXIT_ERROR, EXIT_OK
from kbert.commands import MODEL_HELP
from kbert.commands.config_arguments import add_config_arguments
from kbert.commands.config_arguments import config_from_arguments

# Shared with finetune rather than copied: Ctrl-C first stops cleanly, then aborts.
from kbert.commands.finetune import _cancel_on_interrupt
from kbert.commands.finetune import add_run_start_arguments
from kbert.commands.training_progress import TrainingProgressBar
from kbert.pretraining.pretraining_config import PretrainingConfig

SIZES = ("tiny", "mini", "small", "medium", "base", "large")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "pretrain",
        help="pretrain a BERT model (masked LM + next sentence) on pretraining shards",
        description=(
            "Train BertPretrainer on shards written by `kbert create-pretraining-data`, "
            "with masked-LM and next-sentence losses, and save the model with its "
            "tokenizer as a preset in --output/model. Start a new model of --size with "
            "the vocabulary --vocab, or continue pretraining a preset (--init-from, "
            "domain adaptation). A training checkpoint in --output allows --resume; "
            "Ctrl-C stops after the current batch and writes one."
        ),
        epilog=(
            "example: kbert pretrain --data shards --eval-data heldout --output runs/tiny "
            "--size tiny --vocab my_vocab --steps 10000 --batch-size 64"
        ),
    )
    parser.add_argument(
        "--data", required=True, metavar="SHARD_DIR", help="training shards"
    )
    parser.add_argument(
        "--eval-data", metavar="DIR", help="held-out shards scored at the end"
    )
    parser.add_argument(
        "--output", required=True, metavar="DIR", help="folder of the run"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--size", choices=SIZES, help="a new model of this BERT size")
    source.add_argument(
        "--init-from", metavar="MODEL", help=f"continue pretraining a model: {MODEL_HELP}"
    )
    parser.add_argument(
        "--vocab",
        metavar="DIR",
        help="with --size: the vocabulary folder (`kbert vocab`), a preset, or a "
        "vocab.txt (lower-cased)",
    )
    parser.add_argument(
        "--dropout",
        type=float,
        metavar="P",
        help="with --size: the new model's dropout (hidden and attention) while it "
        "pretrains (default: BERT's 0.1). 0 learns faster when the run is short for the "
        "model, as the Cramming recipe found; the saved model keeps it, so set it again "
        "for fine-tuning if wanted",
    )
    training = parser.add_argument_group("training")
    add_config_arguments(training, PretrainingConfig)
    add_run_start_arguments(
        training,
        resume_help="continue the run in --output; with more --steps than it had, a "
        "finished run goes on",
        distributed_note="implies --data-parallel",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the report as one JSON line"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def run(args):
    import pathlib

    from kbert.commands.inference_inputs import print_json
    from kbert.architecture.bert_config import BertConfig
    from kbert.training.distribution import initialize_distributed
    from kbert.pretraining.pretraining_loop import PretrainingLoop
    from kbert.training import ProgressEvents
    from kbert.training.cancellation_token import CancellationToken
    from kbert.training.optimization import describe_precision
    from kbert.tokenizer import BertTokenizer

    if args.size is not None and args.vocab is None:
        raise ValueError("--size needs --vocab (the vocabulary of the new model).")
    if args.dropout is not None and args.size is None:
        raise ValueError("--dropout goes with --size (the new model's dropout).")
    if args.dropout is not None and not 0 <= args.dropout < 1:
        raise ValueError(f"--dropout must be in [0, 1). Received: {args.dropout}")
    if args.init_from is not None and args.vocab is not None:
        raise ValueError(
            "--vocab goes with --size; --init-from uses the preset's vocabulary."
        )
    distributed = initialize_distributed(True if args.distributed else None)
    config = config_from_arguments(
        PretrainingConfig, args, data_parallel=args.data_parallel or distributed
    )
    print(f"precision: {describe_precision(config.precision)}", file=sys.stderr)
    model_source = {"init_from": args.init_from}
    if args.size is not None:
        dropout = {}
        if args.dropout is not None:
            dropout = {"hidden_dropout": args.dropout, "attention_dropout": args.dropout}
        vocabulary = pathlib.Path(args.vocab)
        if vocabulary.is_file():
            tokenizer = BertTokenizer.from_vocabulary_file(vocabulary)
        else:
            tokenizer = BertTokenizer.from_preset(args.vocab)
        model_source = {
            "backbone_config": BertConfig.from_size(
                args.size, vocabulary_size=tokenizer.vocabulary_size, **dropout
            ),
            "tokenizer": tokenizer,
        }

    cancellation = CancellationToken()
    bar = TrainingProgressBar("pretraining", disable=args.no_progress)
    loop = PretrainingLoop(
        args.output, config, callbacks=[ProgressEvents(bar)], cancellation=cancellation
    )
    previous_handler = _cancel_on_interrupt(cancellation)
    try:
        result = loop.run(
            args.data,
            eval_data=args.eval_data,
            resume=args.resume,
            overwrite=args.overwrite,
            **model_source,
        )
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGINT, previous_handler)
        bar.close()
    if args.json:
        print_json(result.to_dict())
    else:
        _print_report(result)
    return EXIT_OK if result.status == "completed" else EXIT_ERROR


def _print_report(result):
    if result.status != "completed":
        print(
            f"Cancelled after {result.global_step} batches; continue with --resume "
            f"(checkpoint: {result.checkpoint_path})."
        )
        return
    for title, metrics in (
        ("training", result.train_metrics),
        ("held-out", result.eval_metrics),
    ):
        if metrics:
            print(
                f"{title}: MLM loss {metrics['mlm_loss']:.4f}, MLM accuracy "
                f"{100 * metrics['mlm_accuracy']:.2f}%, NSP accuracy "
                f"{100 * metrics['nsp_accuracy']:.2f}%"
            )
    print(f"Saved the model and tokenizer to {result.preset_path}")
