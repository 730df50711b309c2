#!/usr/bin/env bash
# Builds the Java programs and runs the QuickFIX/J interop scenario against a FIX server.
#
#   java/run-interop.sh [HOST] [PORT] [more interop options, e.g. --reset --verbose]
#   java/run-interop.sh 127.0.0.1 9880 --fix-version 4.2,5.0sp2   # server: interop/rialto-versions.toml
#
# HOST defaults to 127.0.0.1, PORT to 9878 (rialto serve's default). Exit status 0 when every
# step passes, 1 when a check fails, 2 on bad arguments. The client's FIX sequence numbers are
# kept in java/interop/target/fix-store/HOST_PORT (override with FIX_STORE_DIR) so a later run
# against the same server resumes its sessions; if the server's data dir was wiped, delete that
# folder or pass --reset (ResetSeqNumFlag=Y on Logon).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
host="${1:-127.0.0.1}"
port="${2:-9878}"
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
(cd "$here" && mvn -q -B package -DskipTests) 1>&2
store="${FIX_STORE_DIR:-$here/interop/target/fix-store/${host}_${port}}"
exec java -jar "$here/interop/target/interop.jar" --host "$host" --port "$port" --store-dir "$store" "$@"
