"""Recall storage plugin: embedded SQLite."""
