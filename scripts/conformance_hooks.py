"""schemathesis hooks for scripts/conformance, which runs against real Spin.

1. Every valid Idempotency-Key schemathesis generates is made unique before
   the request is sent: generated data reuses values across requests with
   different bodies, and a key bound to another request is rightly a 422,
   which the positive-data checks would count as a failure. Negative cases
   are sent as generated: the component rejects them before it reads the
   key's record.
2. A header value schemathesis draws as a non-string is sent as its JSON
   text, as an HTTP client would send it.
3. No header value leaves as bytes that are not UTF-8. Python's HTTP client
   sends a str header as Latin-1, so a character from U+0080 on becomes a
   byte that is not UTF-8, and Spin 4.0.2 answers such a request with a bare
   500 before the component runs (docs/decisions.md, "Errors"; tested once in
   tests/e2e/tests/on_spin/contract.rs). Each such character is replaced by
   a backslash, which is ASCII and, like the character it replaces, outside
   every pattern of the document: an invalid value stays invalid (a negative
   case stays negative), and an unconstrained header (X-Request-Id,
   If-None-Match) stays unconstrained. No check is switched off.
"""
import itertools
import json
import re
import uuid

import schemathesis

# The document's pattern for the header (openapi/petstore-v1.json).
VALID_KEY = re.compile(r'^("[!#-\[\]-~]{1,255}"|[!#-\[\]-~]{1,255})$')
RUN = uuid.uuid4().hex
COUNTER = itertools.count()


def ascii_on_the_wire(value):
    """The value with every character from U+0080 on replaced by a backslash."""
    return "".join(c if ord(c) < 0x80 else "\\" for c in value)


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    headers = case.headers or {}
    for name, value in list(headers.items()):
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        elif not isinstance(value, str):
            value = json.dumps(value)
        value = ascii_on_the_wire(value)
        headers[name] = value
    # Negative cases are rejected (400, 401, 413, 415), which binds no key;
    # and changing one would make schemathesis revalidate it as positive.
    if case.meta is not None and case.meta.generation.mode.is_negative:
        return
    for name, value in list(headers.items()):
        if name.lower() == "idempotency-key" and isinstance(value, str) and VALID_KEY.match(value):
            headers[name] = f"st-{RUN}-{next(COUNTER)}"
