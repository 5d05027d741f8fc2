"""Inference backends: an OpenAI-compatible HTTP server, a local transformers
checkpoint, and a scripted replay. Each loads its heavy dependencies only when built."""
