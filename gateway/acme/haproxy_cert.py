"""Hand HAProxy a renewed certificate through its certificate socket (gateway/lua/certs.lua).

The socket takes one PEM (chain and key), ended by a line holding only ".", and swaps it in for the gateway's certificate file, as
`set ssl cert` + `commit ssl cert` would, without a reload; it can do nothing else, so it is what
the ACME container shares with HAProxy rather than the runtime API.
  python3 haproxy_cert.py SOCKET PEM_FILE
"""
import socket
import sys


def hand_over(sock_path: str, pem: bytes) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(sock_path)
        s.sendall(pem if pem.endswith(b"\n") else pem + b"\n")
        # The end of the PEM, said in the stream: HAProxy 3.2 does not always see the close below.
        s.sendall(b".\n")
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(4096):
            out += chunk
        return out.decode().strip()


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
