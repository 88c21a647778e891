"""One example predicted again after an edit: its label, probability and saliency."""

import dataclasses

import numpy


@dataclasses.dataclass(frozen=True)
class ExamplePrediction:
    """What a classifier says of an edited example, and why.

    `compute` is the work for an inference worker (it loads the model through the
    app's `ModelStore`, so the browser's thread never touches it); `record(old)` is the
    table row the edited example becomes.

    Attributes:
        position: the example's place in file order (its record in the browser).
        text, pair: the edited text and second text (None for single texts).
        label: the predicted label; probability: its probability.
        saliency: kbert's `TokenSaliency` of that label (occlusion).
        other_label, other_probability: where two models are compared, the second
            model's label and probability for the edited text (else None).
    """

    position: int
    text: str
    pair: object
    label: str
    probability: float
    saliency: object
    other_label: object = None
    other_probability: object = None

    @classmethod
    def compute(cls, models, source, head, position, text, pair=None, other_source=None):
        """Classifies `text` (and `pair`) with the model `source` and scores its pieces;
        with `other_source`, classifies it with that model too."""
        from kbert.inference import classify
        from kbert.inference import saliency

        model = models.model(head, source)
        result = classify(model, None, text, pairs=pair)
        scores = saliency(model, None, text, target=result.label, pair=pair)
        other_label = other_probability = None
        if other_source is not None:
            other = classify(models.model(head, other_source), None, text, pairs=pair)
            other_label, other_probability = other.label, float(other.probability)
        return cls(position, text, pair, result.label, float(result.probability), scores,
                   other_label, other_probability)

    def record(self, old):
        """The row `old` (a dict) with this text and prediction (and the other model's,
        where two are compared and it was predicted again), marked as edited."""
        record = dict(old, text=self.text, predicted=self.label, probability=self.probability)
        if self.pair is not None:
            record["pair"] = self.pair
        record["correct"] = self.label == old["gold"]
        if self.other_label is not None:
            record["other_predicted"] = self.other_label
            record["other_probability"] = self.other_probability
        if "other_predicted" in record:  # two models compared: do they still agree?
            record["agree"] = self.label == record["other_predicted"]
        record["edited"] = True
        return record


def map_coordinates(models, source, head, rows):
    """Worker: each row's sentence embedding (the mean of the last layers' vectors,
    kbert's `embed`) projected to 2-D, an array (N, 2)."""
    from kbert.inference import embed

    model = models.model(head, source)
    texts = [row["text"] for row in rows]
    pairs = [row["pair"] for row in rows] if rows and "pair" in rows[0] else None
    vectors = embed(model, None, texts, pairs=pairs, pooling="mean")
    return project_2d(vectors)


def project_2d(vectors):
    """(N, D) vectors to (N, 2): UMAP where the umap package is installed, else the two
    principal components (an SVD of the centred vectors, in NumPy)."""
    vectors = numpy.asarray(vectors, dtype=numpy.float64)
    if len(vectors) < 3:
        return numpy.zeros((len(vectors), 2))
    try:
        import umap
    except ImportError:
        umap = None
    if umap is not None and len(vectors) > 15:
        return numpy.asarray(umap.UMAP(n_components=2).fit_transform(vectors))
    centred = vectors - vectors.mean(axis=0)
    _, _, directions = numpy.linalg.svd(centred, full_matrices=False)
    projected = centred @ directions[:2].T
    if projected.shape[1] < 2:
        projected = numpy.pad(projected, ((0, 0), (0, 2 - projected.shape[1])))
    return projected
