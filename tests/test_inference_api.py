"""One inference API: `(model, tokenizer, inputs, ...)` functions, methods that are those
functions, one default batch size, one QA windowing value."""

import ast
import inspect
import pathlib

import pytest

import kbert.inference
import kbert.models
from kbert.cli import build_parser
from kbert.data import QuestionWindowing
from kbert.models.inference_method import InferenceMethod
from kbert.inference.model_io import inference_batch_size
from kbert.preprocessing import DEFAULT_BATCH_SIZE
from kbert.preprocessing.length_buckets import CPU_BATCH_SIZE
from kbert.pretraining.pretraining_config import PretrainingConfig

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Every task model method that runs an inference function, and that function.
EXPECTED_METHODS = {
    ("BertMaskedLM", "fill_mask"): kbert.inference.fill_mask,
    ("BertQuestionAnswerer", "answer"): kbert.inference.answer,
    ("BertClassifier", "classify"): kbert.inference.classify,
    ("BertTokenClassifier", "tag"): kbert.inference.tag,
    ("BertMultipleChoice", "choose"): kbert.inference.choose,
    ("BertTask", "embed"): kbert.inference.embed,
}


def _inference_functions():
    for name in kbert.inference.__all__:
        value = getattr(kbert.inference, name)
        if inspect.isfunction(value) and value.__module__.startswith("kbert.inference."):
            yield name, value


def _inference_methods():
    """`{(class name, attribute): InferenceMethod}` over the classes of `kbert.models`."""
    found = {}
    for class_name in kbert.models.__all__:
        cls = getattr(kbert.models, class_name)
        if not inspect.isclass(cls):
            continue
        for attribute, value in vars(cls).items():
            if isinstance(value, InferenceMethod):
                found[class_name, attribute] = value
    return found


def _tail(function):
    parameters = list(inspect.signature(function).parameters.values())
    return inspect.Signature(parameters[2:])


def test_every_inference_function_takes_model_tokenizer_then_inputs():
    functions = dict(_inference_functions())
    assert {"fill_mask", "answer", "classify", "tag", "embed", "score_words"} <= set(functions)
    assert {"attention_map", "span_probabilities"} <= set(functions)
    for name, function in functions.items():
        parameters = list(inspect.signature(function).parameters.values())
        assert [parameter.name for parameter in parameters[:2]] == ["model", "tokenizer"], name
        # The model and the tokenizer, then the inputs: none of the three has a default.
        assert all(parameter.default is inspect.Parameter.empty for parameter in parameters[:3])


def test_each_method_has_its_functions_signature_without_model_and_tokenizer():
    methods = _inference_methods()
    assert set(methods) == set(EXPECTED_METHODS)
    for (class_name, attribute), function in EXPECTED_METHODS.items():
        cls = getattr(kbert.models, class_name)
        method = getattr(cls, attribute)
        assert methods[class_name, attribute].function is function
        assert inspect.signature(method) == _tail(function), (class_name, attribute)
        assert method.__doc__ == function.__doc__
        assert method.__qualname__ == f"{class_name}.{attribute}"


def test_every_task_model_inherits_embed():
    for class_name in (
        "BertMaskedLM", "BertClassifier", "BertQuestionAnswerer", "BertPretrainer",
        "BertMultipleChoice",
    ):
        cls = getattr(kbert.models, class_name)
        assert inspect.signature(cls.embed) == _tail(kbert.inference.embed)


class _FakeModel:
    tokenizer = "the model's tokenizer"

    def __init__(self):
        self.calls = []


def _spy(model, tokenizer, text, top_k=3, batch_size=DEFAULT_BATCH_SIZE):
    """A stand-in inference function."""
    model.calls.append((tokenizer, text, top_k, batch_size))
    return len(model.calls)


class _Spied(_FakeModel):
    spy = InferenceMethod(_spy)


def test_a_method_runs_its_function_on_its_model_and_tokenizer():
    model = _Spied()
    assert model.spy("a text", top_k=1) == 1
    assert model.spy("another", batch_size=2) == 2
    assert model.calls == [
        ("the model's tokenizer", "a text", 1, DEFAULT_BATCH_SIZE),
        ("the model's tokenizer", "another", 3, 2),
    ]
    bound = model.spy
    assert inspect.signature(bound) == inspect.signature(_Spied.spy) == _tail(_spy)
    assert bound.__doc__ == _spy.__doc__ and bound.__name__ == "spy"
    # Read from the class and given a model first, as an unbound method.
    assert _Spied.spy(model, "third") == 3 and model.calls[-1][1] == "third"
    with pytest.raises(TypeError):
        model.spy("a text", tokenizer="another tokenizer")


def test_a_function_without_model_and_tokenizer_cannot_be_a_method():
    def no_tokenizer(model, text):
        return text

    with pytest.raises(ValueError, match="must take model, tokenizer first"):
        InferenceMethod(no_tokenizer)


def test_every_batch_size_default_is_the_one_constant():
    # Parameters and dataclass fields named `batch_size` default to DEFAULT_BATCH_SIZE
    # by name (or to None, "the default"), never to a number of their own.
    literal = []
    for path in sorted((ROOT / "kbert").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args.args + node.args.kwonlyargs
                defaults = [None] * (len(node.args.args) - len(node.args.defaults))
                defaults += node.args.defaults + node.args.kw_defaults
                pairs = zip(arguments, defaults)
                literal += [
                    f"{path.relative_to(ROOT)}:{node.lineno} {argument.arg}"
                    for argument, default in pairs
                    if argument.arg == "batch_size" and _is_number(default)
                ]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.target.id == "batch_size" and _is_number(node.value):
                    literal.append(f"{path.relative_to(ROOT)}:{node.lineno} batch_size")
    assert literal == []
    # Inference's texts per pass default to None: `inference_batch_size()` picks them.
    for function in (kbert.inference.fill_mask, kbert.inference.answer, kbert.inference.embed,
                     kbert.inference.classify, kbert.inference.tag):
        assert inspect.signature(function).parameters["batch_size"].default is None


def _is_number(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float))


TRAINING_COMMANDS = ("finetune", "pretrain", "search")


def test_inference_batch_size_is_8_on_a_cpu_32_on_an_accelerator(monkeypatch):
    import kbert.inference.inference_engine as inference_engine

    assert inference_batch_size() == CPU_BATCH_SIZE == 8
    assert inference_batch_size(3) == 3
    monkeypatch.setattr(inference_engine, "on_cpu", lambda: False)
    assert inference_batch_size() == DEFAULT_BATCH_SIZE == 32
    with pytest.raises(ValueError, match="batch_size"):
        inference_batch_size(0)


def test_every_commands_batch_size_defaults_to_the_constant():
    parser = build_parser()
    (subparsers,) = [
        action for action in parser._actions if action.__class__.__name__ == "_SubParsersAction"
    ]
    with_batch_size = []
    for name, subparser in subparsers.choices.items():
        for action in subparser._actions:
            if "--batch-size" in action.option_strings:
                with_batch_size.append(name)
                if name == "evaluate-pretraining":
                    # An evaluation batch: the pretraining config's `eval_batch_size`.
                    assert action.default == PretrainingConfig.eval_batch_size
                elif name in TRAINING_COMMANDS:
                    assert action.default == DEFAULT_BATCH_SIZE, name
                else:  # inference: `inference_batch_size()` of the machine
                    assert action.default is None, name
    assert {"fill-mask", "qa", "classify", "tag", "embed", "finetune", "pretrain"} <= set(
        with_batch_size
    )


def test_question_windowing_checks_its_values_and_caps_its_length():
    assert QuestionWindowing() == QuestionWindowing(384, 128, 64)
    assert QuestionWindowing(doc_stride=64).capped(128) == QuestionWindowing(128, 64, 64)
    assert QuestionWindowing(max_length=100).capped(512).max_length == 100
    assert QuestionWindowing(max_length=None).capped(512).max_length == 512
    assert QuestionWindowing(max_question_length=None).max_question_length is None
    for arguments, message in [
        (dict(max_length=4), r"`max_length` must be an integer >= 5. Received: max_length=4"),
        (dict(max_length=True), r"Received: max_length=True"),
        (dict(doc_stride=0), r"`doc_stride` must be an integer >= 1. Received: doc_stride=0"),
        (dict(doc_stride=None), r"Received: doc_stride=None"),
        (dict(max_question_length=1.5), r"`max_question_length` must be an integer >= 1"),
    ]:
        with pytest.raises(ValueError, match=message):
            QuestionWindowing(**arguments)
    with pytest.raises(ValueError, match="`max_length` must be an integer >= 5"):
        QuestionWindowing().capped(4)
    with pytest.raises(AttributeError):
        QuestionWindowing().doc_stride = 1


def test_the_qa_command_builds_its_windowing_from_its_flags():
    parser = build_parser()
    args = parser.parse_args(["qa", "--question", "q", "--context", "c"])
    assert (args.max_length, args.doc_stride) == (384, 128)
    defaults = QuestionWindowing()
    assert (args.max_length, args.doc_stride) == (defaults.max_length, defaults.doc_stride)
