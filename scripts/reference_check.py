"""The API reference page in a real browser, on real `spin up`.

Headless Chromium (Debian's chromium and chromium-driver), driven with
selenium, opens BASE/ (which redirects to /docs) as a developer would, and
checks: the page loads with no console error and no request leaving
127.0.0.1; it shows the three operations, getPet marked deprecated; with the
key entered once (Authorize), a create sent from the page answers 201, the
list shown afterwards holds the pet, getPet shows it, and the API's access log
(Spin's log file) has that create, never the key; with a wrong key the page
shows the 401 Error body. A screenshot goes to SCREENSHOT.

Usage (scripts/browser-check runs it): reference_check.py BASE KEY ACCESS_LOG SCREENSHOT
"""
import json
import os
import sys
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

import headless_chromium

base, key, access_log, screenshot = sys.argv[1:5]
failures = []
checks = 0


def expect(what, condition, detail=""):
    global checks
    checks += 1
    print(f"{'ok  ' if condition else 'FAIL'} {what}: {detail}")
    if not condition:
        failures.append(what)


def creates_logged():
    """The access log's successful creates (Spin writes each line after its answer)."""
    if not os.path.exists(access_log):
        return [], ""
    with open(access_log) as f:
        text = f.read()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [l for l in lines if l["method"] == "POST" and l["status"] == 201], text


def operation(driver, op):
    return driver.find_element(By.ID, f"operations-pets-{op}")


def open_and_try(driver, wait, op):
    """Expands an operation and turns on 'Try it out'."""
    block = operation(driver, op)
    if "is-open" not in block.get_attribute("class"):
        block.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
    wait.until(lambda d: operation(d, op).find_elements(By.CSS_SELECTOR, ".try-out__btn"))
    button = operation(driver, op).find_element(By.CSS_SELECTOR, ".try-out__btn")
    if button.text.strip() == "Try it out":
        button.click()
    return operation(driver, op)


def execute(driver, wait, op):
    """Executes an operation; its live response's status and body text."""
    # A response shown before is cleared first, so that the one read is new.
    for clear in operation(driver, op).find_elements(By.CSS_SELECTOR, "button.btn-clear"):
        clear.click()
    operation(driver, op).find_element(By.CSS_SELECTOR, "button.execute").click()
    cell = (By.CSS_SELECTOR,
            f"#operations-pets-{op} .live-responses-table tr.response .response-col_status")
    wait.until(ready.presence_of_element_located(cell))
    block = operation(driver, op)
    status = block.find_element(*cell).text.strip()
    body = block.find_element(
        By.CSS_SELECTOR, ".live-responses-table .response-col_description pre").text
    return status, body


def authorize(driver, wait, value):
    """Authorize: enters the key once (after logging out a previous one)."""
    driver.find_element(By.CSS_SELECTOR, ".scheme-container button.authorize").click()
    modal = wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, ".modal-ux")))
    logout = [b for b in modal.find_elements(By.CSS_SELECTOR, "button") if b.text == "Logout"]
    if logout:
        logout[0].click()
    field = wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, ".modal-ux input")))
    field.send_keys(value)
    modal.find_element(By.CSS_SELECTOR, "button.modal-btn.auth.authorize").click()
    modal.find_element(By.CSS_SELECTOR, "button.btn-done").click()


driver = headless_chromium.start(
    ["--window-size=1280,2400"], {"goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"}}
)
try:
    print(f"browser: {driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}")
    wait = WebDriverWait(driver, 20)
    driver.get(base + "/")
    wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, ".opblock")))
    expect("/ redirects to /docs", driver.current_url == base + "/docs", driver.current_url)
    ops = [e.get_attribute("id") for e in driver.find_elements(By.CSS_SELECTOR, ".opblock")]
    expect("the three operations are shown",
           {"operations-pets-listPets", "operations-pets-createPet", "operations-pets-getPet"} <= set(ops),
           ops)
    get_pet = operation(driver, "getPet")
    expect("getPet is marked deprecated",
           "opblock-deprecated" in get_pet.get_attribute("class")
           and "deprecated" in driver.find_element(By.CSS_SELECTOR, "header.intro").text,
           get_pet.get_attribute("class"))

    before, _ = creates_logged()
    authorize(driver, wait, key)
    block = open_and_try(driver, wait, "createPet")
    body = block.find_element(By.CSS_SELECTOR, "textarea.body-param__text")
    body.send_keys(Keys.CONTROL, "a")
    body.send_keys(Keys.DELETE)
    body.send_keys('{"name": "Rex from the reference page", "categoryId": 3, "status": "pending"}')
    status, text = execute(driver, wait, "createPet")
    created = json.loads(text) if status == "201" else {}
    expect("a create sent from the page answers 201", status == "201", f"{status} {text[:120]}")

    open_and_try(driver, wait, "listPets")
    status, text = execute(driver, wait, "listPets")
    expect("the list shown afterwards holds the pet",
           status == "200" and "Rex from the reference page" in text, f"{status} {text[:120]}")

    block = open_and_try(driver, wait, "getPet")
    field = block.find_element(By.CSS_SELECTOR, 'tr[data-param-name="petId"] input')
    field.send_keys(str(created.get("id", "")))
    status, text = execute(driver, wait, "getPet")
    expect("getPet from the page shows it", status == "200" and "Rex from the reference page" in text,
           f"{status} {text[:80]}")

    deadline = time.time() + 10
    after, log_text = creates_logged()
    while len(after) <= len(before) and time.time() < deadline:
        time.sleep(0.2)
        after, log_text = creates_logged()
    expect("the API's access log has that create", len(after) == len(before) + 1,
           f"{len(before)} then {len(after)} creates logged")
    expect("the key is never in the access log", key not in log_text, access_log)

    authorize(driver, wait, "not-the-key")
    status, text = execute(driver, wait, "listPets")
    expect("a wrong key shows the 401 Error body",
           status == "401" and '"code": "unauthorized"' in text.replace('":"', '": "'), f"{status} {text[:120]}")

    os.makedirs(os.path.dirname(screenshot), exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(screenshot)
    print(f"screenshot: {screenshot}")

    console = driver.get_log("browser")
    errors = [e for e in console if e["level"] == "SEVERE"
              # The 401 the test asked for: the browser reports every 4xx fetch.
              and "401 (Unauthorized)" not in e["message"]]
    expect("no console error", not errors, errors or [e["message"][:100] for e in console])
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    foreign = [u for u in urls if not u.startswith(base + "/") and not u.startswith("data:")]
    expect("no request leaves 127.0.0.1", urls and not foreign, foreign or f"{len(urls)} requests, all to {base}")
finally:
    driver.quit()

print(f"reference page: {checks - len(failures)} of {checks} checks passed")
sys.exit(1 if failures else 0)
