#!/usr/bin/env python3
"""etcd-drop-proxy.py UPSTREAM_PORT LISTEN_PORT

Passes HTTP requests on to an etcd member on 127.0.0.1, one connection
each, and loses the reply of the first /v3/kv/txn after etcd has applied
it: the client sees its connection closed and cannot know the outcome.
Prints "ready" once it listens.
"""
import socket
import sys
import threading

upstream = ("127.0.0.1", int(sys.argv[1]))
lost = threading.Event()


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None, None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head, body


def serve(conn):
    with conn:
        head, body = read_request(conn)
        if head is None:
            return
        lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
        with socket.create_connection(upstream) as up:
            up.sendall(b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n" + body)
            reply = b""
            while True:
                chunk = up.recv(65536)
                if not chunk:
                    break
                reply += chunk
        if b" /v3/kv/txn " in lines[0] and not lost.is_set():
            lost.set()
            return  # applied by etcd, never told
        conn.sendall(reply)


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", int(sys.argv[2])))
listener.listen(16)
print("ready", flush=True)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
