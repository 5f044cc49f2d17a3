"""Start the web app and the OpenAI-compatible API: `python app.py [--model M] [--host H] [--port P] [--share]`.

Settings also come from the environment: EXPLORER_MODEL, EXPLORER_DEVICE, EXPLORER_DTYPE,
EXPLORER_HOST, EXPLORER_PORT, EXPLORER_SHARE=1, EXPLORER_API_KEY, EXPLORER_PUBLIC=1 (or --public).
On Hugging Face Spaces (SPACE_ID is set) it binds 0.0.0.0 so the Space can reach it, in public mode.
"""

import os
import sys

from explorer.cli import main

if __name__ == "__main__":
    if os.environ.get("SPACE_ID"):
        os.environ.setdefault("EXPLORER_HOST", "0.0.0.0")
    sys.exit(main(["serve", *sys.argv[1:]]))
