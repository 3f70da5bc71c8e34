#!/usr/bin/env python3
"""The web view in a real browser: headless Chromium driven by selenium, against a real daemon
(`nodescope daemon --ui`) and real hosts (the samples). Run by tools/test; prints one line per
check and "browser: N passed, M failed" at the end; exits 1 when a check failed.

Usage: web_view_test.py BUILD_DIR [--screenshots DIR] [--recording-only]
(--recording-only: only the checks of `nodescope ui --from`, to iterate on them)
"""
import json
import re
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Support", "python"))
from checks import check, start, stop_children, until  # noqa: E402
import checks  # noqa: E402

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

BUILD = os.path.abspath(sys.argv[1])
# The repository, for the samples' sources.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPTIONS = None  # the Chromium options of the main driver, for a second window
SHOTS = sys.argv[sys.argv.index("--screenshots") + 1] if "--screenshots" in sys.argv else None
def host(scratch, *args):
    env = dict(os.environ, NODESCOPE_SOCKET=os.path.join(scratch, "c.sock"))
    return start([os.path.join(BUILD, "sample-nodes"), "--quiet", *args], env=env)


def daemon(scratch):
    process = start([os.path.join(BUILD, "nodescope"), "daemon", "--ui", "--socket", os.path.join(scratch, "c.sock"),
                     "--log-level", "warning"])
    url = process.stdout.readline().strip()
    return process, url


def request(url, headers=None, method="GET"):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}, method=method), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


def rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#tree-spacer .row")


def row_paths(driver):
    return [row.get_attribute("data-path") for row in rows(driver)]


def nodescope_json(*args):
    return json.loads(subprocess.run([os.path.join(BUILD, "nodescope"), *args], capture_output=True, text=True,
                                     timeout=60, check=True).stdout)


def count_words(counts, attached=True):
    """A process's counts as `ps`, `tree` and the page write them (Vocabulary.nodeCounts)."""
    line = f"{counts['attached']} attached, " if attached else ""
    line += f"{counts['leaked']} leaked, {counts['unverified']} unverified, {counts['releasedLate']} released late"
    globals_ = counts["retainedByGlobal"]
    if globals_:
        line += f", {globals_} retained by {'a global' if globals_ == 1 else 'globals'}"
    if attached and counts["awaitingRelease"]:
        line += f", {counts['awaitingRelease']} awaiting release"
    return line


def ps_counts(scratch, pid):
    """The counts `nodescope ps --json` gives the process."""
    listed = nodescope_json("ps", "--json", "--socket", os.path.join(scratch, "c.sock"))
    return next((p["counts"] for p in listed if p["pid"] == pid), None)


def page_tree(driver):
    """The rows on the page, every node open: (id, state mark class) in order."""
    shown = []
    for row in rows(driver):
        mark = row.find_element(By.CSS_SELECTOR, ".mark").get_attribute("class").split()
        shown.append((int(row.get_attribute("data-id")), next(c for c in mark if c.startswith("s-"))))
    return shown


def expected_tree(recording, at):
    view = nodescope_json("tree", "--from", recording, "--at", at, "--json")
    return [(n["id"], "s-placeholder" if n.get("isPlaceholder") else "s-" + n["status"]) for n in view["nodes"]]


def settled(driver):
    """The instant the page shows once it has no answer on its way, else None."""
    return driver.execute_script(
        "return !replay.busy && replay.wanted === null && !replay.playing ? window.nodescopeInstant : null")


def at_of(driver):
    return urllib.parse.parse_qs(urllib.parse.urlparse(driver.current_url).query).get("at", [None])[0]


def same_tree_as_cli(driver, recording):
    """Whether the page's tree is the CLI's tree at the instant in the page's address."""
    def compare():
        if not settled(driver):
            return None
        at = at_of(driver)
        driver.find_element(By.ID, "expand-all").click()
        shown = page_tree(driver)
        return (at, shown, expected_tree(recording, at)) if shown == expected_tree(recording, at) else None
    result = until(compare, 20, 0.3)
    if result is None and at_of(driver):
        return False, f"at {at_of(driver)}: page {page_tree(driver)} vs cli {expected_tree(recording, at_of(driver))}"
    return result is not None, (result[0] if result else "")


def recording_checks(driver, scratch):
    """`nodescope ui --from FILE`: a real daemon records a real sample; the page's time slider,
    step buttons, keys and play show the tree that `tree --from FILE --at T` prints at T."""
    print("browser: a recording with a time slider (ui --from)")
    records = os.path.join(scratch, "recordings")
    os.makedirs(records)
    socket = os.path.join(scratch, "r.sock")
    recorder = start([os.path.join(BUILD, "nodescope"), "daemon", "--socket", socket, "--record-dir", records,
                      "--log-level", "warning"])
    check("the recording daemon answers", until(lambda: os.path.exists(socket), 20))
    sample = start([os.path.join(BUILD, "sample-nodes"), "--quiet", "--leak", "retain-cycle", "--pace", "300", "--hold", "2"],
                   env=dict(os.environ, NODESCOPE_SOCKET=socket))
    sample.wait(120)

    def finished():
        names = [n for n in os.listdir(records) if n.endswith(".nsrec")]
        if len(names) != 1:
            return None
        with open(os.path.join(records, names[0]), "rb") as file:
            return os.path.join(records, names[0]) if file.read()[-8:] == b"NSRIDX\x00\x01" else None
    recording = until(finished, 30)
    check("the daemon leaves a finished recording of the sample", recording)
    recorder.send_signal(signal.SIGTERM)
    recorder.wait(30)
    if not recording:
        return

    served = start([os.path.join(BUILD, "nodescope"), "ui", "--from", recording])
    url = served.stdout.readline().strip()
    check("ui --from prints the page's address", url.startswith("http://127.0.0.1:") and "token=" in url, url)
    base = url.split("/?")[0]
    info = nodescope_json("tree", "--from", recording, "--at", "end", "--json")
    check("the recording's tree has the sample's flows", any(n.get("name") == "ProfileFlow" for n in info["nodes"]))

    # A link with an instant opens at that instant, the token traded for the cookie.
    driver.get(url + "&at=event:60")
    check("a link with ?at= keeps its instant through the token's trade",
          until(lambda: driver.current_url == base + "/?at=event%3A60" or driver.current_url == base + "/?at=event:60"),
          driver.current_url)
    check("the timeline is shown for a recording", until(lambda: driver.find_element(By.ID, "timeline").is_displayed(), 60))
    ok, detail = same_tree_as_cli(driver, recording)
    check("at event:60 the page's tree is `tree --from FILE --at event:60`", ok, detail)
    check("the page says which record it shows", "record 60 of" in driver.find_element(By.ID, "instant-event").text,
          driver.find_element(By.ID, "instant-event").text)

    # The slider, clicked at a few places: the tree follows, the address keeps the instant.
    scrubber = driver.find_element(By.ID, "scrubber")
    width = scrubber.size["width"]
    seen = set()
    for fraction in (0.15, 0.45, 0.8, 0.98):
        before = at_of(driver)
        ActionChains(driver).move_to_element_with_offset(scrubber, int(width * (fraction - 0.5)), 0).click().perform()
        moved = until(lambda: settled(driver) and at_of(driver) != before)
        ok, detail = same_tree_as_cli(driver, recording)
        check(f"the slider at {int(fraction * 100)}% shows the tree of its instant", moved and ok, f"{at_of(driver)} {detail}")
        seen.add(json.dumps(page_tree(driver)))
    check("the tree changes as the slider moves", len(seen) >= 3, str(len(seen)))
    if SHOTS:
        driver.save_screenshot(os.path.join(SHOTS, "web-view-recording.png"))

    # Steps of one record, by button and by key.
    event = settled(driver)["event"]
    driver.find_element(By.ID, "step-back").click()
    until(lambda: at_of(driver) == f"event:{max(event - 1, 0)}" and settled(driver))
    ok, detail = same_tree_as_cli(driver, recording)
    check("the step button goes back one record", at_of(driver) == f"event:{max(event - 1, 0)}" and ok, f"{at_of(driver)} {detail}")
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    until(lambda: at_of(driver) == f"event:{event}" and settled(driver))
    ok, detail = same_tree_as_cli(driver, recording)
    check("the right arrow key goes forward one record", at_of(driver) == f"event:{event}" and ok, f"{at_of(driver)} {detail}")

    # Play from the start, pause: the tree is that of the instant where it paused.
    driver.get(base + "/?at=0")
    until(lambda: settled(driver))
    driver.find_element(By.ID, "play").click()
    played = until(lambda: driver.execute_script("return window.nodescopeInstant.seconds > 0.5"), 30)
    driver.find_element(By.ID, "play").click()
    ok, detail = same_tree_as_cli(driver, recording)
    check("play moves through the recording and pause stops at an instant", played and ok, f"{at_of(driver)} {detail}")

    # The end: the leak panel lists what `leaks --from FILE --at end` lists.
    driver.get(base + "/?at=end")
    until(lambda: settled(driver))
    leaks = nodescope_json("leaks", "--from", recording, "--at", "end", "--format", "json")["leaks"]
    expected = [str(leak["nodeID"]) for leak in leaks]
    listed = until(lambda: (lambda shown: shown if shown == expected else None)(
        [li.get_attribute("data-node") for li in driver.find_elements(By.CSS_SELECTOR, "#leak-list li[data-node]")]), 10)
    check("at the end the leak panel lists the recording's leaks", expected and listed == expected, f"{listed} vs {expected}")
    ok, detail = same_tree_as_cli(driver, recording)
    check("at the end the tree is `tree --from FILE --at end`", ok, detail)
    if SHOTS:
        duration = driver.execute_script("return replay.info.durationSeconds")
        driver.get(base + "/?at=" + str(round(duration * 0.55, 3)))
        until(lambda: settled(driver))
        driver.save_screenshot(os.path.join(SHOTS, "web-view-recording-mid.png"))
    served.send_signal(signal.SIGINT)
    check("ui --from ends on Ctrl-C", served.wait(30) == 0)


def main():
    scratch = tempfile.mkdtemp(prefix="nodescope-web-")
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"]:
        options.add_argument(argument)
    global OPTIONS
    OPTIONS = options
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(30)
    try:
        if "--recording-only" in sys.argv:
            recording_checks(driver, scratch)
            return checks.finish("browser")
        print("browser: the web view in headless Chromium")
        served, url = daemon(scratch)
        check("the daemon prints the page's address", url.startswith("http://127.0.0.1:") and "token=" in url, url)
        base = url.split("/?")[0]
        token = url.split("token=")[1]
        port = base.rsplit(":", 1)[1]

        # Refusals, with a plain HTTP client.
        check("no cookie: 401", request(base + "/api/processes") == 401)
        cookie = {"Cookie": f"nodescope_token_{port}={token}"}
        check("the cookie: 200", request(base + "/api/processes", cookie) == 200)
        check("a wrong token: 403", request(base + "/?token=0000") == 403)
        check("a rebound Host: 421", request(base + "/api/processes", dict(cookie, Host=f"evil.example:{port}")) == 421)
        check("another Origin: 403", request(base + "/api/processes", dict(cookie, Origin="http://evil.example")) == 403)
        check("POST: 405", request(base + "/api/processes", cookie, method="POST") == 405)

        # Nothing connected yet: the page says what to run.
        driver.get(url)
        check("the token is traded for a cookie and leaves the address", until(lambda: driver.current_url == base + "/"))
        empty = until(lambda: driver.find_element(By.ID, "no-process").is_displayed())
        check("with nothing connected the page says what to run",
              empty and "sample-nodes" in driver.find_element(By.ID, "start-line").text)
        check("a live page shows no recording player", not driver.find_element(By.ID, "timeline").is_displayed())

        # A host with a leak: the tree, the leak panel, the retain path.
        first = host(scratch, "--leak", "retain-cycle", "--hold", "120")
        shown = until(lambda: "AppFlow" in row_paths(driver), 20)
        check("the live tree of the only process appears by itself", shown, str(row_paths(driver)))
        leak = until(lambda: driver.find_element(By.CSS_SELECTOR, "#leak-list li .path"), 20)
        check("the leak panel lists the leak",
              leak is not None and "ProfileFlow" in leak.text, leak.text if leak else "")
        retainers = until(lambda: ".listeners[0]" in driver.find_element(By.ID, "leak-list").text, 20)
        check("the leak shows what holds it", retainers, driver.find_element(By.ID, "leak-list").text)
        source_line = next(i + 1 for i, line in enumerate(open(os.path.join(ROOT, "Samples/sample-nodes/ProfileNode.swift")))
                           if "session.onChange { user in self.displayName" in line)
        named = until(lambda: "closure #1 in ProfileContextImp.didBecomeActive() (ProfileNode.swift:%d)" % source_line
                      in driver.find_element(By.ID, "leak-list").text, 20)
        check("the leak panel names the closure by its source and says the line to change",
              named and ("change ProfileNode.swift:%d" % source_line) in driver.find_element(By.ID, "leak-list").text,
              driver.find_element(By.ID, "leak-list").text)
        check("the tree marks the leaked node", until(
            lambda: any("LEAKED" in r.text and "held by Session.listeners[0]" in r.text for r in rows(driver))))
        if SHOTS:
            driver.save_screenshot(os.path.join(SHOTS, "web-view.png"))

        # Clicking the leak reveals and selects its node; details show its objects.
        driver.find_element(By.CSS_SELECTOR, "#leak-list li").click()
        selected = until(lambda: driver.find_element(By.CSS_SELECTOR, ".row.selected").get_attribute("data-path"))
        check("clicking a leak reveals its node", selected == "AppFlow/LoggedInFlow/ProfileFlow", str(selected))
        check("the node's details list its objects",
              "ProfileContextImp" in driver.find_element(By.ID, "detail-body").text)
        details = driver.find_element(By.ID, "detail-body").text
        check("the node's details name the closure as the leak panel does (the live tree's events name it too)",
              until(lambda: "closure #1 in ProfileContextImp.didBecomeActive() (ProfileNode.swift:%d)" % source_line
                    in driver.find_element(By.ID, "detail-body").text
                    and "change ProfileNode.swift:%d" % source_line in driver.find_element(By.ID, "detail-body").text, 10),
              driver.find_element(By.ID, "detail-body").text)
        check("the node's details show its attach site", re.search(r"attached at LoggedInNode\.swift:\d+", details) is not None, details)
        check("the node's details show real times since the process started",
              re.search(r"attached [0-9.]+ (ms|s) after the process started", details) is not None
              and "attached 0.0 s" not in details and "detached 0.0 s" not in details, details)

        # The counts are those of `ps`, in the same words (the leak panel: those of `leaks`).
        def same_counts():
            counts = ps_counts(scratch, first.pid)
            item = driver.find_element(By.CSS_SELECTOR, f"#process-list li[data-pid='{first.pid}'] .counts").text
            header = driver.find_element(By.ID, "leak-count").text
            return counts and item.startswith(count_words(counts)) and header == f"({count_words(counts, False)})"
        check("the process list and the leak panel count as `ps` does", until(same_counts, 10),
              driver.find_element(By.ID, "process-list").text + " | " + driver.find_element(By.ID, "leak-count").text)

        # Collapse a node: the user's choice survives live changes.
        target = next(r for r in rows(driver) if r.get_attribute("data-path") == "AppFlow/LoggedInFlow")
        count_before = len(rows(driver))
        target.find_element(By.CSS_SELECTOR, ".toggle").click()
        until(lambda: len(rows(driver)) < count_before)
        collapsed = len(rows(driver))
        second = host(scratch, "--hold", "120")
        check("a second process appears in the list", until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#process-list li")) == 2))
        check("the collapsed node stays collapsed", len(rows(driver)) == collapsed, f"{len(rows(driver))} != {collapsed}")

        # The printed address with `?process=PID` appended opens on that process.
        other = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=OPTIONS)
        try:
            other.get(url + "?process=" + str(second.pid))
            landed = until(lambda: other.current_url == base + "/?process=" + str(second.pid), 10)
            chosen = until(lambda: other.find_elements(By.CSS_SELECTOR, f"#process-list li.selected[data-pid='{second.pid}']"), 15)
            check("the printed address with ?process=PID appended opens on that process", landed and chosen,
                  other.current_url + " " + other.page_source[:200])
        finally:
            other.quit()

        # Search filters to matches and their ancestors.
        search = driver.find_element(By.ID, "search")
        search.send_keys("Settings")
        check("search shows the matches with their ancestors",
              until(lambda: row_paths(driver) and all("Settings" in p or "AppFlow/LoggedInFlow".startswith(p) or p == "AppFlow"
                                                        for p in row_paths(driver)) and any(p.endswith("SettingsFlow") for p in row_paths(driver))),
              str(row_paths(driver)))
        search.clear()
        search.send_keys(" ")
        driver.execute_script("document.getElementById('search').value=''; document.getElementById('search').dispatchEvent(new Event('input'))")

        # The diagram tab shows the daemon's SVG.
        driver.find_element(By.ID, "tab-diagram").click()
        drawn = until(lambda: driver.execute_script(
            "const i=document.getElementById('diagram'); return i.complete && i.naturalWidth > 0"), 20)
        check("the diagram tab shows the rendered SVG", drawn)
        fits = until(lambda: driver.execute_script(
            "const i=document.getElementById('diagram'), v=document.getElementById('diagram-view');"
            "return i.getBoundingClientRect().right <= v.getBoundingClientRect().right + 1"), 10)
        check("the diagram is fitted to the pane, its legend in view", fits)
        before = driver.execute_script("return document.getElementById('diagram').clientWidth")
        driver.find_element(By.ID, "zoom-in").click()
        zoomed = until(lambda: driver.execute_script("return document.getElementById('diagram').clientWidth") > before, 5)
        check("the diagram zooms in", zoomed, driver.find_element(By.ID, "zoom-level").text)
        driver.find_element(By.ID, "zoom-fit").click()
        check("the SVG download is served as an attachment", request(base + "/api/diagram?process=" + str(first.pid)
              + "&format=svg&download=1", cookie) == 200)
        driver.find_element(By.ID, "tab-tree").click()

        # The process exits: the page says so and keeps its last tree.
        first.send_signal(signal.SIGTERM)
        first.wait(30)
        banner = until(lambda: "exited" in driver.find_element(By.ID, "banner").text, 20)
        check("a process that exits is shown as exited, its tree kept", banner and rows(driver))

        # The daemon stops, then comes back: the page says so, then recovers by itself.
        served.send_signal(signal.SIGTERM)
        served.wait(30)
        down = until(lambda: "not answering" in driver.find_element(By.ID, "status").text, 20)
        check("a stopped daemon is shown as not answering", down, driver.find_element(By.ID, "status").text)
        served, url = daemon(scratch)
        driver.get(url)
        check("a new daemon's page shows the live process again", until(lambda: "AppFlow" in row_paths(driver), 20))
        base, token = url.split("/?")[0], url.split("token=")[1]
        cookie = {"Cookie": f"nodescope_token_{base.rsplit(':', 1)[1]}={token}"}

        if SHOTS:
            driver.save_screenshot(os.path.join(SHOTS, "web-view-end.png"))

        # An idle stream still says something every 15 s (so a closed tab is noticed): read the
        # events of a host that does nothing, in the background, while the checks below run.
        idle = host(scratch, "--hold", "600")
        until(lambda: any(p["pid"] == idle.pid for p in json.load(urllib.request.urlopen(
            urllib.request.Request(base + "/api/processes", headers=cookie), timeout=10))), 20)
        idle_lines = []

        def read_idle():
            try:
                with urllib.request.urlopen(urllib.request.Request(
                        base + "/api/events?process=" + str(idle.pid), headers=cookie), timeout=60) as stream:
                    for raw in stream:
                        idle_lines.append(raw.decode("utf-8", "replace")[:40])
            except Exception as error:
                idle_lines.append("error " + str(error))

        threading.Thread(target=read_idle, daemon=True).start()

        # From a node's attach in a host to its row on the page: a host attaches Pulse1…Pulse20,
        # one every 150 ms, and prints each attach's wall-clock time; the page notes when each
        # row first appears. A figure for docs/BENCHMARKS.md, not a timed check.
        pulses = start([os.path.join(BUILD, "test-host"), "pulse", "20"],
                       env=dict(os.environ, NODESCOPE_SOCKET=os.path.join(scratch, "c.sock")))
        check("the pulsing host connects", until(lambda: pulses.stdout.readline().startswith("CONNECTED"), 30))
        driver.get(base + "/?process=" + str(pulses.pid))
        check("a link can name the process", until(lambda: "Root" in row_paths(driver), 20), str(row_paths(driver)))
        driver.execute_script("""
            window.firstSeen = {};
            new MutationObserver(() => {
              const now = Date.now();
              for (const row of document.querySelectorAll('#tree-spacer .row')) {
                if (!(row.dataset.path in window.firstSeen)) window.firstSeen[row.dataset.path] = now;
              }
            }).observe(document.getElementById('tree-spacer'), { childList: true });""")
        attached = {}
        while len(attached) < 20:
            line = pulses.stdout.readline()
            if not line:
                break
            if line.startswith("PULSE "):
                _, index, at = line.split()
                attached["Root/Pulse" + index] = int(at)
        seen = until(lambda: (lambda s: s if all(p in s for p in attached) else None)(
            driver.execute_script("return window.firstSeen")), 20) or {}
        check("every attached node gets its row, live", len(attached) == 20 and all(p in seen for p in attached),
              f"{len(attached)} attached, {len([p for p in attached if p in seen])} seen")
        latencies = sorted(seen[p] - attached[p] for p in attached if p in seen)
        if latencies:
            print(f"  measure  host attach -> row on the page: median {latencies[len(latencies) // 2]} ms, "
                  f"max {latencies[-1]} ms ({len(latencies)} nodes)")
        pulses.send_signal(signal.SIGTERM)

        # Large trees: the first paint of 10,000 and 100,000 nodes, then a scroll to the very end.
        for size in (10_000, 100_000):
            big = host(scratch, "--nodes", str(size), "--hold", "600")

            def nodes_listed():
                with urllib.request.urlopen(urllib.request.Request(base + "/api/processes", headers=cookie),
                                            timeout=10) as r:
                    listed = [p for p in json.load(r) if p["pid"] == big.pid]
                return listed and listed[0]["liveNodes"] >= size

            ready = until(nodes_listed, 300, 0.5)
            check(f"a {size}-node host reports its whole tree", ready)
            if not ready:
                continue
            driver.get(base + "/?process=" + str(big.pid))
            shown = until(lambda: driver.execute_script(
                "return window.nodescopeTiming.trees.find(t => t.nodes >= %d)" % size), 120, 0.2)
            check(f"the {size}-node tree is painted", shown is not None)
            if shown:
                print(f"  measure  first paint of a {size}-node tree: {shown['shownAt']:.0f} ms after the page began to load")
            driver.find_element(By.ID, "expand-all").click()

            def at_the_end():
                # Scrolled again on every look: the expansion may still be laying rows out.
                driver.execute_script("const v=document.getElementById('tree-view'); v.scrollTop = v.scrollHeight;")
                final = driver.execute_script("return pathOf(state.rows[state.rows.length - 1].id)")
                return final if row_paths(driver)[-1] == final else None
            last = until(at_the_end, 30, 0.3)
            final = driver.execute_script("return pathOf(state.rows[state.rows.length - 1].id)")
            total = driver.execute_script("return state.rows.length")
            check(f"the {size}-node tree scrolls to its last row", last and total >= size,
                  f"last row shown {row_paths(driver)[-1:]}, expected {final}; {total} rows")
            # Leave the page first: its event stream would otherwise carry the exit of every
            # node of the big host into a tab that the next checks wait on.
            driver.get("about:blank")
            big.send_signal(signal.SIGTERM)
            big.wait(60)

        keep_alive = until(lambda: any(line.startswith(": keep-alive") for line in idle_lines), 30)
        check("an idle event stream gets a keep-alive", keep_alive, str(idle_lines[:6]))
        idle.send_signal(signal.SIGTERM)

        recording_checks(driver, scratch)
    finally:
        driver.quit()
        stop_children()
    return checks.finish("browser")


if __name__ == "__main__":
    sys.exit(main())
