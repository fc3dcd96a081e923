"""Actors, rollouts, evaluation and training (imports the bank and the environments)."""
