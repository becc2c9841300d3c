"""Kills one rank of a data-parallel run with SIGKILL, for tests.

usage: mpi-kill.py RANK FILE LIMIT COMMAND...

Runs COMMAND (an mpirun), waits until FILE exists (a checkpoint: training
is under way), kills the process of rank RANK (the descendant whose
environment has OMPI_COMM_WORLD_RANK=RANK) with SIGKILL, then waits for
COMMAND to end. Prints COMMAND's output (stdout then stderr), whether it
ended, with a non-zero status, within LIMIT seconds of the kill (a run that
hangs is killed and reported as such), and how many of the other ranks'
processes still run once it has ended (mpirun may leave them orphaned; they
are given LIMIT seconds too, then killed). LIMIT only bounds a hang;
nothing is timed.
"""

import os
import signal
import subprocess
import sys
import time


def descendants(root):
    children = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(pid))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for entry in f.read().split(b"\0"):
                if entry.startswith(b"OMPI_COMM_WORLD_RANK="):
                    return int(entry.split(b"=", 1)[1])
    except OSError:
        pass
    return None


def alive(pid):
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rank, path, limit = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    run = subprocess.Popen(sys.argv[4:], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, start_new_session=True)
    while not os.path.exists(path):
        if run.poll() is not None:
            out, err = run.communicate()
            sys.exit(f"the run ended before {path} existed:\n"
                     f"{out.decode()}{err.decode()}")
        time.sleep(0.05)
    ranks = {p: rank_of(p) for p in descendants(run.pid)}
    victims = [p for p, r in ranks.items() if r == rank]
    # The rank's own process: mpirun may start it through a shell or env.
    victim = max(victims) if victims else None
    if victim is None:
        run.kill()
        sys.exit(f"no process of rank {rank} found")
    os.kill(victim, signal.SIGKILL)
    try:
        out, err = run.communicate(timeout=limit)
        ended = f"ended with status {'non-zero' if run.returncode else 0}"
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        out, err = run.communicate()
        ended = f"still running {limit:g} s after the kill (hung)"
    others = [p for p, r in ranks.items() if r is not None and r != rank]
    deadline = time.monotonic() + limit
    while any(alive(p) for p in others) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in others if alive(p)]
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    sys.stdout.write(out.decode())
    sys.stdout.write(err.decode())
    print(f"killed rank {rank}; the run {ended}; "
          f"ranks left running: {len(left)}")


if __name__ == "__main__":
    main()
