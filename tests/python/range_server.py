"""A static web server with byte ranges, as nginx, S3 and most static hosts answer them.

    python3 tests/python/range_server.py DIR

Serves DIR's files on 127.0.0.1 (a free port, printed on the first line): `HEAD` and `GET`
with `Content-Length`, and `Range: bytes=A-B` answered `206` with `Content-Range` (Python's
own `http.server` ignores ranges, which socair's reader of remote objects asks for).
Standard library only; tests/tests/signed_reference.rs serves a feed with it.
"""

import http.server
import os
import re
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    root = "."

    def log_message(self, fmt, *args):
        pass

    def send(self, head_only):
        rel = self.path.split("?", 1)[0].lstrip("/")
        path = os.path.realpath(os.path.join(self.root, rel))
        if not path.startswith(os.path.realpath(self.root) + os.sep) or not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(path, "rb") as fh:
            data = fh.read()
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if m:
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
            body = data[start : end + 1]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        else:
            body = data
            self.send_response(200)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def do_GET(self):
        self.send(False)

    def do_HEAD(self):
        self.send(True)


def main():
    Handler.root = sys.argv[1]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
