"""The text side of an engine, no model: per-token bytes (`tokens`), text and chat -> checked ids (`encoding`),
chat turns (`turns`), the document-start token (`context_start`), and the engines' tokenizer methods written once
over them (`side`: TokenizerText)."""
