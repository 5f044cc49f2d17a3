"""Start the web app and the OpenAI-compatible API: `python app.py [--model M] [--host H] [--port P] [--share]`.

Settings also come from the environment (EXPLORER_MODEL, EXPLORER_HOST, EXPLORER_PORT, EXPLORER_API_KEY,
EXPLORER_PUBLIC=1, ...: every one in docs/settings.md, read by explorer/config.py). On Hugging Face Spaces
(SPACE_ID is set) it binds 0.0.0.0 so the Space can reach it, in public mode.
"""

import sys

from explorer.cli import main

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
