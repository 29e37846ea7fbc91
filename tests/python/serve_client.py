"""`socair serve` through the real Hugging Face client.

Run by tests/tests/serve.rs (or by hand) with huggingface_hub==2.5.0 installed:

    python3 tests/python/serve_client.py --endpoint http://127.0.0.1:PORT \
        --served org/tiny=PROMOTED_DIR --blocked org/evil=FAIL --review org/gpt2=accept \
        [--token TOKEN] [--transformers org/tiny=DIR]

HF_ENDPOINT is set from --endpoint before huggingface_hub is imported (it reads it once, in
huggingface_hub/constants.py). For each --served REPO=DIR: `snapshot_download` of the repo
(a fresh cache) gives exactly DIR's files, byte for byte; `hf_hub_download` of each file gives
its bytes, again from the cache (no request: the server is asked with `local_files_only`), and
into a `local_dir` with `force_download` (no cache). For each --blocked/--review REPO=WORD:
both `hf_hub_download` and `snapshot_download` raise, and the exception's text holds socair's
message and WORD. For each --transformers REPO=DIR (transformers installed): `AutoConfig` of
the repo equals DIR's config.json, and when torch is installed too, `AutoModel` loads the repo
and every tensor of its state dict equals the one DIR's safetensors files hold (under the
name transformers gives it); for each --blocked REPO, `AutoConfig` raises with socair's
message. Prints one line per check; exits 1 on the first failure.
"""

import argparse
import os
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--served", action="append", default=[])
    ap.add_argument("--blocked", action="append", default=[])
    ap.add_argument("--review", action="append", default=[])
    ap.add_argument("--token", default=None)
    ap.add_argument("--transformers", action="append", default=[])
    args = ap.parse_args()

    os.environ["HF_ENDPOINT"] = args.endpoint
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.pop("HF_HUB_OFFLINE", None)
    os.environ.pop("HF_TOKEN", None)
    import huggingface_hub
    from huggingface_hub import hf_hub_download, snapshot_download

    print(f"huggingface_hub {huggingface_hub.__version__}")
    work = tempfile.mkdtemp(prefix="socair-serve-client-")
    token = args.token if args.token else False

    for spec in args.served:
        repo, expected_dir = spec.split("=", 1)
        expected = {}
        for root, _dirs, files in os.walk(expected_dir):
            for f in files:
                full = os.path.join(root, f)
                rel = os.path.relpath(full, expected_dir).replace(os.sep, "/")
                with open(full, "rb") as fh:
                    expected[rel] = fh.read()
        cache = os.path.join(work, "cache-" + repo.replace("/", "--"))
        snap = snapshot_download(repo, cache_dir=cache, token=token)
        got = {}
        for root, _dirs, files in os.walk(snap):
            for f in files:
                full = os.path.join(root, f)
                rel = os.path.relpath(full, snap).replace(os.sep, "/")
                with open(full, "rb") as fh:
                    got[rel] = fh.read()
        if got != expected:
            print(f"FAIL snapshot_download {repo}: files {sorted(got)} != {sorted(expected)} or bytes differ")
            return 1
        print(f"ok snapshot_download {repo}: {len(got)} files equal the store's")
        for rel, data in sorted(expected.items()):
            path = hf_hub_download(repo, rel, cache_dir=cache, token=token)
            with open(path, "rb") as fh:
                if fh.read() != data:
                    print(f"FAIL hf_hub_download {repo} {rel}: bytes differ")
                    return 1
            cached = hf_hub_download(repo, rel, cache_dir=cache, token=token, local_files_only=True)
            if cached != path:
                print(f"FAIL hf_hub_download {repo} {rel} local_files_only: {cached} != {path}")
                return 1
            local_dir = os.path.join(work, "local-" + repo.replace("/", "--"))
            path = hf_hub_download(repo, rel, local_dir=local_dir, force_download=True, token=token)
            with open(path, "rb") as fh:
                if fh.read() != data:
                    print(f"FAIL hf_hub_download {repo} {rel} into local_dir: bytes differ")
                    return 1
        print(f"ok hf_hub_download {repo}: every file, from the server, from the cache and into a local_dir")

    for spec in args.blocked + args.review:
        repo, word = spec.split("=", 1)
        for name, call in [
            ("hf_hub_download", lambda: hf_hub_download(repo, "config.json", cache_dir=os.path.join(work, "refused"), token=token)),
            ("snapshot_download", lambda: snapshot_download(repo, cache_dir=os.path.join(work, "refused"), token=token)),
        ]:
            try:
                call()
            except Exception as e:  # the client's own exception type is what a user sees
                text = f"{type(e).__name__}: {e}"
                if "socair airlock" not in text or word not in text:
                    print(f"FAIL {name} {repo}: the exception lacks socair's message or {word!r}: {text}")
                    return 1
                print(f"ok {name} {repo} refused: {type(e).__name__}")
                print("   " + text.replace("\n", " | ")[:600])
                continue
            print(f"FAIL {name} {repo}: downloaded, should be refused")
            return 1
    if args.transformers:
        return through_transformers(args, work, token)
    return 0


def through_transformers(args, work, token) -> int:
    """AutoConfig (and AutoModel, with torch) through the endpoint, as a user's code loads."""
    import json

    import transformers
    from transformers import AutoConfig

    print(f"transformers {transformers.__version__}")
    cache = os.path.join(work, "transformers-cache")
    for spec in args.transformers:
        repo, expected_dir = spec.split("=", 1)
        with open(os.path.join(expected_dir, "config.json"), encoding="utf-8") as fh:
            want = json.load(fh)
        config = AutoConfig.from_pretrained(repo, cache_dir=cache, token=token)
        got = config.to_dict()
        # transformers writes its own version into every config it holds.
        differ = [k for k in want if k in got and k != "transformers_version" and got[k] != want[k]]
        if got.get("model_type") != want.get("model_type") or differ:
            print(f"FAIL AutoConfig {repo}: {got.get('model_type')!r}, differs in {differ}")
            return 1
        print(f"ok AutoConfig {repo}: {config.model_type}, {len(want)} keys as the store's")
        try:
            import torch  # noqa: F401
        except ImportError:
            print(f"skip AutoModel {repo}: torch is not installed")
            continue
        from safetensors.torch import load_file
        from transformers import AutoModel

        model = AutoModel.from_pretrained(repo, cache_dir=cache, token=token)
        state = model.state_dict()
        stored = {}
        for f in sorted(os.listdir(expected_dir)):
            if f.endswith(".safetensors"):
                stored.update(load_file(os.path.join(expected_dir, f)))
        compared = 0
        for name, tensor in stored.items():
            key = next((k for k in (name, name.split(".", 1)[-1]) if k in state), None)
            if key is None:
                continue
            if not torch.equal(state[key], tensor):
                print(f"FAIL AutoModel {repo}: {key} differs from the store's")
                return 1
            compared += 1
        if compared == 0:
            print(f"FAIL AutoModel {repo}: no tensor of the store's files is in the model")
            return 1
        print(f"ok AutoModel {repo}: {type(model).__name__}, {compared} tensors equal the store's")
    for spec in args.blocked:
        repo, word = spec.split("=", 1)
        try:
            AutoConfig.from_pretrained(repo, cache_dir=os.path.join(work, "refused-tf"), token=token)
        except Exception as e:  # transformers' own exception is what a user sees
            text = f"{type(e).__name__}: {e}"
            if "socair airlock" not in text or word not in text:
                print(f"FAIL AutoConfig {repo}: the exception lacks socair's message or {word!r}: {text}")
                return 1
            print(f"ok AutoConfig {repo} refused: {type(e).__name__}")
            continue
        print(f"FAIL AutoConfig {repo}: loaded, should be refused")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
