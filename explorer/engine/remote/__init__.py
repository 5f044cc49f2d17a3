"""The remote engine: a model served by vLLM or any OpenAI-compatible server (`engine`), its HTTP client
(`http`), the streamed generation request (`stream`), the vocabulary asked of the server (`vocab`)."""
