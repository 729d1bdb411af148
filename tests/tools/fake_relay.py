#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fake_relay.py - a misbehaving relay daemon for the recorder's relay tests.

Speaks enough of lttng-relayd's consumer protocol (src/relay/relay.h) to
get through the handshake, then misbehaves in one way (--mode):

  ok       answers everything properly (the control case)
  drip     every reply after the handshake is sent one byte every --drip seconds
  stall    reads every command after the handshake and never answers
  garbage  every reply after the handshake is random bytes (its return code never LTTng's 10)
  noread   the control connection behaves; the data connection is never read
  batch    index entries (SEND_INDEX) are answered only once --batch of them wait for
           their answer, or before the answer of any other command: a sender that waits
           for each index entry's answer before sending on waits for ever (logs
           "batched N K": K answers sent together)

The handshake, which always behaves: VERSION, CREATE_SESSION, the ADD_STREAMs,
STREAMS_SENT, then one SEND_INDEX per data stream added (the empty packet the
recorder announces each stream with).  --after N: commands answered properly
after it before the mode applies (0).  Listens on free
loopback ports and writes "CONTROL DATA" to --ports FILE.  Appends to --log FILE
one line per event, flushed: "control N" / "data N" (connection N accepted),
"dripping N" (a dripped reply of connection N began), "dripped N" (one was sent
whole), "stalling N" (the first command left unanswered), "eof N" (connection N was closed by the recorder), "packet N" (a data
packet received whole).  Runs until killed.
"""
import argparse
import os
import random
import socket
import struct
import threading
import time

OK = 10
ap = argparse.ArgumentParser()
ap.add_argument("--mode", choices=["ok", "drip", "stall", "garbage", "noread", "batch"], required=True)
ap.add_argument("--batch", type=int, default=3)
ap.add_argument("--after", type=int, default=0)
ap.add_argument("--drip", type=float, default=4.0)
ap.add_argument("--ports", required=True)
ap.add_argument("--log", required=True)
args = ap.parse_args()

log_lock = threading.Lock()
conn_ids = iter(range(1, 1 << 30))


def log(line):
    with log_lock:
        with open(args.log, "a") as f:
            f.write(line + "\n")
            f.flush()


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b


def reply_for(cmd):
    if cmd == 5:  # VERSION
        return struct.pack(">II", 2, 8)
    if cmd in (1, 2):  # ADD_STREAM, CREATE_SESSION
        return struct.pack(">QI", random.randrange(1, 1 << 32), OK)
    if cmd == 6:  # SEND_METADATA: no reply
        return None
    if cmd == 8:  # DATA_PENDING: 0 written (noread: 1, still coming: it never reads them)
        return struct.pack(">I", 1 if args.mode == "noread" else 0)
    return struct.pack(">I", OK)  # STREAMS_SENT, SEND_INDEX, CLOSE_STREAM, ...


def garbage(rep):
    g = bytearray(random.randbytes(len(rep)))
    if struct.unpack(">I", g[-4:])[0] == OK:
        g[-1] ^= 1
    return bytes(g)


def control(s, n):
    answered = 0
    adds, sent, first_indexes = 0, False, 0
    held = []  # batch: index answers not sent yet
    try:
        while True:
            _, size, cmd, _ = struct.unpack(">QQII", recv_exact(s, 24))
            recv_exact(s, size)
            rep = reply_for(cmd)
            if rep is None:
                continue
            # the handshake: streams added, STREAMS_SENT, their first (empty) packets' indexes
            handshake = not sent or first_indexes < adds - 1
            if cmd == 1 and not sent:
                adds += 1
            elif cmd == 16:
                sent = True
            elif cmd == 13 and sent and handshake:
                first_indexes += 1
            if handshake:
                s.sendall(rep)
                continue
            if args.mode == "batch" and answered >= args.after:
                # answers go in order: the held ones first, whatever comes
                held.append(rep)
                if cmd != 13 or len(held) >= args.batch:
                    s.sendall(b"".join(held))
                    log(f"batched {n} {len(held)}")
                    held = []
            elif answered < args.after or args.mode in ("ok", "noread"):
                s.sendall(rep)
            elif args.mode == "drip":
                log(f"dripping {n}")
                for i in range(len(rep)):
                    s.sendall(rep[i:i + 1])
                    if i + 1 < len(rep):
                        time.sleep(args.drip)
                log(f"dripped {n}")
            elif args.mode == "garbage":
                s.sendall(garbage(rep))
            elif answered == args.after:  # stall: read on, answer nothing
                log(f"stalling {n}")
            answered += 1
    except (EOFError, ConnectionError, OSError):
        log(f"eof {n}")
    finally:
        s.close()


def data(s, n):
    if args.mode == "noread":
        # hold it unread until the recorder closes it (a zero-byte peek
        # would read; poll for the hang-up instead)
        import select
        p = select.poll()
        p.register(s, select.POLLRDHUP)
        while not p.poll(1000):
            pass
        log(f"eof {n}")
        s.close()
        return
    try:
        while True:
            _, _, _, size, _ = struct.unpack(">QQQII", recv_exact(s, 32))
            recv_exact(s, size)
            log(f"packet {n}")
    except (EOFError, ConnectionError, OSError):
        log(f"eof {n}")
    finally:
        s.close()


def serve(ls, kind, fn):
    while True:
        s, _ = ls.accept()
        n = next(conn_ids)
        log(f"{kind} {n}")
        threading.Thread(target=fn, args=(s, n), daemon=True).start()


lss = []
for _ in range(2):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    lss.append(ls)
if args.mode == "noread":
    # a small receive buffer (accepted sockets inherit it): the recorder's sends fill it soon
    lss[1].setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
threading.Thread(target=serve, args=(lss[1], "data", data), daemon=True).start()
tmp = args.ports + ".tmp"
with open(tmp, "w") as f:
    f.write(f"{lss[0].getsockname()[1]} {lss[1].getsockname()[1]}\n")
os.rename(tmp, args.ports)
serve(lss[0], "control", control)
