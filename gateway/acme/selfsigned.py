"""Writes a self-signed certificate for the given names when CERT_FILE does not exist yet.

HAProxy needs a certificate to start; on public stacks this one is replaced by the ACME
certificate, on the local stack it is the certificate. Uses the `cryptography` package that
certbot itself depends on.
"""
import datetime
import ipaddress
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def san(name: str) -> x509.GeneralName:
    """An address (a devnet gateway on a server reached by its IP) is an IP SAN, anything else a DNS name."""
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def main() -> int:
    cert_file, names = sys.argv[1], [n for n in sys.argv[2].split(",") if n]
    if os.path.exists(cert_file) and os.path.getsize(cert_file) > 0:
        print(f"{cert_file} exists; keeping it")
        return 0
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.timezone.utc)
    sans = [san(n) for n in names]
    if x509.IPAddress(ipaddress.ip_address("127.0.0.1")) not in sans:
        sans.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=825))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    os.makedirs(os.path.dirname(cert_file) or ".", exist_ok=True)
    old = os.umask(0o077)
    try:
        with open(cert_file + ".tmp", "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        os.replace(cert_file + ".tmp", cert_file)
    finally:
        os.umask(old)
    print(f"wrote a self-signed certificate for {', '.join(names)} to {cert_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
