#!/bin/sh
# `make wllama`: refresh explorer/static/wllama/ from npm's published @wllama/wllama (the version pinned below):
# the ESM build, its two WebAssembly builds (single- and multi-threaded), its MIT licence and a SHA256SUMS list.
# Needs npm (only here: `make run` and `make test` use the files kept in the repository). The live page
# (explorer/notebook/live.py) runs the model in the visitor's browser with them.
set -eu
VERSION=2.4.0  # 3.x dropped getLogits, which the live page scores with
DEST=explorer/static/wllama
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@wllama/wllama@$VERSION" >/dev/null && tar xzf wllama-wllama-$VERSION.tgz)
rm -rf "$DEST" && mkdir -p "$DEST/single-thread" "$DEST/multi-thread"
cp "$work/package/esm/index.js" "$DEST/index.js"
cp "$work/package/esm/single-thread/wllama.wasm" "$DEST/single-thread/wllama.wasm"
cp "$work/package/esm/multi-thread/wllama.wasm" "$DEST/multi-thread/wllama.wasm"
cp "$work/package/LICENCE" "$DEST/LICENCE"
echo "$VERSION" >"$DEST/VERSION"
(cd "$DEST" && sha256sum index.js single-thread/wllama.wasm multi-thread/wllama.wasm LICENCE >SHA256SUMS)
echo "wllama $VERSION in $DEST:" && cat "$DEST/SHA256SUMS"
