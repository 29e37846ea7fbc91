"""A small stand-in for the Hugging Face Hub, for `socair serve --upstream` tests.

    python3 tests/python/fake_hub.py ROOT

Serves every folder ROOT/<namespace>/<name>/ as the repository `<namespace>/<name>` with one
commit (the SHA-1 of the repository id, as hex), on the two routes `huggingface_hub` 2.5.0 uses
to download (`HfApi.model_info`: `/api/models/{repo}[/revision/{rev}]` with `sha` and
`siblings`; `hf_hub_url`: `/{repo}/resolve/{rev}/{path}` with `ETag`/`X-Linked-Etag` the file's
SHA-256, `X-Repo-Commit` and `Content-Length`). Prints `http://127.0.0.1:PORT` on its first line
once it listens, then one line per request (`METHOD PATH STATUS`), and serves until killed.
Standard library only: tests/tests/serve.rs runs it with the Python CI has.
"""

import hashlib
import http.server
import json
import os
import sys
import urllib.parse


def repositories(root):
    repos = {}
    for ns in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, ns))):
            folder = os.path.join(root, ns, name)
            files = []
            for base, _dirs, names in os.walk(folder):
                for f in names:
                    rel = os.path.relpath(os.path.join(base, f), folder).replace(os.sep, "/")
                    files.append(rel)
            repos[f"{ns}/{name}"] = (folder, sorted(files))
    return repos


class Hub(http.server.BaseHTTPRequestHandler):
    repos = {}

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        print(f"{self.command} {self.path} {status}", flush=True)

    def route(self):
        path = urllib.parse.urlsplit(self.path).path
        parts = [urllib.parse.unquote(p) for p in path.split("/")[1:]]
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            repo = "/".join(parts[2:4])
            if repo not in self.repos:
                return self.answer(404, b'{"error":"Repository not found"}', [("X-Error-Code", "RepoNotFound")])
            commit = hashlib.sha1(repo.encode()).hexdigest()
            _folder, files = self.repos[repo]
            info = {"id": repo, "sha": commit, "siblings": [{"rfilename": f} for f in files]}
            return self.answer(200, json.dumps(info).encode(), [("Content-Type", "application/json")])
        if len(parts) >= 5 and parts[2] == "resolve":
            repo = "/".join(parts[:2])
            if repo not in self.repos:
                return self.answer(404, b"{}", [("X-Error-Code", "RepoNotFound")])
            folder, files = self.repos[repo]
            rel = "/".join(parts[4:])
            if rel not in files:
                return self.answer(404, b"{}", [("X-Error-Code", "EntryNotFound")])
            with open(os.path.join(folder, rel), "rb") as fh:
                data = fh.read()
            digest = hashlib.sha256(data).hexdigest()
            commit = hashlib.sha1(repo.encode()).hexdigest()
            return self.answer(
                200,
                data,
                [
                    ("ETag", f'"{digest}"'),
                    ("X-Linked-Etag", f'"{digest}"'),
                    ("X-Repo-Commit", commit),
                    ("Accept-Ranges", "bytes"),
                ],
            )
        return self.answer(404, b"{}")

    def do_GET(self):
        self.route()

    def do_HEAD(self):
        self.route()


def main():
    Hub.repos = repositories(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
