# SPDX-License-Identifier: MIT
"""fault_proxy.py - a TCP proxy between `record --relay` and a real
lttng-relayd that injects faults on the way (issue 25, attacked again).

  fault_proxy.py --to-control PORT --to-data PORT --port-file FILE
                 [--mode pass|delay|cut|cutctl|stall] [--after BYTES] [--delay-ms MS]
                 [--stall-s S | --stall-file F] [--times N] [--cut-file F]

Listens on two loopback ports the kernel chooses (written to FILE as
"CONTROL DATA" once both listen: wait for the file, no sleep) and forwards
each accepted connection to 127.0.0.1:--to-control / --to-data, both
directions.  Faults act on the recorder's data connections (what it sends to
the daemon's data port), on the first --times of them (default 1), once a
connection has forwarded --after bytes (default 1 MiB):

  pass   forward everything
  delay  every chunk, both directions, all connections, waits --delay-ms
  cut    forward exactly --after bytes (mid-packet: packets are larger than a
         read chunk), then reset both sides of this data connection and of
         the newest control connection (SO_LINGER 0); with
         --cut-file F, data connection N is cut only once file F.N exists
         too (forwarding whole chunks until then): the test says when
  cutctl forward --after bytes of the data connection, then reset both
         sides of the newest control connection (SO_LINGER 0),
         and go on forwarding the data connection: a fault of the control
         connection alone (the recorder learns of it at its next command)
  stall  forward --after bytes, then read nothing more for --stall-s
         seconds, or until file --stall-file exists (the recorder's sends
         back up), then go on: what it had sent reaches the daemon late

Prints one line per fault to stderr ("fault: cut data connection 1 after N
bytes").  Ends on SIGTERM."""
import argparse
import os
import signal
import socket
import struct
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--to-control", type=int, required=True)
ap.add_argument("--to-data", type=int, required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--mode", default="pass", choices=["pass", "delay", "cut", "cutctl", "stall"])
ap.add_argument("--after", type=int, default=1 << 20)
ap.add_argument("--delay-ms", type=float, default=50)
ap.add_argument("--stall-s", type=float, default=10)
ap.add_argument("--stall-file")
ap.add_argument("--times", type=int, default=1)
ap.add_argument("--cut-file")
a = ap.parse_args()

lock = threading.Lock()
ndata = 0
controls = []  # control connections' sockets, newest last


def reset(s):
    """RST the connection now.  close() alone does not while another thread is
    blocked in recv() on the socket (that call keeps it open: the reset came
    only once traffic woke the thread, or never: a cut of the control
    connection went unseen for 500 s); shutdown(SHUT_RD) wakes it first."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


def control_peers():
    """The sockets of the newest control connection a fault also resets, taken
    when the fault happens: at the data connection's accept the recorder's
    control connection (connected just before) may not be accepted yet (the
    two ports have their own threads), and the cut reset nothing of it (a
    cutctl cut went unseen for ever: 2 of 4 runs here).  cut: its relay side;
    cutctl: both of its sides."""
    with lock:
        return controls[-2:] if a.mode == "cutctl" else controls[-1:]


def pump(src, dst, fault, peers):
    """src -> dst; fault: None or the data connection's number (1-based)."""
    sent = 0
    stalled = False
    ctl_cut = False
    try:
        while True:
            want = 65536
            if fault is not None and a.mode == "cutctl" and not ctl_cut and sent >= a.after:
                ctl_cut = True
                print(f"fault: cut control connection after data connection {fault} forwarded {sent} bytes",
                      file=sys.stderr, flush=True)
                for s in control_peers():
                    reset(s)
            held = fault is not None and a.cut_file is not None and not os.path.exists(f"{a.cut_file}.{fault}")
            if fault is not None and a.mode in ("cut", "cutctl", "stall") and not stalled and not ctl_cut:
                want = max(1, min(want, a.after - sent)) if sent < a.after else want
            if fault is not None and a.mode == "cut" and sent >= a.after and not held:
                print(f"fault: cut data connection {fault} after {sent} bytes", file=sys.stderr, flush=True)
                for s in peers + control_peers():
                    reset(s)
                return
            if fault is not None and a.mode == "stall" and sent >= a.after and not stalled:
                stalled = True
                print(f"fault: stall data connection {fault} after {sent} bytes", file=sys.stderr, flush=True)
                if a.stall_file:
                    while not os.path.exists(a.stall_file):
                        time.sleep(0.05)
                else:
                    time.sleep(a.stall_s)
                print(f"fault: data connection {fault} goes on", file=sys.stderr, flush=True)
            b = src.recv(want)
            if not b:
                break
            if a.mode == "delay":
                time.sleep(a.delay_ms / 1000)
            dst.sendall(b)
            sent += len(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(ls, port, is_data):
    global ndata
    while True:
        c, _ = ls.accept()
        try:
            u = socket.create_connection(("127.0.0.1", port))
        except OSError:
            c.close()
            continue
        fault = None
        peers = [c, u]
        with lock:
            if is_data:
                ndata += 1
                if ndata <= a.times and a.mode != "pass":
                    fault = ndata
            else:
                controls.extend([c, u])
        threading.Thread(target=pump, args=(c, u, fault, peers), daemon=True).start()
        threading.Thread(target=pump, args=(u, c, None, peers), daemon=True).start()


lss = []
for port, is_data in ((a.to_control, False), (a.to_data, True)):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    lss.append(ls)
    threading.Thread(target=serve, args=(ls, port, is_data), daemon=True).start()
with open(a.port_file + ".tmp", "w") as f:
    f.write(f"{lss[0].getsockname()[1]} {lss[1].getsockname()[1]}\n")
os.rename(a.port_file + ".tmp", a.port_file)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
while True:
    signal.pause()
