"""schemathesis hooks for scripts/conformance.

Every valid Idempotency-Key schemathesis generates is made unique before the
request is sent: generated data reuses values across requests with different
bodies, and a key bound to another request is rightly a 422, which the
positive-data checks would count as a failure. Negative cases are sent as
generated: the component rejects them before it reads the key's record.
A header value schemathesis draws as a non-string is sent as its JSON text.
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


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # The stateful phase's negative mutations may draw a number for a string
    # header (X-Request-Id), which no HTTP client can send; send its text,
    # as a client would (the component replaces an unusable id anyway).
    headers = case.headers or {}
    for name, value in list(headers.items()):
        if not isinstance(value, (str, bytes)):
            headers[name] = json.dumps(value)
    # Negative cases are rejected (400, 401, 413, 415), which binds no key;
    # and changing one would make schemathesis revalidate it as positive.
    if case.meta is not None and case.meta.generation.mode.is_negative:
        return
    for name, value in list(headers.items()):
        if name.lower() == "idempotency-key" and isinstance(value, str) and VALID_KEY.match(value):
            headers[name] = f"st-{RUN}-{next(COUNTER)}"
