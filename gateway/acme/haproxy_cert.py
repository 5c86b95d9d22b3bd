"""Replace a certificate HAProxy already serves, through its runtime API (no reload)."""
import socket
import sys


def command(sock_path: str, text: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(sock_path)
        s.sendall(text.encode())
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out.decode()


def main() -> int:
    sock_path, cert_file = sys.argv[1], sys.argv[2]
    with open(cert_file) as f:
        pem = f.read().strip()
    answer = command(sock_path, f"set ssl cert {cert_file} <<\n{pem}\n\n")
    if "Transaction created" not in answer and "Transaction updated" not in answer:
        print(f"haproxy refused the certificate: {answer.strip()}", file=sys.stderr)
        return 1
    answer = command(sock_path, f"commit ssl cert {cert_file}\n")
    if "Success" not in answer:
        print(f"haproxy did not commit the certificate: {answer.strip()}", file=sys.stderr)
        return 1
    print(f"haproxy now serves {cert_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
