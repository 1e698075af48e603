#!/usr/bin/env python3
"""treecpu.py OUT COMMAND...: runs COMMAND and writes the CPU seconds (user + system) of its whole process
tree to OUT, then exits with COMMAND's status.

The shell's `times` counts only the processes their parents waited for; a browser's renderers and helpers
are not, so a page test's CPU went mostly uncounted. Here the runner is a child subreaper (Linux): every
descendant that outlives its parent is handed to it, reaped, and counted. Descendants still running
10 s after COMMAND exits are killed (and named in a note): a step leaves nothing behind.
"""
import ctypes
import os
import resource
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE = 10  # seconds the descendants get to exit after COMMAND


def children():
    """(pid, command) of this process's living children: its own and the orphans handed to it."""
    me, found = os.getpid(), []
    for entry in os.listdir('/proc') if os.path.isdir('/proc') else []:
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(')') + 2 :].split()  # after "pid (comm) "
        if int(fields[1]) == me and fields[0] != 'Z':
            found.append((int(entry), stat[stat.index('(') + 1 : stat.rindex(')')]))
    return found


def main():
    if len(sys.argv) < 3:
        sys.exit('usage: treecpu.py OUT COMMAND...')
    out, command = sys.argv[1], sys.argv[2:]
    try:
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (AttributeError, OSError):  # not Linux: only the processes their parents wait for are counted
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches COMMAND (same process group); we reap it
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as e:
            print(f'treecpu: {command[0]}: {e}', file=sys.stderr)
            os._exit(127)
    status, deadline, killed = None, None, []
    while True:
        try:
            done, st = os.waitpid(-1, os.WNOHANG if status is not None else 0)
        except ChildProcessError:
            break
        if done == pid:
            status, deadline = os.waitstatus_to_exitcode(st), time.monotonic() + GRACE
        elif done == 0:  # COMMAND has exited, some descendants have not
            if time.monotonic() > deadline:
                for p, name in children():  # again each time: a killed process's children are handed to us
                    os.kill(p, signal.SIGKILL)
                    killed.append((p, name))
            time.sleep(0.05)
    if killed:
        names = ', '.join(sorted({name for _, name in killed}))
        print(f'treecpu: killed {len(killed)} processes still running {GRACE} s after the step ended ({names})', file=sys.stderr)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, 'w') as f:
        f.write(f'{round(usage.ru_utime + usage.ru_stime)}\n')
    sys.exit(status if status >= 0 else 128 - status)


main()
