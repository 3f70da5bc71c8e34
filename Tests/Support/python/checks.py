"""What the Python tests against real processes share (Tests/Browser, Tests/Fleet): one line per
check, child processes stopped at the end whatever happened, a bounded wait, and the closing line
"LABEL: N passed, M failed" that tools/test reads."""
import signal
import subprocess
import time

passed, failed = 0, 0
children = []


def check(name, condition, detail=""):
    """Counts and prints one check."""
    global passed, failed
    if condition:
        passed += 1
        print(f"  ok    {name}")
    else:
        failed += 1
        print(f"  FAIL  {name} {detail}")


def start(args, merge_stderr=False, **kwargs):
    """Starts a child process (stopped by stop_children), its output read as text."""
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                               text=True, **kwargs)
    children.append(process)
    return process


def until(condition, seconds=15, step=0.1):
    """The first true value of condition() within seconds (an exception counts as not yet), else None."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception:
            pass
        time.sleep(step)
    return None


def stop_children():
    """Stops every child still running (a stopped one is continued first), killing what does not end in 10 s."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()


def finish(label):
    """Prints the closing line and returns the exit status: 1 when a check failed."""
    print(f"{label}: {passed} passed, {failed} failed")
    return 1 if failed else 0
