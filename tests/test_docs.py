"""The docs stay true: links resolve inside the repository, every example of docs/*.md is a body the code
could have written (or a request it accepts), and docs/api.md's generated tables match the code.

Examples are tagged by the line just before their fence: `<!-- shape: KIND key=value ... -->`; KINDS maps each
kind to its checks. Every ```json block of docs/shapes.md must carry a tag.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from explorer.errors import ExplorerError
from explorer.export import openai_chat, openai_completion, vllm, vllm_offline
from explorer.export.common import envelope, fingerprint, last_chunk, usage_chunk
from explorer.results.scores import TokenScores
from tests.helpers.exports import check_completion_logprobs, check_prompt_logprobs
from tests.helpers.repo import ROOT, repo_files
from tests.helpers.samples import generated_chat, scored_prompt

DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
SHAPES = ROOT / "docs" / "shapes.md"
# the guides by reader that the README's sections live in (the README keeps what a newcomer needs)
GUIDES = [ROOT / "docs" / f"{name}.md" for name in ("teachers", "lessons", "researchers", "api-clients", "operators")]
README_MAX_BYTES = 15_000
# the only places a link may leave the repository for: the references the docs cite
EXTERNAL = ("https://huggingface.co/", "https://docs.vllm.ai/", "https://platform.openai.com/docs/")
# built here so that this file does not hold the text it looks for
OUTSIDE = (".." + "/shared", "shared" + "/reference")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# ---- Markdown: links, anchors, fenced blocks --------------------------------------------


def without_fences(text: str) -> str:
    return re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.MULTILINE | re.DOTALL)


def without_code(text: str) -> str:
    """`text` with fenced blocks and inline code spans blanked (links inside code are not links)."""
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "``", without_fences(text), flags=re.DOTALL)


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
HTML = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)


def links(text: str) -> list[str]:
    """Every link and image target of a Markdown text, in order."""
    plain = without_code(text)
    return [m.group(1) for pattern in (LINK, REFERENCE, HTML) for m in pattern.finditer(plain)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link text kept, markup dropped, lower case, punctuation out, spaces to '-'."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", t.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen = set(), {}
    for line in without_fences(path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            found.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
    return found


def link_problem(doc: Path, target: str) -> str | None:
    """Why `target`, linked from `doc`, is not allowed, or None when it is fine."""
    if any(o in target for o in OUTSIDE):
        return "points at the team's shared folder, outside the repository"
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target):
        return None if target.startswith(EXTERNAL) else f"leaves the repository (allowed: {', '.join(EXTERNAL)})"
    path, _, anchor = target.partition("#")
    if path.startswith("/"):
        return "is absolute: use a path relative to the file"
    dest = (doc.parent / unquote(path)).resolve() if path else doc
    if not dest.is_relative_to(ROOT):
        return "leaves the repository through .."
    if not dest.exists():
        return f"{rel(dest)} does not exist"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"{rel(dest)} has no heading with the anchor #{anchor}"
    return None


@dataclass
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    kind: str | None  # from the `<!-- shape: ... -->` line before it
    params: dict

    def __str__(self) -> str:
        return f"{rel(self.doc)}:{self.line} ({self.kind or self.lang})"


def _value(v: str):
    return {"true": True, "false": False}.get(v, int(v) if re.fullmatch(r"-?\d+", v) else v)


def blocks(doc: Path) -> list[Block]:
    lines, out, i = doc.read_text(encoding="utf-8").split("\n"), [], 0
    while i < len(lines):
        m = re.match(r"^```([\w-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        tag = re.fullmatch(r"<!-- shape: (.+?) -->", lines[i - 1].strip()) if i else None
        kind, *rest = tag.group(1).split() if tag else [None]
        out.append(
            Block(
                doc,
                i + 1,
                m.group(1),
                "\n".join(lines[i + 1 : j]),
                kind,
                {k: _value(v) for k, _, v in (p.partition("=") for p in rest)},
            )
        )
        i = j + 1
    return out


def strict_json(text: str):
    """json.loads that refuses NaN, Infinity, numbers that overflow to inf, and duplicate keys."""

    def constant(c):
        raise ValueError(f"non-strict JSON constant {c}")

    def number(s):
        x = float(s)
        if not math.isfinite(x):
            raise ValueError(f"number {s} is not finite")
        return x

    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError(f"duplicate keys in {keys}")
        return dict(items)

    return json.loads(text, parse_constant=constant, parse_float=number, object_pairs_hook=pairs)


# ---- the checks of each kind of example ------------------------------------------------


def same_keys(example: dict, reference: dict, where: str) -> None:
    assert list(example) == list(reference), f"{where}: keys {list(example)}, the exporter writes {list(reference)}"


USAGE = ["prompt_tokens", "total_tokens", "completion_tokens"]  # vLLM's order; stream usage chunks stop there
DETAILS = ["prompt_tokens_details", "completion_tokens_details"]  # null, after them in a whole body
ALWAYS_NULL = ["service_tier", "kv_transfer_params", "ec_transfer_params", "metrics"]  # vLLM sends them as null


def check_usage(body: dict, generated: int | None = None, details: bool = True) -> None:
    u = body["usage"]
    assert list(u) == USAGE + (DETAILS if details else []), f"usage keys {list(u)}"
    assert all(u[k] is None for k in DETAILS if k in u), "the token details are null"
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
    if generated is not None:
        assert u["completion_tokens"] == generated, (
            "usage.completion_tokens counts every token_ids entry (EOS included)"
        )


def check_response(body: dict) -> None:
    """A whole body's vLLM keys: the always-null ones null, `system_fingerprint` naming this server's version."""
    assert all(body[k] is None for k in ALWAYS_NULL), f"{ALWAYS_NULL} are null"
    assert body["system_fingerprint"] == fingerprint(), f"system_fingerprint is {fingerprint()!r}"


def check_entry_ranks(entry: dict, actual_id: int | None) -> None:
    """A vLLM entry: actual id first, `{logprob, rank, decoded_token}`, ranks that agree with the logprobs."""
    if actual_id is not None:
        assert next(iter(entry)) == str(actual_id), "the actual token is the first key"
    for v in entry.values():
        assert list(v) == ["logprob", "rank", "decoded_token"] and v["rank"] >= 1
    values = list(entry.values())
    for a in values:
        for b in values:
            if a["logprob"] > b["logprob"]:
                assert a["rank"] <= b["rank"], (
                    f"rank {a['rank']} at {a['logprob']} vs rank {b['rank']} at {b['logprob']}"
                )


def check_openai_completion(body: dict, k: int, echo: bool = False, prompt_k: int | None = None) -> None:
    ref = openai_completion.export(generated_chat(), options=openai_completion.Options(logprobs=2))
    same_keys(body, ref, "body")
    check_response(body)
    assert body["object"] == "text_completion"
    for ch in body["choices"]:
        same_keys(ch, ref["choices"][0], "choice")
        assert ch["routed_experts"] is None
        lp = ch["logprobs"]
        if lp is not None:
            same_keys(lp, ref["choices"][0]["logprobs"], "logprobs")
            check_completion_logprobs(lp, k, echo)
            assert lp["text_offset"][:1] in ([], [0]), "text_offset counts from the start of the returned text"
        if ch["prompt_logprobs"] is not None:
            check_prompt_logprobs(
                ch["prompt_logprobs"], ch["prompt_token_ids"], prompt_k if prompt_k is not None else k
            )
    ids = [c["token_ids"] for c in body["choices"]]
    check_usage(body, sum(len(t) for t in ids) if all(t is not None for t in ids) else None)


def check_vllm_completion(body: dict, k: int) -> None:
    ref = vllm.export(scored_prompt())
    same_keys(body, ref, "body")
    check_response(body)
    for ch in body["choices"]:
        same_keys(ch, ref["choices"][0], "choice")
        check_prompt_logprobs(ch["prompt_logprobs"], ch["prompt_token_ids"], k)
        for pos, e in enumerate(ch["prompt_logprobs"][1:], 1):
            check_entry_ranks(e, ch["prompt_token_ids"][pos])
        assert body["usage"]["prompt_tokens"] == len(ch["prompt_token_ids"])
    check_usage(body)


def check_vllm_listed(body: dict, ids: str) -> None:
    """prompt_logprob_token_ids `ids` ("11,574"): the actual token, then the listed ids in the order asked (vLLM's),
    each with its true rank."""
    asked = [int(i) for i in str(ids).split(",")]
    same_keys(body, vllm.export(scored_prompt()), "body")
    check_response(body)
    for ch in body["choices"]:
        entries, prompt = ch["prompt_logprobs"], ch["prompt_token_ids"]
        assert entries[0] is None and len(entries) == len(prompt) == body["usage"]["prompt_tokens"]
        for pos, e in enumerate(entries[1:], 1):
            check_entry_ranks(e, prompt[pos])
            assert list(e)[1:] == [str(i) for i in asked if i != prompt[pos]], (
                f"position {pos}: the listed ids {list(e)[1:]} come in the order asked, {asked}"
            )
    check_usage(body)


def check_openai_chat(body: dict, k: int, prompt_k: int | None = None) -> None:
    ChatCompletion.model_validate(body)
    ref = openai_chat.export(generated_chat())
    same_keys(body, ref, "body")
    check_response(body)
    assert body["prompt_text"] is None
    for ch in body["choices"]:
        same_keys(ch, ref["choices"][0], "choice")
        same_keys(ch["message"], ref["choices"][0]["message"], "message")
        assert all(v is None for k, v in ch["message"].items() if k not in ("role", "content")), (
            "message: refusal and vLLM's annotations, audio, function_call, reasoning are null"
        )
        assert ch["routed_experts"] is None
        if ch["logprobs"] is None:
            continue
        same_keys(ch["logprobs"], ref["choices"][0]["logprobs"], "logprobs")
        content = ch["logprobs"]["content"]
        check_chat_entries(content, k, ref["choices"][0]["logprobs"]["content"][0])
        assert b"".join(bytes(e["bytes"]) for e in content) == ch["message"]["content"].encode(), (
            "bytes join to the content"
        )
        if ch["token_ids"] is not None:
            assert len(content) <= len(ch["token_ids"])
    ids = [c["token_ids"] for c in body["choices"]]
    check_usage(body, sum(len(t) for t in ids) if all(t is not None for t in ids) else None)
    if prompt_k is not None:
        check_prompt_logprobs(body["prompt_logprobs"], body["prompt_token_ids"], prompt_k)


def check_chat_entries(content: list[dict], k: int, ref_entry: dict) -> None:
    for e in content:
        same_keys(e, ref_entry, "content entry")
        if not e["token"].startswith("token_id:"):
            assert bytes(e["bytes"]).decode("utf-8", errors="backslashreplace") == e["token"], (
                "token text: \\xNN for bytes"
            )
        tl = [t["logprob"] for t in e["top_logprobs"]]
        assert tl == sorted(tl, reverse=True) and len(tl) == k, "top_logprobs: the true top-k, most likely first"


def check_openai_chat_stream(text: str, k: int) -> None:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    assert all(ln.startswith("data: ") for ln in lines) and lines[-1] == "data: [DONE]"
    chunks = [strict_json(ln[len("data: ") :]) for ln in lines[:-1]]
    head = envelope("chat.completion.chunk", "demo", 0, "x", "chatcmpl")
    role = openai_chat.role_chunk(head, 0)  # a choice's first chunk
    token = openai_chat.chunk(head, 0, None, openai_chat.Piece(text=""))  # a token's chunk; the last one of a choice:
    final = openai_chat.chunk(
        head, 0, None, openai_chat.Piece(text="", finish_reason="stop")
    )  # `stop_reason` before `token_ids`
    usage = usage_chunk(head, 0, 0)
    ref_entry = openai_chat.export(generated_chat())["choices"][0]["logprobs"]["content"][0]
    n = sum(1 for c in chunks if c["choices"])  # one choice's chunks, then at most the usage chunk
    assert all(c["choices"] for c in chunks[:n]) and len(chunks) - n <= 1, "the usage chunk comes last, once"
    for i, c in enumerate(chunks):
        ChatCompletionChunk.model_validate(c)
        assert c["object"] == "chat.completion.chunk"
        last = i == len(chunks) - 1
        if i >= n:
            same_keys(c, last_chunk(usage), "usage chunk")
            check_usage(c, details=False)
            continue
        assert [ch["index"] for ch in c["choices"]] == [0], "an example of one choice"
        ref = role if i == 0 else final if i == n - 1 else token
        same_keys(c, last_chunk(ref) if last else ref, "chunk")
        choice = c["choices"][0]
        same_keys(choice, ref["choices"][0], "chunk choice")
        if i == 0:
            assert choice["delta"].get("role") == "assistant" and choice["logprobs"] is None
            assert c["prompt_text"] is None
        else:
            check_chat_entries(choice["logprobs"]["content"], k, ref_entry)
            text = b"".join(bytes(e["bytes"]) for e in choice["logprobs"]["content"])
            assert text == choice["delta"]["content"].encode()
        assert (choice["finish_reason"] is not None) == (i == n - 1), "finish_reason on the last chunk only"
    assert chunks[-1]["system_fingerprint"] == fingerprint()


def check_vllm_offline(body: dict, k: int, prompt_k: int | None = None) -> None:
    ref = vllm_offline.export(generated_chat())
    same_keys(body, ref, "body")
    if prompt_k is not None:
        check_prompt_logprobs(body["prompt_logprobs"], body["prompt_token_ids"], prompt_k)
    for out in body["outputs"]:
        same_keys(out, ref["outputs"][0], "output")
        assert len(out["logprobs"]) == len(out["token_ids"])
        for tid, e in zip(out["token_ids"], out["logprobs"]):
            check_entry_ranks(e, tid)
            rank = e[str(tid)]["rank"]
            assert len(e) == (k + 1 if rank > k else k)
        total = sum(e[str(t)]["logprob"] for t, e in zip(out["token_ids"], out["logprobs"], strict=True))
        assert math.isclose(out["cumulative_logprob"], total, abs_tol=1e-5)


def check_native(body: dict) -> None:
    assert TokenScores.from_dict(body).to_dict() == body, "the native JSON round-trips"


def check_error(body: dict) -> None:
    assert list(body) == ["error"] and list(body["error"]) == ["message", "type", "param", "code"]
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["message"]


def check_models(body: dict) -> None:
    from fastapi.testclient import TestClient

    from explorer.api.routes import build_api
    from explorer.rules.sampler import Limits
    from explorer.serving.models import Models

    models = Models(["demo"], loader=lambda spec: None, allow_hub=False)
    live = TestClient(build_api(models, Limits())).get("/models").json()
    same_keys(body, live, "body")
    same_keys(body["data"][0], live["data"][0], "model")
    assert len(body["data"][0]["permission"]) == len(live["data"][0]["permission"]) == 1
    same_keys(body["data"][0]["permission"][0], live["data"][0]["permission"][0], "permission")
    assert {k: v for k, v in body["data"][0]["permission"][0].items() if k not in ("id", "created")} == {
        k: v for k, v in live["data"][0]["permission"][0].items() if k not in ("id", "created")
    }, "the permission object's fixed values"
    assert body["data"][0]["root"] == body["data"][0]["id"], "root is the served name"
    same_keys(body["data"][0]["capabilities"], live["data"][0]["capabilities"], "capabilities")
    same_keys(body["limits"], live["limits"], "limits")
    assert body["limits"] == live["limits"], "the example shows the default limits"


def check_tokenizer_info(body: dict) -> None:
    """The class first, no file paths, every special token as its text (never an AddedToken's fields)."""
    from explorer.api.tokenize import NOT_INFO

    assert next(iter(body)) == "tokenizer_class"
    assert not [k for k in list(body)[1:] if k in NOT_INFO], f"keys the route leaves out: {NOT_INFO}"
    for key in ("bos_token", "eos_token", "pad_token", "unk_token"):
        assert body.get(key) is None or isinstance(body[key], str), key
    assert all(isinstance(v, str) for v in body.get("added_tokens_decoder", {}).values())


def check_request(body: dict, route: str, error: str | None = None) -> None:
    """The request parses and passes every check of its route (or fails with the code `error`)."""
    from explorer.api.schemas import ChatRequest, CompletionRequest, parse
    from explorer.api.tokenize import DetokenizeRequest, TokenizeRequest

    schema = {
        "completions": CompletionRequest,
        "chat": ChatRequest,
        "tokenize": TokenizeRequest,
        "detokenize": DetokenizeRequest,
    }[route]

    def run():
        req = parse(schema, body)
        if route == "completions":
            req.check()
            req.to_settings()
        elif route == "chat":
            req.check()
            req.chat_messages()
            req.to_settings(room=1000)

    if error is None:
        run()
    else:
        with pytest.raises(ExplorerError) as err:
            run()
        assert err.value.code == error


KINDS = {
    "openai-completion": check_openai_completion,
    "openai-chat": check_openai_chat,
    "openai-chat-stream": check_openai_chat_stream,
    "vllm-completion": check_vllm_completion,
    "vllm-listed": check_vllm_listed,
    "vllm-offline": check_vllm_offline,
    "native": check_native,
    "error": check_error,
    "models": check_models,
    "tokenizer-info": check_tokenizer_info,
    "request": check_request,
}
TEXT_KINDS = {"openai-chat-stream"}  # checked on the block's text, not on parsed JSON
SHAPES_NEED = {
    "openai-completion",
    "openai-chat",
    "openai-chat-stream",
    "vllm-completion",
    "vllm-listed",
    "vllm-offline",
    "native",
    "error",
}

DOC_BLOCKS = [b for doc in DOCS if doc.parent.name == "docs" for b in blocks(doc)]


# ---- the tests ----------------------------------------------------------------------------


def test_docs_exist():
    for doc in DOCS[:3] + [SHAPES, ROOT / "docs" / "api.md", ROOT / "docs" / "architecture.md", *GUIDES]:
        assert doc.exists(), f"{rel(doc)} is missing"


def test_the_readme_is_a_front_door():
    """README.md stays short and points to every guide: what a newcomer does not need lives in the guides."""
    readme = ROOT / "README.md"
    size = readme.stat().st_size
    assert size < README_MAX_BYTES, (
        f"README.md is {size:,} bytes (at most {README_MAX_BYTES:,}): move a section to a guide"
    )
    linked = {
        (readme.parent / target.partition("#")[0]).resolve() for target in links(readme.read_text(encoding="utf-8"))
    }
    unlinked = [
        rel(g) for g in [*GUIDES, ROOT / "CONTRIBUTING.md", ROOT / "docs" / "architecture.md"] if g not in linked
    ]
    assert not unlinked, f"README.md's Docs table does not link {unlinked}"


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_links_stay_in_the_repository(doc):
    problems = [
        f"{target}: {why}"
        for target in links(doc.read_text(encoding="utf-8"))
        if (why := link_problem(doc, target)) is not None
    ]
    assert not problems, f"{rel(doc)} has bad links:\n" + "\n".join(problems)


def test_nothing_mentions_the_shared_folder():
    """The repository must stand alone: no file names the team's folder outside it."""
    hits = []
    for path in repo_files():
        if not path.is_file():
            continue
        if path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{rel(path)}: {o}" for o in OUTSIDE if o in text]
    assert not hits, "\n".join(hits)


def test_every_json_example_parses_strictly():
    bad = []
    for b in DOC_BLOCKS:
        if b.lang == "json":
            try:
                strict_json(b.text)
            except ValueError as err:
                bad.append(f"{b}: {err}")
    assert not bad, "\n".join(bad)


def test_every_shapes_example_is_tagged_and_every_kind_shown():
    shapes = [b for b in DOC_BLOCKS if b.doc == SHAPES]
    untagged = [str(b) for b in shapes if b.lang == "json" and b.kind is None]
    assert not untagged, "JSON examples without a `<!-- shape: KIND -->` line before them: " + ", ".join(untagged)
    unknown = [f"{b}: {b.kind}" for b in DOC_BLOCKS if b.kind is not None and b.kind not in KINDS]
    assert not unknown, f"unknown kinds (known: {', '.join(KINDS)}): " + ", ".join(unknown)
    missing = SHAPES_NEED - {b.kind for b in shapes}
    assert not missing, f"docs/shapes.md shows no example of {sorted(missing)}"


@pytest.mark.parametrize("block", [b for b in DOC_BLOCKS if b.kind is not None], ids=str)
def test_example_passes_its_checks(block):
    body = block.text if block.kind in TEXT_KINDS else strict_json(block.text)
    KINDS[block.kind](body, **block.params)


def _gen_api():
    spec = importlib.util.spec_from_file_location("gen_api", ROOT / "docs" / "gen_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_tables_are_generated_from_the_code():
    gen = _gen_api()
    section = gen.current((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    assert section is not None, "docs/api.md lost its generated-section markers"
    assert section == gen.render(), (
        "docs/api.md's reference tables are out of date: run .venv/bin/python docs/gen_api.py"
    )


# ---- the guards themselves ------------------------------------------------------------------


def test_link_guard_catches_bad_links(tmp_path):
    doc = ROOT / "docs" / "shapes.md"
    assert link_problem(doc, "api.md#errors") is None
    assert link_problem(doc, "../README.md") is None
    assert "does not exist" in link_problem(doc, "nope.md")
    assert "anchor" in link_problem(doc, "api.md#no-such-heading")
    assert "shared folder" in link_problem(doc, "../.." + "/shared" + "/reference/x.md")
    assert "leaves the repository" in link_problem(doc, "../../etc/hosts")
    assert "leaves the repository" in link_problem(doc, "https://example.com/")
    assert link_problem(doc, "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct") is None
    assert links("[a](x.md) ![b](y.png) `[c](z.md)`\n```\n[d](w.md)\n```\n[e]: v.md") == ["x.md", "y.png", "v.md"]


def test_example_checks_catch_a_wrong_example():
    good = openai_completion.export(scored_prompt())
    check_openai_completion(good, k=2, echo=True)
    bad = json.loads(json.dumps(good))
    bad["choices"][0]["logprobs"]["top_logprobs"][1][" sky"] = -1.0  # disagrees with token_logprobs
    with pytest.raises(AssertionError):
        check_openai_completion(bad, k=2, echo=True)
    old_usage = json.loads(json.dumps(good))
    old_usage["usage"] = {k: good["usage"][k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    stale = json.loads(json.dumps(good)) | {"system_fingerprint": "logprob-explorer-0.0.0"}
    for wrong in (old_usage, stale):
        with pytest.raises(AssertionError):
            check_openai_completion(wrong, k=2, echo=True)
    with pytest.raises(ValueError):
        strict_json('{"logprob": NaN}')


def _shown(kind: str) -> Block:
    return next(b for b in DOC_BLOCKS if b.kind == kind)


def test_stream_and_listed_checks_catch_a_wrong_example():
    stream = _shown("openai-chat-stream")
    check_openai_chat_stream(stream.text, **stream.params)
    mistakes = [
        ('"finish_reason":null}]', '"finish_reason":null,"stop_reason":null,"token_ids":null}]'),  # old role chunk
        ('"finish_reason":"stop","stop_reason":null,', '"finish_reason":"stop",'),  # last chunk without stop_reason
        (',"system_fingerprint":"' + fingerprint() + '"', ""),  # the final chunk unmarked
    ]
    for old, new in mistakes:
        assert old in stream.text
        with pytest.raises(AssertionError):
            check_openai_chat_stream(stream.text.replace(old, new, 1), **stream.params)
    listed = _shown("vllm-listed")
    body = strict_json(listed.text)
    check_vllm_listed(body, **listed.params)
    for e in body["choices"][0]["prompt_logprobs"][1:]:  # most likely first: the order before vLLM's was checked
        actual, *rest = e.items()
        e.clear()
        e.update([actual, *sorted(rest, key=lambda kv: -kv[1]["logprob"])])
    with pytest.raises(AssertionError):
        check_vllm_listed(body, **listed.params)
