"""The engines whose forward pass runs here: what torch and llama.cpp share (`forward`), the transformers engine
(`torch_engine`), loading a model (`loading`), packed CPU weights (`packed`), the one thread of CPU work (`team`),
a device's memory (`memory`)."""
