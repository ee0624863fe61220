# SPDX-License-Identifier: GPL-2.0
"""A UDP server that reloads gracefully, as nginx does on SIGHUP: a
SO_REUSEPORT socket per CPU, each read by a thread pinned to that CPU; on
SIGHUP a new process takes over the same sockets (new readers, the old
process exits) and writes its pid to the pid file. With --activated the
process that makes the sockets keeps them and only a child it starts
serves, as with systemd's socket activation (the sockets are PID 1's and
the service's). For tests/apply.sh.

    reload_server.py PORT PIDFILE [--activated]
"""
import os
import signal
import socket
import sys
import threading

port, pidfile = int(sys.argv[1]), sys.argv[2]
cpus = sorted(os.sched_getaffinity(0))


def serve(socks):
    def reader(cpu, s):
        os.sched_setaffinity(0, {cpu})  # this thread only
        while True:
            s.recvfrom(2048)

    for cpu, s in zip(cpus, socks):
        threading.Thread(target=reader, args=(cpu, s), daemon=True).start()
    with open(pidfile + ".new", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(pidfile + ".new", pidfile)


def reload(signum, frame):
    if os.fork() == 0:
        serve(socks)
        signal.signal(signal.SIGHUP, reload)
        return
    os._exit(0)


socks = []
for _ in cpus:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("0.0.0.0", port))
    socks.append(s)
if sys.argv[3:] == ["--activated"] and os.fork():
    while True:  # "PID 1": holds the sockets, reads none
        signal.pause()
signal.signal(signal.SIGHUP, reload)
serve(socks)
while True:
    signal.pause()
