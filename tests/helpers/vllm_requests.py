"""The request table of the real-vLLM oracle: each request is sent to vLLM and to our server, the answers compared
key by key (tests/helpers/shape_diff.py). Greedy everywhere: a seeded sample depends on each server's random generator."""

from __future__ import annotations

from dataclasses import dataclass, field

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
TEXT = "The capital of France is"
IDS = [504, 3575, 282, 4649, 314]  # TEXT as SmolLM2's tokenizer writes it (no BOS: it adds none)
HI = [{"role": "user", "content": "Say hello in one word."}]
SUM = [{"role": "user", "content": "What is 2+2? Answer with the number only."}]  # greedy: "2 + 2 = 4", then EOS
CHAT_PROMPT = (  # SUM through SmolLM2's chat template, as text for /v1/completions
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nWhat is 2+2? Answer with the number only.<|im_end|>\n<|im_start|>assistant\n"
)
CAPITAL = [{"role": "user", "content": "What is the capital of France?"}]  # greedy: "The capital ..." (504 first)
GREEDY = {"temperature": 0}


@dataclass(frozen=True)
class Req:
    name: str
    path: str
    body: dict = field(default_factory=dict)
    method: str = "POST"

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


def _c(name: str, **body) -> Req:
    return Req(name, "/v1/completions", {"model": MODEL, "prompt": TEXT, "max_tokens": 6, **GREEDY, **body})


def _chat(name: str, **body) -> Req:
    return Req(name, "/v1/chat/completions", {"model": MODEL, "messages": HI, "max_tokens": 6, **GREEDY, **body})


REQUESTS = [
    Req("models", "/v1/models", method="GET"),
    _c("cmpl-plain"),
    _c("cmpl-logprobs-0", logprobs=0),
    _c("cmpl-logprobs-5", logprobs=5),
    _c("cmpl-logprobs-20", logprobs=20),
    _c("cmpl-echo-score", echo=True, max_tokens=0, logprobs=5),
    _c("cmpl-echo-generate", echo=True, logprobs=3),
    _c("cmpl-echo-prompt-logprobs", echo=True, logprobs=2, prompt_logprobs=1),
    _c("cmpl-echo-score-prompt-logprobs", echo=True, max_tokens=0, logprobs=3, prompt_logprobs=5),
    _c("cmpl-echo-score-token-ids", echo=True, max_tokens=0, logprobs=1, return_token_ids=True),
    _c("cmpl-echo-score-utf8", prompt="Grüße 東京 課 👋🙂!", echo=True, max_tokens=0, logprobs=1, prompt_logprobs=1),
    _c("cmpl-prompt-logprobs-0", max_tokens=1, prompt_logprobs=0),
    _c("cmpl-prompt-logprobs-5", max_tokens=1, prompt_logprobs=5),
    _c("cmpl-token-ids-prompt", prompt=IDS, logprobs=3),
    _c("cmpl-two-prompts", prompt=[TEXT, "One, two,"], logprobs=1),
    _c("cmpl-return-token-ids", logprobs=2, return_token_ids=True, prompt_logprobs=2),
    _c("cmpl-tokens-as-ids", logprobs=2, return_tokens_as_token_ids=True),
    _c("cmpl-logprob-token-ids", logprobs=1, logprob_token_ids=[260, 13, 29]),
    _c("cmpl-stop-string", max_tokens=12, logprobs=2, stop=["."]),
    _c("cmpl-stop-string-kept", max_tokens=12, logprobs=2, stop=["."], include_stop_str_in_output=True),
    _c("cmpl-stop-token-ids", max_tokens=12, logprobs=2, stop_token_ids=[30]),
    _c("cmpl-eos", prompt=CHAT_PROMPT, max_tokens=24, logprobs=2, return_token_ids=True),
    _c("cmpl-eos-ignored", prompt=CHAT_PROMPT, max_tokens=8, logprobs=1, ignore_eos=True),
    _c("cmpl-n2-greedy", n=2, logprobs=1),
    _c("cmpl-stream", stream=True, logprobs=2),
    _c("cmpl-stream-usage", stream=True, logprobs=1, stream_options={"include_usage": True}),
    _c(
        "cmpl-stream-continuous-usage",
        stream=True,
        max_tokens=3,
        stream_options={"include_usage": True, "continuous_usage_stats": True},
    ),
    _c("cmpl-stream-echo", stream=True, echo=True, logprobs=2, max_tokens=3),
    _c("cmpl-stream-stop-string", stream=True, max_tokens=12, logprobs=1, stop=["."]),
    _c("cmpl-stream-eos", stream=True, prompt=CHAT_PROMPT, max_tokens=24, logprobs=1),
    _c("cmpl-stream-token-ids", stream=True, max_tokens=3, logprobs=1, return_token_ids=True),
    _chat("chat-plain"),
    _chat("chat-logprobs", logprobs=True, top_logprobs=5),
    _chat("chat-logprobs-alone", logprobs=True),
    _chat("chat-top-logprobs-0", logprobs=True, top_logprobs=0),
    _chat("chat-prompt-logprobs", logprobs=True, top_logprobs=2, prompt_logprobs=2),
    _chat(
        "chat-utf8",
        messages=[{"role": "user", "content": "Write 東京 課 👋 in Japanese"}],
        logprobs=True,
        top_logprobs=1,
    ),
    _chat("chat-return-token-ids", return_token_ids=True),
    _chat("chat-tokens-as-ids", logprobs=True, top_logprobs=2, return_tokens_as_token_ids=True),
    _chat("chat-logprob-token-ids", logprobs=True, top_logprobs=1, logprob_token_ids=[260, 13, 29]),
    _chat("chat-stop-string", messages=SUM, max_tokens=24, logprobs=True, top_logprobs=1, stop=[" ="]),
    _chat("chat-eos", messages=SUM, max_tokens=24, logprobs=True, top_logprobs=2),
    _chat("chat-max-completion-tokens", max_tokens=None, max_completion_tokens=3),
    _chat(
        "chat-continue-final",
        messages=[*HI, {"role": "assistant", "content": "Hello"}],
        add_generation_prompt=False,
        continue_final_message=True,
        logprobs=True,
        top_logprobs=1,
    ),
    _chat(
        "chat-echo-continue-final",
        messages=[*HI, {"role": "assistant", "content": "Hello"}],
        add_generation_prompt=False,
        continue_final_message=True,
        echo=True,
    ),
    _chat(
        "chat-logprob-token-ids-sampled", messages=CAPITAL, max_tokens=2, logprobs=True, logprob_token_ids=[504, 260]
    ),
    _c("cmpl-logprob-token-ids-sampled", max_tokens=2, logprobs=0, logprob_token_ids=[7042, 260]),
    _chat("chat-stream", stream=True, logprobs=True, top_logprobs=2, max_tokens=3),
    _chat("chat-stream-usage", stream=True, max_tokens=3, stream_options={"include_usage": True}),
    _chat("chat-stream-eos", messages=SUM, stream=True, max_tokens=24, logprobs=True, top_logprobs=1),
    _chat("chat-stream-token-ids", stream=True, max_tokens=3, return_token_ids=True),
    Req("tokenize", "/tokenize", {"model": MODEL, "prompt": TEXT}),
    Req("tokenize-strs", "/tokenize", {"model": MODEL, "prompt": "Grüße, 東京 👋", "return_token_strs": True}),
    Req("tokenize-chat", "/tokenize", {"model": MODEL, "messages": HI, "return_token_strs": True}),
    Req("detokenize", "/detokenize", {"model": MODEL, "tokens": IDS}),
    # errors: status and body shape
    _c("error-logprobs-over-cap", logprobs=21),
    _c("error-prompt-logprobs-over-cap", prompt_logprobs=21),
    _c("error-prompt-logprobs-full", max_tokens=1, prompt_logprobs=-1),
    _c("error-negative-temperature", temperature=-1.0),
    _c("error-n-as-string", n="2"),
    _c("error-unknown-model", model="no-such-model"),
    _c("error-max-tokens-over-context", max_tokens=100_000),
    _c("error-token-id-outside-vocab", prompt=[504, 10_000_000]),
    _c("error-stream-prompt-logprobs", stream=True, prompt_logprobs=1),
    Req("error-missing-prompt", "/v1/completions", {"model": MODEL}),
    _chat("error-top-logprobs-without-logprobs", top_logprobs=2),
    _chat("error-top-logprobs-over-cap", logprobs=True, top_logprobs=21),
    Req("error-detokenize-outside-vocab", "/detokenize", {"model": MODEL, "tokens": [10_000_000]}),
    Req("error-not-json", "/v1/completions", {"__raw__": "{not json"}),
]
