"""What a server serves: the operator's models (`models.py`), who can reach it and at which address
(`reach.py`), and Hugging Face ZeroGPU's start-up and GPU calls (`zerogpu.py`)."""
