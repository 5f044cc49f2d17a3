"""The readers beside the writers: a session file, native JSON or a captured vLLM / OpenAI body (streamed or
not, gzipped or not) back into a TokenScores, without a model (`documents.open_document`)."""
