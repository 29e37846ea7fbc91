#!/usr/bin/env python3
"""An S3-protocol server on loopback for socair's object-storage tests: moto's server
(`python3 -m moto.server` serves the same application), with its writes serialised.

Why serialised: moto checks `If-None-Match: *` (PutObject and CompleteMultipartUpload answer
412 when the key exists), but the check and the write are two steps of a threaded server,
so two requests racing for one key can both pass the check (`scale_conditional_put_race.py`
shows it). S3 makes the claim atomic; the tests need a server that does too, so every
request that writes (PUT, POST, DELETE) runs under one lock here. Reads stay concurrent.

Usage: s3-test-server.py PORT   (binds 127.0.0.1 only)
"""
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


def main() -> None:
    port = int(sys.argv[1])
    app = DomainDispatcherApplication(create_backend_app)
    writes = threading.Lock()

    def serialised(environ, start_response):
        if environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE"):
            with writes:
                # The whole body is produced under the lock: moto does its work while it is.
                return list(app(environ, start_response))
        return app(environ, start_response)

    run_simple("127.0.0.1", port, serialised, threaded=True)


if __name__ == "__main__":
    main()
