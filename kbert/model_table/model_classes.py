"""The model table: one `ModelClass` row per kbert model class, and how a package adds one.

kbert's own rows are written here; `register_model_class` adds another package's (a new
task head), after checking it. Nothing here imports Keras.
"""

from kbert.model_table.model_class import ModelClass

# Head layers several classes share are written once. The masked-LM head is tied to the
# token embedding: it owns its transform, LayerNorm and output bias only.
MASKED_LM_HEAD = (
    "masked_lm_head",
    (
        ("transform_dense/kernel", ("H", "H")),
        ("transform_dense/bias", ("H",)),
        ("layer_norm/gamma", ("H",)),
        ("layer_norm/beta", ("H",)),
        ("output_bias", ("V",)),
    ),
)


def dense_head(layer, units):
    """The layout of a head that is one Dense layer of `units` outputs (a shape letter)."""
    return (layer, (("kernel", ("H", units)), ("bias", (units,))))


BUILT_IN_CLASSES = (
    ModelClass(
        name="BertBackbone",
        module="kbert.models.bert_backbone",
        holds="no task head",
        huggingface_architecture="BertModel",
        app_kind="encoder only",
    ),
    ModelClass(
        name="BertPretrainer",
        module="kbert.models.bert_pretrainer",
        holds="masked-LM and next-sentence heads",
        head_layers=(MASKED_LM_HEAD, dense_head("next_sentence_head", "2")),
        huggingface_architecture="BertForPreTraining",
        app_kind="pretrained",
    ),
    ModelClass(
        name="BertMaskedLM",
        module="kbert.models.bert_masked_lm",
        holds="a masked-LM head",
        head_layers=(MASKED_LM_HEAD,),
        inference_verb="fill_mask",
        huggingface_architecture="BertForMaskedLM",
        keras_hub_task=("BertMaskedLM", "bert_masked_lm", "BertMaskedLMPreprocessor"),
        app_kind="masked LM",
    ),
    ModelClass(
        name="BertClassifier",
        module="kbert.models.bert_classifier",
        holds="a classifier head",
        head_layers=(dense_head("classifier_head", "C"),),
        inference_verb="classify",
        huggingface_architecture="BertForSequenceClassification",
        keras_hub_task=(
            "BertTextClassifier",
            "bert_text_classifier",
            "BertTextClassifierPreprocessor",
        ),
        app_kind="classifier",
        app_tab="classify",
    ),
    ModelClass(
        name="BertTokenClassifier",
        module="kbert.models.bert_token_classifier",
        holds="a token classifier head",
        head_layers=(dense_head("token_classifier_head", "C"),),
        inference_verb="tag",
        huggingface_architecture="BertForTokenClassification",
        app_kind="tagger",
        app_tab="classify",
    ),
    ModelClass(
        name="BertQuestionAnswerer",
        module="kbert.models.bert_question_answerer",
        holds="a question-answering head",
        head_layers=(dense_head("span_head", "2"),),
        inference_verb="answer",
        huggingface_architecture="BertForQuestionAnswering",
        app_kind="question answering",
        app_tab="question-answering",
    ),
    ModelClass(
        name="BertMultipleChoice",
        module="kbert.models.bert_multiple_choice",
        holds="a multiple-choice head",
        head_layers=(dense_head("choice_head", "1"),),
        inference_verb="choose",
        huggingface_architecture="BertForMultipleChoice",
        app_kind="multiple choice",
        app_tab="classify",
    ),
)

# Class name -> its row: kbert's classes, then those packages registered.
MODEL_CLASSES = {}


def _clash(row, other):
    """Why `row` cannot join the table beside `other` (a row already in it), or None."""
    if row.name == other.name:
        return f"the class name {row.name!r} is taken by {other.module}"
    architecture = row.huggingface_architecture
    if architecture is not None and architecture == other.huggingface_architecture:
        return f"the Hugging Face architecture {architecture!r} is {other.name}'s"
    shared = {name: variables for name, variables in other.head_layers}
    for name, variables in row.head_layers:
        if name in shared and shared[name] != variables:
            return f"its head layer {name!r} has other variables than {other.name}'s"
    return None


def register_model_class(row):
    """Adds `row` (a `ModelClass`) to the model table, after checking it fits.

    The class's module registers the class itself in Keras' registry under
    `row.registered_name`; from then on kbert saves and loads it as a preset, names it
    in messages, and the app describes it.

    Args:
        row: the new class's `ModelClass`.

    Returns:
        `row`.

    Raises:
        ValueError: when `row` is not a `ModelClass`, or its name, Hugging Face
            architecture or a head layer's name clashes with a row in the table.

    Example:

    >>> register_model_class(ModelClass(name="BertRegressor", module=__name__, ...))
    """
    if not isinstance(row, ModelClass):
        raise ValueError(
            f"`row` must be a kbert.model_table.ModelClass. Received: row={row!r:.200}"
        )
    for other in MODEL_CLASSES.values():
        problem = _clash(row, other)
        if problem:
            raise ValueError(f"Cannot add the model class {row.name!r}: {problem}.")
    MODEL_CLASSES[row.name] = row
    return row


def model_class(name):
    """The `ModelClass` row called `name`.

    Raises:
        ValueError: for a name the table does not hold; the message lists those it does.
    """
    row = MODEL_CLASSES.get(name) if isinstance(name, str) else None
    if row is None:
        raise ValueError(
            f"`class_name` must be one of {sorted(MODEL_CLASSES)}. Received: class_name={name!r}"
        )
    return row


def class_with_verb(verb):
    """The first row of the table (kbert's own before those packages added) whose
    inference verb is `verb` ("answer": `BertQuestionAnswerer`'s row).

    Raises:
        ValueError: when no class answers with `verb`; the message lists the verbs.
    """
    for row in MODEL_CLASSES.values():
        if row.inference_verb == verb:
            return row
    verbs = sorted({row.inference_verb for row in MODEL_CLASSES.values()} - {None})
    raise ValueError(f"`verb` must be one of {verbs}. Received: verb={verb!r}")


for _row in BUILT_IN_CLASSES:
    register_model_class(_row)
