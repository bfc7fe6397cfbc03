"""Drives the component through a Python client generated from its served
OpenAPI document (openapi-python-client): every operation, and every status
the document declares that the component can be made to produce, must parse
into the generated typed model without an exception.

Usage (scripts/generated-client runs it):
  client_check.py API_KEY OK_URL UNAVAILABLE_URL MISCONFIGURED_URL HELD_URL
- OK_URL: a healthy deployment (real Spin);
- UNAVAILABLE_URL: one whose key-value store cannot be opened (real Spin);
- MISCONFIGURED_URL: one whose api_key variable is unusable (real Spin);
- HELD_URL: the test host with its 8th key-value call failing: a keyed
  create's commit, which holds the key (409) until the lease ends.
"""
import sys
import uuid

import httpx
from petstore_client import AuthenticatedClient, Client
from petstore_client.api.default import get_health, get_open_api
from petstore_client.api.pets import create_pet, get_pet, list_pets
from petstore_client.models import Error, GetHealthResponse200, NewPet, Pet, PetStatus

key, ok_url, unavailable_url, misconfigured_url, held_url = sys.argv[1:6]
results = []


def check(what, response, status, model, code=None):
    """The response has this status and parsed into `model` (None: no body)."""
    parsed = response.parsed
    good = int(response.status_code) == status and (
        parsed is None if model is None else isinstance(parsed, model)
    )
    if good and code is not None:
        good = parsed.code == code and parsed.status == status
    if good and model is list:
        good = all(isinstance(p, Pet) for p in parsed)
    results.append((what, status, good))
    mark = "ok  " if good else "FAIL"
    shown = type(parsed).__name__ if not isinstance(parsed, list) else f"list[{len(parsed)}]"
    print(f"{mark} {status} {what}: parsed as {shown}" + (f" code={parsed.code}" if isinstance(parsed, Error) else ""))
    return parsed


def raw_error(what, client, method, path, status, code, **kwargs):
    """A status no generated operation can produce (a method or media type
    the document does not offer): sent with the client's own httpx client,
    the body parsed with the generated Error model."""
    r = client.get_httpx_client().request(method, path, **kwargs)
    try:
        parsed = Error.from_dict(r.json())
        good = r.status_code == status and parsed.code == code
    except Exception as e:  # noqa: BLE001 - any exception is the failure we look for
        print(f"FAIL {status} {what}: {e!r}")
        good = False
    results.append((what, status, good))
    print(f"{'ok  ' if good else 'FAIL'} {status} {what}: parsed as Error code={code}")


def v1(url):
    return f"{url}/v1"


authed = AuthenticatedClient(base_url=v1(ok_url), token=key, raise_on_unexpected_status=True)
public = Client(base_url=v1(ok_url), raise_on_unexpected_status=True)
wrong = AuthenticatedClient(base_url=v1(ok_url), token="wrong-key", raise_on_unexpected_status=True)

# Public operations.
check("getOpenApi", get_open_api.sync_detailed(client=public), 200, object)
check("getHealth", get_health.sync_detailed(client=public), 200, GetHealthResponse200)

# createPet: 201, replay 201, 400 (body, header), 401, 413, 422.
key1 = f"client-{uuid.uuid4()}"
rex = NewPet(name="Rex", category_id=7, status=PetStatus.SOLD)
pet = check("createPet", create_pet.sync_detailed(client=authed, body=rex, idempotency_key=key1), 201, Pet)
replay = create_pet.sync_detailed(client=authed, body=rex, idempotency_key=key1)
check("createPet replayed", replay, 201, Pet)
assert replay.headers.get("idempotent-replayed") == "true" and replay.parsed.id == pet.id
check("createPet invalid body", create_pet.sync_detailed(client=authed, body=NewPet(name=" ", category_id=1)), 400, Error, "invalid_body")
check("createPet invalid Idempotency-Key", create_pet.sync_detailed(client=authed, body=rex, idempotency_key="a b"), 400, Error, "invalid_header")
check("createPet wrong key", create_pet.sync_detailed(client=wrong, body=rex), 401, Error, "unauthorized")
check("createPet too large", create_pet.sync_detailed(client=authed, body=NewPet(name="x" * 17000, category_id=1)), 413, Error, "payload_too_large")
other = NewPet(name="Max", category_id=7)
check("createPet key reused", create_pet.sync_detailed(client=authed, body=other, idempotency_key=key1), 422, Error, "idempotency_key_reused")

# listPets: 200, 304, 400, 401.
page = list_pets.sync_detailed(client=authed, limit=5)
check("listPets", page, 200, list)
tag = page.headers["etag"]
check("listPets If-None-Match", list_pets.sync_detailed(client=authed, limit=5, if_none_match=tag), 304, None)
check("listPets status filter", list_pets.sync_detailed(client=authed, status=PetStatus.SOLD), 200, list)
check("listPets bad limit", list_pets.sync_detailed(client=authed, limit=0), 400, Error, "invalid_parameter")
check("listPets bad cursor", list_pets.sync_detailed(client=authed, cursor="nope"), 400, Error, "invalid_parameter")
check("listPets wrong key", list_pets.sync_detailed(client=wrong), 401, Error, "unauthorized")

# getPet: 200, 304, 401, 404.
one = get_pet.sync_detailed(pet.id, client=authed)
check("getPet", one, 200, Pet)
check("getPet If-None-Match", get_pet.sync_detailed(pet.id, client=authed, if_none_match=one.headers["etag"]), 304, None)
check("getPet unknown id", get_pet.sync_detailed(10**6, client=authed), 404, Error, "not_found")
check("getPet wrong key", get_pet.sync_detailed(pet.id, client=wrong), 401, Error, "unauthorized")

# Statuses no operation of the document can produce: 405, 415.
raw_error("DELETE /pets/1", authed, "DELETE", f"/pets/{pet.id}", 405, "method_not_allowed")
raw_error("POST text/plain", authed, "POST", "/pets", 415, "unsupported_media_type",
          content=b"Rex", headers={"Content-Type": "text/plain"})

# The store cannot be opened: 503 for every operation that reads or writes it.
unavailable = AuthenticatedClient(base_url=v1(unavailable_url), token=key, raise_on_unexpected_status=True)
check("createPet store fails", create_pet.sync_detailed(client=unavailable, body=rex, idempotency_key=key1), 503, Error, "store_unavailable")
check("getPet store fails", get_pet.sync_detailed(1, client=unavailable), 503, Error, "store_unavailable")
check("listPets store fails", list_pets.sync_detailed(client=unavailable), 503, Error, "store_unavailable")
check("getHealth store fails", get_health.sync_detailed(client=Client(base_url=v1(unavailable_url))), 503, Error, "store_unavailable")

# The held deployment, in call order: 503 (the commit fails), then 409 (the
# key is held for the lease).
held = AuthenticatedClient(base_url=v1(held_url), token=key, raise_on_unexpected_status=True)
key2 = f"client-{uuid.uuid4()}"
check("createPet store fails at commit", create_pet.sync_detailed(client=held, body=rex, idempotency_key=key2), 503, Error, "store_unavailable")
check("createPet key in use", create_pet.sync_detailed(client=held, body=rex, idempotency_key=key2), 409, Error, "idempotency_key_in_use")

# The misconfigured deployment: 500 for every authenticated operation, 503
# from the probe.
broken = AuthenticatedClient(base_url=v1(misconfigured_url), token=key, raise_on_unexpected_status=True)
check("listPets misconfigured", list_pets.sync_detailed(client=broken), 500, Error, "internal_error")
check("getPet misconfigured", get_pet.sync_detailed(1, client=broken), 500, Error, "internal_error")
check("createPet misconfigured", create_pet.sync_detailed(client=broken, body=rex), 500, Error, "internal_error")
check("getHealth misconfigured", get_health.sync_detailed(client=Client(base_url=v1(misconfigured_url))), 503, Error, "misconfigured")

# A code this release does not know parses too (the set is open).
future = Error.from_dict({"code": "added_in_2031", "message": "m", "status": 418})
results.append(("unknown code", 418, future.code == "added_in_2031"))

statuses = sorted({s for _, s, good in results if good})
failed = [(w, s) for w, s, good in results if not good]
print(f"generated client: {len(results) - len(failed)} of {len(results)} checks passed; statuses parsed: {statuses}")
if failed:
    print(f"failed: {failed}")
    sys.exit(1)
