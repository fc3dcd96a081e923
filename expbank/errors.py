"""Errors caused by the user's input (configs, files, data); the CLI prints them as one line."""


class UserError(Exception):
    """Bad input: a config key, a malformed file, a missing data directory. Exit status 1."""
