"""`kbert evaluate-pretraining`: masked-LM and next-sentence accuracy on held-out shards."""

from kbert.commands import EXIT_OK
from kbert.commands import add_model_argument
from kbert.commands import add_count_argument
from kbert.pretraining.pretraining_config import PretrainingConfig


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "evaluate-pretraining",
        help="score a pretrained model on held-out pretraining shards",
        description=(
            "Masked-LM top-1 accuracy (over the masked positions) and next-sentence "
            "accuracy of --model on the shards in --data, made with the model's "
            "vocabulary by `kbert create-pretraining-data` from text never used in "
            "training. Unmasked shards are masked with a fixed seed, so the score "
            "is reproducible. Full batches only: the last incomplete one is left out."
        ),
        epilog="example: kbert evaluate-pretraining --model runs/tiny/model --data heldout",
    )
    add_model_argument(parser, "the model to score")
    parser.add_argument(
        "--data", required=True, metavar="SHARD_DIR", help="held-out shards"
    )
    # The batch of `kbert pretrain`'s final evaluation, as here.
    add_count_argument(
        parser, "--batch-size", PretrainingConfig.eval_batch_size, "instances per batch"
    )
    add_count_argument(parser, "--seed", 12345, "masking seed for unmasked shards")
    parser.add_argument(
        "--json", action="store_true", help="print the scores as one JSON line"
    )
    parser.set_defaults(run=run)


def run(args):
    from kbert.commands.inference_inputs import print_json
    from kbert.models import BertPretrainer
    from kbert.pretraining import DynamicMasking, ShardReader
    from kbert.pretraining.pretraining_objective import PretrainingObjective

    reader = ShardReader(args.data)
    pretrainer = BertPretrainer.from_preset(args.model)
    tokenizer = pretrainer.tokenizer
    if tokenizer is not None:
        reader.check_vocabulary(tokenizer)
    masking = None
    if not reader.masked:
        if tokenizer is None:
            raise ValueError(
                f"{args.data} is unmasked and {args.model} has no tokenizer to mask it."
            )
        masking = DynamicMasking.from_tokenizer(
            tokenizer, seed=args.seed, name="dynamic_masking"
        )
    model = PretrainingObjective(pretrainer, masking)
    model.compile_objective(optimizer=None)
    batch_size = min(args.batch_size, reader.num_instances)
    scores = model.score(reader, batch_size)
    scores["instances"] = reader.num_instances // batch_size * batch_size
    if args.json:
        print_json(scores)
    else:
        print(
            f"{scores['instances']} instances: masked-LM accuracy "
            f"{100 * scores['mlm_accuracy']:.2f}% (loss {scores['mlm_loss']:.4f}), "
            f"next-sentence accuracy {100 * scores['nsp_accuracy']:.2f}%"
        )
    return EXIT_OK
