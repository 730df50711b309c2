#!/usr/bin/env bash
# Makes a throwaway PKI for TLS tests (openssl, and keytool for the Java trust store) in DIR:
#
#   scripts/tls-test-certs.sh DIR [CLIENT_NAME...]
#
#   ca.pem, ca.key          a CA (EC P-256, valid 2 days)
#   server.pem, server.key  the server's certificate (localhost, 127.0.0.1) and key, PEM:
#                           rialto.toml [tls] cert_file and key_file; ca.pem is client_ca_file
#   client.pem, client.key  one client certificate (clientAuth) whose CommonName is the first
#                           CLIENT_NAME and whose SubjectAltName has a DNS name for each
#                           (default CLIENT1 CLIENT2 CLIENT3): it may log on as any of them
#   client.p12              the client's key and chain, PKCS12 (QuickFIX/J SocketKeyStore)
#   trust.p12               ca.pem as a PKCS12 trust store (QuickFIX/J SocketTrustStore)
#   rialto.toml             [tls] with the three PEM files, client certificates required
#
# Both stores' password is "changeit". For tests only: the keys are not protected.
set -euo pipefail
dir=${1:?usage: scripts/tls-test-certs.sh DIR [CLIENT_NAME...]}
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(CLIENT1 CLIENT2 CLIENT3)
mkdir -p "$dir"
cd "$dir"
pw=changeit
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)

openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 2 -subj "/CN=Rialto test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

# issue NAME SUBJECT EXTENSIONS: NAME.key and NAME.pem, signed by the CA.
issue() {
    openssl req "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
    printf '%b' "$3" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
issue server "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
sans=$(printf 'DNS:%s,' "${names[@]}")
issue client "/CN=${names[0]}" "subjectAltName=${sans%,}\nextendedKeyUsage=clientAuth\n"

openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -name client \
    -out client.p12 -passout "pass:$pw"
rm -f trust.p12
keytool -importcert -noprompt -alias rialto-test-ca -file ca.pem -keystore trust.p12 \
    -storetype PKCS12 -storepass "$pw" >/dev/null 2>&1

cat >rialto.toml <<EOF
[tls]
cert_file = "$PWD/server.pem"
key_file = "$PWD/server.key"
client_ca_file = "$PWD/ca.pem"
EOF
