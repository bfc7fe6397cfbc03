"""A real browser calls the API from another origin (CORS), end to end.

Headless Chromium (Debian's chromium and chromium-driver), driven with
selenium, loads tests/browser/page.html from a loopback origin of its own and
runs its `fetch` calls against the API served by real `spin up` on another
port. From the allowed origin (in the deployment's cors_origins) it lists
pets, reads the Link header and creates a pet; from another origin the
browser itself blocks the call.

Usage (scripts/browser-check runs it): browser_check.py API_URL API_KEY ALLOWED_PORT OTHER_PORT
"""
import functools
import http.server
import sys
import threading

import headless_chromium

api, key, allowed_port, other_port = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
page_dir = "tests/browser"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(port):
    """A static server for the page on 127.0.0.1:port (its own origin)."""
    handler = functools.partial(Quiet, directory=page_dir)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_page(driver, port):
    driver.get(f"http://127.0.0.1:{port}/page.html")
    driver.set_script_timeout(20)
    return driver.execute_async_script(
        "run(arguments[0], arguments[1]).then(arguments[arguments.length - 1]);", api, key
    )


failures = []


def expect(what, condition, detail):
    print(f"{'ok  ' if condition else 'FAIL'} {what}: {detail}")
    if not condition:
        failures.append(what)


servers = [serve(allowed_port), serve(other_port)]
driver = headless_chromium.start()
try:
    print(f"browser: {driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}")
    allowed = run_page(driver, allowed_port)
    expect("allowed origin lists pets", allowed.get("listStatus") == 200 and allowed.get("listIds") == [1, 2], allowed)
    expect("allowed origin reads Link", allowed.get("listLink") == '</v1/pets?limit=2&cursor=c3>; rel="next"', allowed.get("listLink"))
    expect("allowed origin reads X-Request-Id", bool(allowed.get("listRequestId")), allowed.get("listRequestId"))
    expect(
        "allowed origin creates a pet (preflighted POST)",
        allowed.get("createStatus") == 201 and allowed.get("createLocation") == "/v1/pets/4"
        and allowed.get("createdName") == "From a browser",
        allowed,
    )
    other = run_page(driver, other_port)
    expect("other origin is blocked by the browser", other.get("error", "").startswith("TypeError") and "listStatus" not in other, other)
finally:
    driver.quit()
    for s in servers:
        s.shutdown()

print(f"browser: {5 - len(failures)} of 5 checks passed")
sys.exit(1 if failures else 0)
