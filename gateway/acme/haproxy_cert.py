"""Hand HAProxy a renewed certificate through its certificate socket (gateway/lua/certs.lua).

The socket takes one PEM (chain and key), POSTed over HTTP with its Content-Length, checks that
the key belongs to the certificate, and swaps it in for the gateway's certificate file, as
`set ssl cert` + `commit ssl cert` would, without a reload; it can do nothing else, so it is what
the ACME container shares with HAProxy rather than the runtime API.
  python3 haproxy_cert.py SOCKET PEM_FILE
"""
import http.client
import socket
import sys


class UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket (the standard library speaks it over TCP only)."""

    def __init__(self, path: str):
        super().__init__("haproxy", timeout=15)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def hand_over(sock_path: str, pem: bytes) -> str:
    conn = UnixConnection(sock_path)
    try:
        conn.request("POST", "/certificate", body=pem, headers={"Content-Type": "application/x-pem-file"})
        return conn.getresponse().read().decode().strip()
    finally:
        conn.close()


def main() -> int:
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(sys.argv) != 3:
        print(f"haproxy_cert.py: expects SOCKET PEM_FILE, got {len(sys.argv) - 1} arguments (see --help)", file=sys.stderr)
        return 2
    sock_path, pem_file = sys.argv[1], sys.argv[2]
    with open(pem_file, "rb") as f:
        answer = hand_over(sock_path, f.read())
    if answer != "ok":
        print(f"haproxy refused the certificate: {answer or 'no answer'}", file=sys.stderr)
        return 1
    print(f"haproxy now serves {pem_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
