"""The Python API and what it shows outside the web page: `lm.py` (`explorer.load(...)` -> `LM`, whose methods call
the engine functions the tabs and the CLI call; no torch until a model loads), pandas tables of the results
(`frames.py`), the Score view as one self-contained HTML page or notebook output (`page.py`), the tool tabs' views as
HTML files (`views.py`), a folder of them for a static host (`site.py`) and any file that holds a view read back
(`files.py`); `shows.py` registers the result types' notebook methods (explorer/results/shown.py); the registered
views of a result (`registry.py`, one `view.View` record per view in a module of its own, `surprisal.py`), from which
the page's tab, its link, `LM`'s method and the site's page are made.

All but `lm.py` are pure functions of results, as explorer/export and explorer/render are: no torch, no gradio, no
model. The result types' `to_pandas` / `to_html` methods call these through the registry, importing nothing here.
"""

from explorer.notebook import shows as shows  # registers the result types' notebook methods (explorer/results/shown.py)
