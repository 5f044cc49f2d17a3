"""Text -> ids as every engine checks it: a non-empty text, ids within the context and the vocabulary, chat
messages through a model's template (the same refusals for a model here and a served one)."""

from __future__ import annotations

from typing import Any

from explorer.engine.passes import bounds
from explorer.errors import ExplorerError

CHAT_TEMPLATE_RESERVED = {
    "conversation",
    "messages",
    "tools",
    "documents",
    "chat_template",
    "tokenize",
    "padding",
    "truncation",
    "max_length",
    "return_tensors",
    "return_dict",
    "return_assistant_tokens_mask",
    "tokenizer_kwargs",
    "add_generation_prompt",
    "continue_final_message",
}


def check_text(text: str) -> None:
    """Refuse an empty (or non-string) text to score."""
    if not isinstance(text, str) or text == "":
        raise ExplorerError("The text is empty: type or paste some text to score.", param="prompt", code="empty_text")


def check_ids(ids: list[int], name: str, context: int, vocab_size: int) -> None:
    """Refuse no ids, more than the page's cap or `context`, and ids outside the vocabulary (0: not known)."""
    if not ids:
        raise ExplorerError("The prompt has no tokens: give some text or token ids.", param="prompt", code="empty_text")
    bounds.check_input(len(ids))  # a page action's cap (explorer/engine/passes/bounds.py); the API checks its own
    if len(ids) > context:
        raise ExplorerError(
            f"The text is {len(ids)} tokens; {name} reads at most {context}: shorten it.",
            param="prompt",
            code="context_length_exceeded",
        )
    top = vocab_size or float("inf")  # 0: not known (a remote server's): the server checks the bound
    bad = [i for i in ids if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < top]
    if bad:
        raise ExplorerError(
            f"Token id {bad[0]!r} is outside the vocabulary (0..{vocab_size - 1}).",
            param="prompt",
            code="invalid_token_id",
        )


def check_messages(messages: list[dict], add_generation_prompt: bool, continue_final_message: bool) -> None:
    """Refuse what is not a non-empty list of {role, content} messages, or a continuation of no assistant's."""
    if not isinstance(messages, list) or not messages:
        raise ExplorerError(
            "`messages` must be a non-empty list of {role, content} objects.", param="messages", code="invalid_value"
        )
    for m in messages:
        if (
            not isinstance(m, dict)
            or m.get("role") not in ("system", "user", "assistant")
            or not isinstance(m.get("content"), str)
        ):
            raise ExplorerError(
                "Each message needs a `role` (system, user or assistant) and a string `content`.",
                param="messages",
                code="invalid_value",
            )
    if continue_final_message and (add_generation_prompt or messages[-1]["role"] != "assistant"):
        raise ExplorerError(
            "`continue_final_message` continues a last message from the assistant: end `messages` with one "
            "and set `add_generation_prompt: false`.",
            param="continue_final_message",
            code="invalid_value",
        )


def template_kwargs(kwargs: dict | None) -> dict:
    """`chat_template_kwargs` as given, refused where they set what a request field of that name sets."""
    out = dict(kwargs or {})
    reserved = sorted(set(out) & CHAT_TEMPLATE_RESERVED)
    if reserved:
        raise ExplorerError(
            f"`chat_template_kwargs` may not set {reserved[0]!r}: use the request field of that name.",
            param="chat_template_kwargs",
            code="invalid_value",
        )
    return out


def chat_ids(
    tokenizer: Any,
    name: str,
    messages: list[dict],
    add_generation_prompt: bool = True,
    continue_final_message: bool = False,
    kwargs: dict | None = None,
) -> list[int]:
    """Token ids of `messages` through `tokenizer`'s chat template (model `name`'s), checked first."""
    # 1. the model has a template, the messages and the template's arguments are well formed
    if not getattr(tokenizer, "chat_template", None):
        raise ExplorerError(
            f"Model {name!r} has no chat template: use a plain prompt instead of chat messages.",
            param="messages",
            code="no_chat_template",
        )
    check_messages(messages, add_generation_prompt, continue_final_message)
    extra = template_kwargs(kwargs)
    # 2. the template's text (its own checks, roles must alternate, ... are the user's errors), then its ids
    try:
        text = tokenizer.apply_chat_template(
            messages,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
            **extra,
        )
    except Exception as err:  # noqa: BLE001 - the template's own checks (roles must alternate, ...) are user errors
        first = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise ExplorerError(
            f"The chat template refused these messages: {first}", param="messages", code="invalid_value"
        ) from None
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])
