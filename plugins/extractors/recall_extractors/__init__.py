"""Recall extractors: stub and haiku."""
