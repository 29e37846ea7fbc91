#!/usr/bin/env python3
"""An S3-protocol server on loopback for socair's object-storage tests: moto's server
(`python3 -m moto.server` serves the same application), with its writes serialised.

Why serialised: moto checks `If-None-Match: *` (PutObject and CompleteMultipartUpload answer
412 when the key exists), but the check and the write are two steps of a threaded server,
so two requests racing for one key can both pass the check (`scale_conditional_put_race.py`
shows it). S3 makes the claim atomic; the tests need a server that does too, so every
request that writes (PUT, POST, DELETE) runs under one lock here. Reads stay concurrent.

Two options for measurements (bench/remote.sh), off unless given:

  --delay-ms N      every request waits N milliseconds before it is answered: a round trip
                    to S3 in another building, on loopback. Requests in flight at once wait
                    side by side, as they would on a network.
  --direct-ranges   a GET of a byte range of an object is answered from moto's stored bytes
                    (moto's own answer to a HEAD of the object gives the status and headers),
                    instead of by moto, which reads the whole object for each range (about a
                    second per GiB, one request at a time per object: it reads under the
                    object's lock). Anything else, and any range moto would refuse, is moto's.

Usage: s3-test-server.py PORT [--delay-ms N] [--direct-ranges]   (binds 127.0.0.1 only)
"""
import argparse
import re
import threading
import time
import urllib.parse

from moto.core import DEFAULT_ACCOUNT_ID
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.s3.models import s3_backends
from werkzeug.serving import run_simple

RANGE = re.compile(r"bytes=(\d+)-(\d*)")


def direct_range(app, environ, start_response):
    """The answer to a path-style GET of bytes `a-b` of an object, or None to leave it to moto."""
    wanted = RANGE.fullmatch(environ.get("HTTP_RANGE", ""))
    if environ.get("REQUEST_METHOD") != "GET" or not wanted or environ.get("QUERY_STRING"):
        return None
    bucket, _, key = urllib.parse.unquote(environ.get("PATH_INFO", "")).lstrip("/").partition("/")
    if not key:
        return None
    head = dict(environ, REQUEST_METHOD="HEAD")
    del head["HTTP_RANGE"]
    answer = {}

    def capture(status, headers, exc_info=None):
        answer["status"], answer["headers"] = status, headers
        return lambda _: None

    for _ in app(head, capture):
        pass
    if not answer.get("status", "").startswith("200"):
        return None
    found = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].get_object(bucket, key)
    if found is None:
        return None
    size = found.size
    begin = int(wanted[1])
    end = min(int(wanted[2]), size - 1) if wanted[2] else size - 1
    if begin > end:
        return None
    with found.lock:
        found._value_buffer.seek(begin)
        body = found._value_buffer.read(end - begin + 1)
    headers = [
        (k, v)
        for k, v in answer["headers"]
        if k.lower() not in ("content-length", "content-range") and not k.lower().startswith("x-amz-checksum-")
    ]
    headers += [("Content-Range", f"bytes {begin}-{end}/{size}"), ("Content-Length", str(len(body)))]
    start_response("206 Partial Content", headers)
    return [body]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--direct-ranges", action="store_true")
    args = parser.parse_args()
    app = DomainDispatcherApplication(create_backend_app)
    writes = threading.Lock()

    def serialised(environ, start_response):
        if args.delay_ms > 0:
            time.sleep(args.delay_ms / 1000)
        if environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE"):
            with writes:
                # The whole body is produced under the lock: moto does its work while it is.
                return list(app(environ, start_response))
        if args.direct_ranges:
            answer = direct_range(app, environ, start_response)
            if answer is not None:
                return answer
        return app(environ, start_response)

    run_simple("127.0.0.1", args.port, serialised, threaded=True)


if __name__ == "__main__":
    main()
