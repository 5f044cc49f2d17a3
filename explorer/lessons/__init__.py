"""Lessons for a class: lesson files (schema.py) and the rooms a class joins (rooms.py). No torch, no gradio."""
