#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 300), one after another, on the committed
# corpus (fuzz/corpus/<target>, seeded from fixtures/), keeping what each finds:
#   crashes  -> fuzz/artifacts/<target>/ (copy them to fuzz/regressions/<format>/ once fixed;
#               `cargo test` replays every file there and in fuzz/corpus/ on every CI run)
#   coverage -> fuzz/corpus/<target>/ (minimize with `cargo fuzz cmin <target>` before committing)
#
#   fuzz/run-all.sh [SECONDS]        needs nightly and cargo-fuzz (cargo install cargo-fuzz)
set -euo pipefail
seconds=${1:-300}
cd "$(dirname "$0")"
for target in safetensors_header safetensors_writer torch_zip pickle_machine torch_checkpoint torch_legacy gguf_reader onnx_reader numpy_reader documents archive_reader chat_template tensorflow_readers hdf5_reader hdf5_filters hdf5_codecs skops_schema keras_config keras_archive sentencepiece joblib_reader native_readers paddle_reader zip_hints container_readers catboost_reader coreml_reader xml_reader yaml_reader torchscript_code crfsuite_reader ggml_legacy executorch_reader torch7_reader ggml_dequant; do
  mkdir -p "corpus/$target"
  dict=()
  [[ $target == safetensors_* ]] && dict=(-dict=safetensors.dict)
  echo "== $target for ${seconds}s"
  cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=3072 "${dict[@]}" 2>&1 | grep -E "^Done|SUMMARY|Test unit written" || true
done
