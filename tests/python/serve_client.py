"""`socair serve` through the real Hugging Face client.

Run by tests/tests/serve.rs (or by hand) with huggingface_hub==2.5.0 installed:

    python3 tests/python/serve_client.py --endpoint http://127.0.0.1:PORT \
        --served org/tiny=PROMOTED_DIR --blocked org/evil=FAIL --review org/gpt2=accept \
        [--token TOKEN]

HF_ENDPOINT is set from --endpoint before huggingface_hub is imported (it reads it once, in
huggingface_hub/constants.py). For each --served REPO=DIR: `snapshot_download` of the repo
(a fresh cache) gives exactly DIR's files, byte for byte; `hf_hub_download` of each file gives
its bytes, again from the cache (no request: the server is asked with `local_files_only`), and
into a `local_dir` with `force_download` (no cache). For each --blocked/--review REPO=WORD:
both `hf_hub_download` and `snapshot_download` raise, and the exception's text holds socair's
message and WORD. Prints one line per check; exits 1 on the first failure.
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
