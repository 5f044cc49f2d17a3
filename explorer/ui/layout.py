"""The Gradio page, top to bottom: model, three tabs (Score, Generate, Chat), then the shared views."""

from __future__ import annotations

import gradio as gr

from explorer.render.heatmap import CSS, METRICS, legend_html
from explorer.runtime import ModelHolder
from explorer.settings import MAX_K
from explorer.ui.handlers import DEFAULT_THRESHOLDS_TEXT, EXPORTS, Handlers

INTRO = """# logprob-explorer
See what the model expected at every token: its **probability**, **logprob** (natural log),
the **rank** of the actual token among all the vocabulary (1 = the model's top guess), the
**top-k alternatives**, and the **entropy** of the distribution (how unsure the model was, in nats).
Click any token for its alternatives."""

SCORE_EXAMPLES = [
    "The quick brown fox jumps over the lazy dog.",
    "The capital of France is Paris.",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "Bonjour le monde! 東京は大きい。 Emoji: 👋🙂",
    "Four score and seven years ago our fathers brought forth on this continent a new nation.",
]
GEN_EXAMPLES = ["The capital of France is", "Once upon a time,", "def is_prime(n):", "The three primary colors are"]
CHAT_EXAMPLES = ["What is the capital of France?", "Write a haiku about autumn.", "Explain entropy in one sentence."]

MODE_CHOICES = ["raw: the model's own distribution", "processed: after temperature / top-k / top-p"]
HEATMAP_JS = """
const pick = (t) => {
  element.querySelectorAll('.sel').forEach((x) => x.classList.remove('sel'));
  t.classList.add('sel');
  trigger('click', {pos: Number(t.dataset.pos)});
};
element.addEventListener('click', (e) => { const t = e.target.closest('[data-pos]'); if (t) pick(t); });
element.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' && e.key !== ' ') return;
  const t = e.target.closest('[data-pos]');
  if (t) { e.preventDefault(); pick(t); }
});
"""


def _sampler_controls():
    with gr.Row():
        max_tokens = gr.Slider(1, 512, value=48, step=1, label="Max tokens")
        temperature = gr.Slider(0, 2, value=0.7, step=0.05, label="Temperature (0 = greedy)")
        top_p = gr.Slider(0.01, 1, value=1.0, step=0.01, label="Top-p (1 = off)")
        top_k = gr.Slider(0, 200, value=0, step=1, label="Top-k (0 = off)")
    with gr.Row():
        seed = gr.Number(value=None, precision=0, label="Seed (empty = random, shown in the summary)")
        stop = gr.Textbox(label="Stop strings (one per line; \\n for a newline)", lines=1)
        mode = gr.Radio(MODE_CHOICES, value=MODE_CHOICES[0], label="Numbers shown",
                        info="raw = what the model believes; processed = what the sampler actually drew from")
        score_prompt = gr.Checkbox(value=True, label="Also score the prompt's tokens")
    return [max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt]


def build(holder: ModelHolder) -> gr.Blocks:
    h = Handlers(holder)
    with gr.Blocks(title="logprob-explorer") as demo:
        state = gr.State([])
        gr.Markdown(INTRO)
        with gr.Row():
            model_box = gr.Textbox(value=holder.model_id, label="Model (hub id or local folder)", scale=4)
            load_btn = gr.Button("Load model", scale=1)
        model_status = gr.Markdown(Handlers.model_status(holder.loaded) if holder.loaded else
                                   f"Model **{holder.model_id}** loads on the first action.")

        with gr.Tabs():
            with gr.Tab("Score"):
                gr.Markdown("Score an existing text: how likely was each token given the ones before it? The first token has no context, so it is not scored.")
                text = gr.Textbox(label="Text", lines=5, placeholder="Paste any text ...")
                score_btn = gr.Button("Score", variant="primary")
                gr.Examples(SCORE_EXAMPLES, inputs=[text])
            with gr.Tab("Generate"):
                gr.Markdown("Continue a prompt; every generated token shows what else the model considered.")
                prompt = gr.Textbox(label="Prompt", lines=3)
                gen_controls = _sampler_controls()
                gen_btn = gr.Button("Generate", variant="primary")
                gr.Examples(GEN_EXAMPLES, inputs=[prompt])
            with gr.Tab("Chat"):
                gr.Markdown("Send a message through the model's chat template; the template's role markers are tokens too.")
                system = gr.Textbox(label="System message (optional)", lines=1)
                message = gr.Textbox(label="Message", lines=3)
                chat_controls = _sampler_controls()
                chat_btn = gr.Button("Send", variant="primary")
                gr.Examples(CHAT_EXAMPLES, inputs=[message])

        gr.Markdown("## Tokens\nColour each token by a metric; hover for its numbers, click (or Tab + Enter) for its alternatives.")
        with gr.Row():
            metric = gr.Dropdown(list(METRICS), value="probability", label="Colour by")
            thresholds = gr.Textbox(DEFAULT_THRESHOLDS_TEXT, label="Rank bucket thresholds (GLTR)")
            k = gr.Slider(1, MAX_K, value=10, step=1, label="Alternatives shown (k)")
        legend = gr.HTML(legend_html("probability"), css_template=CSS, js_on_load=None)
        heatmap = gr.HTML("", css_template=CSS, js_on_load=HEATMAP_JS, elem_id="heatmap")
        summary = gr.Markdown()
        with gr.Row():
            with gr.Column(scale=1):
                gr.Markdown("### Selected token\nThe top-k alternatives the model weighed here; *(others)* is the probability left to the rest of the vocabulary.")
                detail_md = gr.Markdown()
                detail_df = gr.Dataframe(label="Alternatives", interactive=False)
                selected = gr.Number(value=0, precision=0, label="Position", minimum=0)
            with gr.Column(scale=1):
                gr.Markdown("### Curves\nRank near 1 and low entropy: the model saw it coming. Spikes: surprises.")
                plot = gr.Plot(label="Rank, entropy, surprisal over positions", show_label=False)
                hist = gr.Plot(label="Rank buckets", show_label=False)
        gr.Markdown("### Every token\nOne row per token; probability and logprob of the actual token, its rank, the entropy (nats) and surprisal (bits).")
        table = gr.Dataframe(label="Per-token numbers", interactive=False, max_height=400)
        with gr.Row():
            fmt = gr.Dropdown(EXPORTS, value="vllm", label="Download format")
            dl_btn = gr.Button("Prepare download")
            dl_file = gr.File(label="Download", interactive=False)

        views = [state, heatmap, legend, summary, plot, hist, table, detail_md, detail_df, selected]
        look = [metric, thresholds, k]
        score_btn.click(h.score, [text, *look], views, api_name="score")
        text.submit(h.score, [text, *look], views, api_name=False)
        gen_btn.click(h.generate, [prompt, *gen_controls, *look], views, api_name="generate")
        chat_btn.click(h.chat, [system, message, *chat_controls, *look], views, api_name="chat")

        def on_click(st, kk, evt: gr.EventData):
            return h.detail(st, evt._data.get("pos", 0), kk)

        heatmap.click(on_click, [state, k], [detail_md, detail_df, selected], api_name=False)
        gr.on([selected.submit, k.release], h.detail, [state, selected, k], [detail_md, detail_df, selected], api_name="token_detail")
        gr.on([metric.change, thresholds.submit], h.restyle, [state, metric, thresholds, selected], [heatmap, legend, hist], api_name="restyle")
        dl_btn.click(h.download, [state, fmt], dl_file, api_name="download")
        load_btn.click(h.load_model, [model_box], model_status, api_name="load_model")
        model_box.submit(h.load_model, [model_box], model_status, api_name=False)
    return demo
