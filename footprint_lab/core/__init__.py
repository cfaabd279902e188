"""Runners and their doors: the run-input door, ``Agent``, ``LLMCall``, tools, ``Run``."""
