"""Schemathesis hooks for the schema fuzzing of test/e2e/schema-fuzz.test.ts.

Two values of the documents are only valid as the platform issues them, which no schema can say:
page tokens and cursors (opaque, bound to their listing), and Idempotency-Key (bound to its first
request: the fuzzer's shrunk values repeat across different bodies). A well-formed one is
replaced by what a real client would send (no token: the first page; a fresh key); a malformed
one is left alone, so the API's refusal of it is still checked.
"""

import re
import uuid

import schemathesis

IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")
OPAQUE = re.compile(r"[A-Za-z0-9_-]*")


@schemathesis.hook
def map_headers(context, headers):
    if headers and isinstance(headers.get("Idempotency-Key"), str) and IDEMPOTENCY_KEY.fullmatch(headers["Idempotency-Key"]):
        headers["Idempotency-Key"] = str(uuid.uuid4())
    return headers


@schemathesis.hook
def map_query(context, query):
    if query:
        for name in ("page_token", "cursor"):
            value = query.get(name)
            if isinstance(value, str) and len(value) <= 2048 and OPAQUE.fullmatch(value):
                del query[name]
    return query


# JSON Lines bodies (importEvaluationCases) are text: sent as text/plain is.
for media_type in ("application/jsonl", "application/x-ndjson", "application/json-lines"):
    schemathesis.serializer.alias(media_type, "text/plain")
