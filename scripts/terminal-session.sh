#!/usr/bin/env bash
# Writes docs/terminal.md: a session on committed fixtures as a person sees it on a terminal.
# Every command runs under a pseudo-terminal (`script`), so what is captured is what socair
# prints for a person, not the JSON it prints to a pipe.
#
#   cargo build --release --workspace && scripts/terminal-session.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${SOCAIR_BIN:-target/release/socair}")  # SOCAIR_BIN=target/debug/socair uses a debug build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=docs/terminal.md

# Runs one command line (in $work, with socair on PATH) under a pseudo-terminal and appends
# the prompt and what the terminal showed, without the progress bar's redraws (each ends in
# an erase-line escape, ESC [2K).
show() {
  local line=$1
  {
    echo
    echo '```console'
    echo "\$ $line"
    (cd "$work" && PATH="$(dirname "$bin"):$PATH" SOCAIR_STORE="$work/airlock" \
      script -q -e -c "$line" /dev/null 2>&1 | tr -d '\r' | perl -pe 's/[^\n]*?\e\[2K//g' \
      | sed "s#$work#~#g; s#$PWD/#./#g") || true
    echo '```'
  } >>"$out"
}

cp fixtures/torch/malicious/pickle-os-system.pt "$work/suspicious.pt"
cp fixtures/torch/legit/state-dict.pt "$work/pytorch_model.bin"
cp fixtures/torch/malicious/argparse-namespace.pt "$work/checkpoint.pt"
cp -r fixtures/safetensors/tiny-bert "$work/tiny-bert"
mkdir -p "$work/models"
cp fixtures/torch/malicious/pickle-os-system.pt "$work/models/suspicious.pt"
cp fixtures/torch/malicious/argparse-namespace.pt "$work/models/checkpoint.pt"
cp -r fixtures/safetensors/tiny-bert "$work/models/tiny-bert"
cp -r fixtures/onnx/external/model-dir "$work/models/onnx-external"
echo "# our models" >"$work/models/README.md"
cp -a fixtures/hfcache/hub "$work/hub"

cat >"$out" <<'EOF'
# A session on a terminal

What a person sees, run on committed fixtures under a pseudo-terminal by
`scripts/terminal-session.sh` (which rewrites this page). On a terminal every command says the
verdict first, in plain words, then each row with what it means, then the next step; to a pipe
or with `--json` the same commands print the JSON documents of docs/documents.md.

## Scanning
EOF
show "socair scan suspicious.pt"
show "socair scan checkpoint.pt"
show "socair scan pytorch_model.bin"
show "socair scan tiny-bert"
show "socair tensors tiny-bert"

echo -e "\n## Many models at once\n\nOne line per artifact, its verdict first, in a fixed order; \`--each\` finds model directories and the files a reader claims (not \`README.md\`). A Hugging Face cache's snapshots are read through their links, offline; \`--format sarif\` and \`socair bom\` write documents, with the summary on standard error." >>"$out"
show "socair scan --each models"
show "HF_HUB_CACHE=hub socair scan hf://socair-fixtures/tiny-bert-revs@v1"
show "socair scan --each models hub --format sarif --out socair.sarif"
show "socair bom tiny-bert --out tiny-bert.cdx.json"

echo -e "\n## Through the airlock" >>"$out"
show "socair keygen --out scanner.key && socair keygen --out reviewer.key"
show "socair airlock init && socair airlock trust scanner.key.pub --role scan && socair airlock trust reviewer.key.pub --role accept"
show "socair airlock pull checkpoint.pt"
sha=$(cd "$work" && SOCAIR_STORE="$work/airlock" "$bin" airlock ls --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["sha256"][:12])')
show "socair airlock scan $sha --key scanner.key"
show "socair airlock review add argparse.Namespace --reason 'the training script arguments' --key reviewer.key"
show "socair airlock scan $sha --key scanner.key"
show "socair airlock accept $sha --row 'Format and structure' --reason 'grammar PASS, argparse reviewed' --key reviewer.key"
show "socair airlock promote $sha"
show "socair airlock ls"
show "socair verify airlock/promoted/*/attestation.dsse.json airlock/promoted/*/checkpoint.pt"
show "socair airlock log"
echo "wrote $out"
