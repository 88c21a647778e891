"""Task model methods made from the inference functions, so the two cannot drift apart."""

import functools
import inspect

# The leading parameters of every `kbert.inference` function that a method binds.
BOUND_PARAMETERS = ("model", "tokenizer")


class InferenceMethod:
    """A task model's method that calls a `kbert.inference` function on the model.

    The function takes `(model, tokenizer, inputs, ...)`; the method binds the model
    it is read from and that model's `tokenizer`, and takes the rest: its signature is
    the function's without those two (`inspect.signature(BertQuestionAnswerer.answer)`
    is the tail of `kbert.inference.answer`'s), its docstring the function's. A
    default changed in the function is the method's default too. To run with another
    tokenizer, call the function. Read from the class, it is that signature too, and
    calling it with a model first (`BertQuestionAnswerer.answer(model, question,
    context)`) runs it on that model, as an unbound method would.

    Args:
        function: an inference function whose first two parameters are `model` and
            `tokenizer`.

    Example (in a task model's class body):

    >>> answer = InferenceMethod(kbert.inference.answer)
    """

    def __init__(self, function):
        parameters = list(inspect.signature(function).parameters.values())
        names = tuple(parameter.name for parameter in parameters[: len(BOUND_PARAMETERS)])
        if names != BOUND_PARAMETERS:
            raise ValueError(
                f"`function` must take {', '.join(BOUND_PARAMETERS)} first. Received: "
                f"{function.__qualname__}{inspect.signature(function)}"
            )
        self.function = function
        self.__signature__ = inspect.Signature(parameters[len(BOUND_PARAMETERS) :])
        self.__doc__ = function.__doc__
        self.__name__ = function.__name__
        self.__qualname__ = function.__qualname__
        self.__module__ = function.__module__

    def __set_name__(self, owner, name):
        self.__name__ = name
        self.__qualname__ = f"{owner.__qualname__}.{name}"
        self.__module__ = owner.__module__

    def __get__(self, model, owner=None):
        if model is None:
            return self
        function = self.function

        @functools.wraps(function)
        def method(*args, **kwargs):
            return function(model, model.tokenizer, *args, **kwargs)

        method.__signature__ = self.__signature__
        method.__name__, method.__qualname__ = self.__name__, self.__qualname__
        return method

    def __call__(self, model, *args, **kwargs):
        return self.__get__(model)(*args, **kwargs)

    def __repr__(self):
        return f"<inference method {self.__qualname__} of {self.function.__module__}>"
