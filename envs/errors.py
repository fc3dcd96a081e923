"""Environment errors that name what the user must fix (printed by the CLI as one line)."""


class EnvDataError(Exception):
    """Missing, empty or malformed environment data (says which file and how to get it)."""
