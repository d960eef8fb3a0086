"""The one exception type the engine raises for input a person can fix."""


class EngineError(ValueError):
    """Invalid configuration or input; the message says what is wrong and what to do."""
