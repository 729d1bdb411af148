# SPDX-License-Identifier: MIT
# parent.py MODE RELEASE CMD [ARGS...] - runs CMD as the parent a test needs when a recorder
# that is not CMD's parent (record --pid) must learn how CMD ended:
#   hold      CMD stays a zombie after it ends, until the file RELEASE exists (polled, 150 s
#             guard): its wait status is in /proc/PID/stat meanwhile; then reaped, and this
#             exits with CMD's status (128 + N for signal N)
#   autoreap  SIGCHLD ignored: the kernel reaps CMD the moment it ends, so nobody can learn its
#             status; this waits for RELEASE, then exits 0
# CMD inherits stdin, stdout and stderr.
import os, signal, subprocess, sys, time

mode, release, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
if mode == "autoreap":
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
elif mode != "hold":
    sys.exit(f"parent.py: MODE is hold or autoreap, not {mode!r}")
# CMD gets the default disposition of SIGCHLD, not ours
p = subprocess.Popen(cmd, preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_DFL))
for _ in range(3000):
    if os.path.exists(release):
        break
    time.sleep(0.05)
if mode == "autoreap":
    sys.exit(0)
rc = p.wait()
sys.exit(128 - rc if rc < 0 else rc)
