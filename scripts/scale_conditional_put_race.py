#!/usr/bin/env python3
"""Checks what an S3-protocol server does with `If-None-Match: *`: sequentially (the second
writer must get 412), and with WRITERS threads racing for each of ROUNDS fresh keys (exactly
one may win each). Prints the counts; exits 1 when a key was won twice.

Usage: scale_conditional_put_race.py ENDPOINT [ROUNDS] [WRITERS]   (standard library only:
requests are signed with SigV4 here, with the moto test credentials)
"""
import datetime
import hashlib
import hmac
import sys
import threading
import urllib.error
import urllib.request

KEY_ID, SECRET, REGION = "testing", "testing", "us-east-1"


def sign(method, url, body, headers):
    now = datetime.datetime.now(datetime.timezone.utc)
    amz = now.strftime("%Y%m%dT%H%M%SZ")
    day = now.strftime("%Y%m%d")
    parsed = urllib.parse.urlparse(url)
    payload = hashlib.sha256(body).hexdigest()
    headers = dict(headers, host=parsed.netloc, **{"x-amz-date": amz, "x-amz-content-sha256": payload})
    names = sorted(k.lower() for k in headers)
    canonical_headers = "".join(f"{k}:{headers[k] if k in headers else headers[k.title()]}\n" for k in names)
    signed = ";".join(names)
    request = "\n".join([method, parsed.path or "/", "", canonical_headers, signed, payload])
    scope = f"{day}/{REGION}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz, scope, hashlib.sha256(request.encode()).hexdigest()])
    k = ("AWS4" + SECRET).encode()
    for part in (day, REGION, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = f"AWS4-HMAC-SHA256 Credential={KEY_ID}/{scope}, SignedHeaders={signed}, Signature={sig}"
    return headers


def put(url, body, create):
    headers = {"if-none-match": "*"} if create else {}
    req = urllib.request.Request(url, data=body, method="PUT", headers=sign("PUT", url, body, headers))
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main():
    endpoint = sys.argv[1].rstrip("/")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    writers = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    bucket = f"{endpoint}/race-{datetime.datetime.now().strftime('%H%M%S%f')}"
    put(bucket, b"", False)
    first = put(f"{bucket}/once", b"a", True)
    second = put(f"{bucket}/once", b"b", True)
    print(f"sequential: first {first}, second {second}")
    doubles = 0
    for r in range(rounds):
        wins = []
        def claim(i):
            if put(f"{bucket}/key-{r}", str(i).encode(), True) == 200:
                wins.append(i)
        threads = [threading.Thread(target=claim, args=(i,)) for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        doubles += len(wins) > 1
    print(f"raced: {rounds} keys, {writers} writers each: {doubles} keys won by more than one writer")
    sys.exit(1 if doubles or second != 412 else 0)


if __name__ == "__main__":
    import urllib.parse
    main()
