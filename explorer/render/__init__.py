"""TokenScores -> HTML heatmap, plotly figures, pandas tables. No torch, no gradio."""
