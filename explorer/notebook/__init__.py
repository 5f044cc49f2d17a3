"""What the Python API shows outside the web page: pandas tables of the results (`frames.py`) and the Score view as
one self-contained HTML page or notebook output (`page.py`).

Pure functions of results, as explorer/export and explorer/render are: no torch, no gradio, no model. The result
types' `to_pandas` / `to_html` methods are one-line calls of these.
"""
