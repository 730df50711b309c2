#!/usr/bin/env bash
# Apache Kafka in KRaft mode (each node a combined broker and controller, on 127.0.0.1 only) for
# Rialto's tests, benchmarks and users, from Maven Central's jars only (scripts/kafka/pom.xml).
# docs/kafka.md describes the settings, the ports and what a node costs.
#
# Usage:
#   scripts/kafka.sh resolve
#       Copies the jars into $RIALTO_KAFKA_LIB (default ~/.cache/rialto/kafka-4.4.0/lib) unless
#       it is complete, and prints that folder. Needs Maven (once) and Java 17 or later.
#   scripts/kafka.sh start --nodes 1|3 --dir DIR [--port-base P] [--owner PID] [--timeout S]
#       Writes DIR/nodeI.properties, formats DIR/dataI (a later start in DIR reuses the data),
#       starts the nodes in the background (DIR/nodeI.pid, DIR/nodeI.log), waits until every
#       node is up (S seconds at most, default 90) and prints the bootstrap servers. Node I
#       (1..N) listens on 127.0.0.1:P+2(I-1) for clients (PLAINTEXT) and on the next port for
#       the controllers; P is 19092 unless given. --owner PID: the nodes are killed when process
#       PID ends.
#   scripts/kafka.sh stop --dir DIR                  SIGTERM, SIGKILL after 20 s; the data stays
#   scripts/kafka.sh kill --dir DIR --node I         SIGKILL node I
#   scripts/kafka.sh restart --dir DIR --node I [--timeout S]
#       Stops node I if it runs, starts it again and waits until it is up, as start does.
#   scripts/kafka.sh topics --bootstrap B ARGS...    TopicCommand (kafka-topics.sh) on B
#   scripts/kafka.sh perf-producer ARGS...           ProducerPerformance (kafka-producer-perf-test.sh)
#
# Environment: RIALTO_KAFKA_LIB (the jars' folder), RIALTO_KAFKA_HEAP (a node's heap options,
# default "-Xmx256m -Xms256m"), RIALTO_KAFKA_JVM (a node's JIT and GC options, default the G1
# settings of Kafka's kafka-run-class.sh; the tests' nodes, which live for seconds, use
# "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
pom=$here/kafka/pom.xml
kafka_version=4.4.0
lib=${RIALTO_KAFKA_LIB:-$HOME/.cache/rialto/kafka-$kafka_version/lib}
read -ra heap_opts <<<"${RIALTO_KAFKA_HEAP:--Xmx256m -Xms256m}"
start_timeout_s=90
stop_timeout_s=20
# Written into the jars' folder last, with the pom's checksum: a folder without it (a resolve cut
# short) or with another pom's is resolved again.
marker=.rialto-resolved

# A node's JVM: the G1 settings of Kafka's kafka-run-class.sh (or RIALTO_KAFKA_JVM);
# slf4j-simple logs to stderr (the node's log file) with times; the configuration dumps (a
# thousand lines a start) left out.
read -ra jvm_opts <<<"${RIALTO_KAFKA_JVM:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent}"
node_opts=(
    "${jvm_opts[@]}" -Djava.awt.headless=true
    -Dorg.slf4j.simpleLogger.showDateTime=true
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss.SSS"
    -Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config.AbstractConfig=warn
)
# Short-lived tools (StorageTool, TopicCommand): quick to start, warnings only (at INFO the
# admin client prints its whole configuration).
tool_opts=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dorg.slf4j.simpleLogger.defaultLogLevel=warn)
# The benchmark peer: a fully compiling JVM, warnings only.
perf_opts=(-Dorg.slf4j.simpleLogger.defaultLogLevel=warn)

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
}

die() {
    echo "kafka.sh: $*" >&2
    exit 1
}

need() {
    command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"
}

check_java() {
    need java "install a JDK, version 17 or later (Debian: openjdk-17-jdk-headless)"
    local v
    v=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')
    [[ ${v%%.*} =~ ^[0-9]+$ ]] && [ "${v%%.*}" -ge 17 ] ||
        die "Kafka $kafka_version needs Java 17 or later; java is ${v:-of unknown version}"
}

pom_sum() {
    sha256sum "$pom" | cut -d' ' -f1
}

resolved() {
    [ -f "$lib/$marker" ] && [ "$(cat "$lib/$marker")" = "$(pom_sum)" ]
}

# The jars into $lib: copied into a folder beside it, which replaces it whole once complete,
# under a lock (concurrent test processes resolve once).
resolve() {
    resolved && return 0
    need mvn "install Maven (Debian: maven) and a JDK 17+ (openjdk-17-jdk-headless)"
    need flock "install util-linux"
    mkdir -p "$(dirname "$lib")"
    exec 9>"$lib.lock"
    flock 9
    if ! resolved; then
        local tmp=$lib.tmp.$$ old=$lib.old.$$
        rm -rf "$tmp" "$old"
        echo "kafka.sh: resolving Kafka $kafka_version's jars from Maven Central into $lib" >&2
        local out
        if ! out=$(mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
            -DincludeScope=runtime -DoutputDirectory="$tmp" 2>&1); then
            rm -rf "$tmp"
            echo "$out" >&2
            die "mvn dependency:copy-dependencies failed (above)"
        fi
        pom_sum >"$tmp/$marker"
        if [ -e "$lib" ]; then
            mv -T "$lib" "$old"
        fi
        mv -T "$tmp" "$lib"
        rm -rf "$old"
    fi
    exec 9>&-
}

# Whether pid $1 is the node whose properties are $2 (not another process that got its pid).
is_node() {
    local cmd
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
    [[ $cmd == *" kafka.Kafka $2 "* ]]
}

# The pid of node $2 in directory $1 if it runs.
running_pid() {
    local f=$1/node$2.pid pid
    [ -f "$f" ] || return 1
    pid=$(cat "$f")
    is_node "$pid" "$1/node$2.properties" || return 1
    echo "$pid"
}

client_port() {
    sed -n 's|^advertised.listeners=PLAINTEXT://127\.0\.0\.1:||p' "$1/node$2.properties"
}

port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Whether pid $1, node properties $2, has ended: no such process, a zombie whose threads have
# all ended (its files, the listening sockets among them, are closed only then: its command line
# is empty from the moment its first thread exits), or another process that got the pid.
node_gone() {
    local status cmd
    status=$(cat 2>/dev/null "/proc/$1/status") || return 0
    [[ $status == *$'State:\tZ'* && $status == *$'Threads:\t1\n'* ]] && return 0
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 0
    [ -n "$cmd" ] && [[ $cmd != *" kafka.Kafka $2 "* ]]
}

# Sends signal $2 to nodes $3... of directory $1 that run, and waits until they have ended, for
# $stop_timeout_s at most; returns 1 if some have not.
signal_nodes() {
    local dir=$1 sig=$2 i pid pids=() props=() deadline k
    shift 2
    for i in "$@"; do
        if pid=$(running_pid "$dir" "$i"); then
            kill "-$sig" "$pid" 2>/dev/null || true
            pids+=("$pid")
            props+=("$dir/node$i.properties")
        fi
    done
    deadline=$((SECONDS + stop_timeout_s))
    for ((k = 0; k < ${#pids[@]}; k++)); do
        until node_gone "${pids[k]}" "${props[k]}"; do
            [ $SECONDS -ge $deadline ] && return 1
            sleep 0.1
        done
    done
    return 0
}

# Stops nodes $2... of directory $1: SIGTERM, SIGKILL after $stop_timeout_s.
stop_nodes() {
    local dir=$1 i
    shift
    if ! signal_nodes "$dir" TERM "$@"; then
        echo "kafka.sh: still running after ${stop_timeout_s} s: SIGKILL" >&2
        kill_nodes "$dir" "$@"
    fi
    for i in "$@"; do rm -f "$dir/node$i.pid"; done
}

kill_nodes() {
    local dir=$1 i
    shift
    signal_nodes "$dir" KILL "$@" || die "nodes $* of $dir survive SIGKILL"
    for i in "$@"; do rm -f "$dir/node$i.pid"; done
}

# Kills pid $2 (node properties $3) once process $1 has ended.
watchdog() {
    while kill -0 "$1" 2>/dev/null && is_node "$2" "$3"; do sleep 1; done
    if is_node "$2" "$3"; then kill -KILL "$2" 2>/dev/null; fi
    return 0
}

# Starts node $2 of directory $1 in the background; the previous log becomes nodeI.log.1.
launch() {
    local dir=$1 i=$2 props=$1/node$2.properties log=$1/node$2.log pid owner
    [ -f "$log" ] && mv -f "$log" "$log.1"
    nohup java "${heap_opts[@]}" "${node_opts[@]}" -cp "$lib/*" kafka.Kafka "$props" \
        </dev/null >"$log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/node$i.pid"
    owner=$(cat "$dir/owner" 2>/dev/null || true)
    if [ -n "$owner" ]; then
        (watchdog "$owner" "$pid" "$props") </dev/null >/dev/null 2>&1 &
    fi
}

# Kills nodes $2... of directory $1 after a failed start, with the errors and the end of each
# one's log.
fail_start() {
    local dir=$1 why=$2 i
    shift 2
    for i in "$@"; do
        # The first errors (the cause, usually), then the end (a shutdown's lines, often).
        echo "--- the first errors in $dir/node$i.log:" >&2
        grep -m 5 -E '^[-0-9: .]+\[[^]]*\] (ERROR|FATAL) ' "$dir/node$i.log" | cut -c1-600 >&2 || true
        echo "--- the end of $dir/node$i.log:" >&2
        tail -n 15 "$dir/node$i.log" | cut -c1-600 >&2 || true
    done
    kill_nodes "$dir" "$@"
    die "$why (nodes $* killed)"
}

# Waits until nodes $2... of directory $1 are up: the log says "Kafka Server started" (which
# tells the node from another process that holds its port) and the client port accepts
# connections.
wait_ready() {
    local dir=$1 deadline=$((SECONDS + start_timeout_s)) i pending left
    shift
    pending=("$@")
    while [ ${#pending[@]} -gt 0 ]; do
        left=()
        for i in "${pending[@]}"; do
            running_pid "$dir" "$i" >/dev/null ||
                fail_start "$dir" "node $i exited while starting" "$@"
            if ! grep -qF "Kafka Server started" "$dir/node$i.log" ||
                ! port_open "$(client_port "$dir" "$i")"; then
                left+=("$i")
            fi
        done
        pending=(${left[@]+"${left[@]}"})
        [ ${#pending[@]} -eq 0 ] && break
        [ $SECONDS -ge "$deadline" ] &&
            fail_start "$dir" "nodes ${pending[*]} not up after ${start_timeout_s} s" "$@"
        sleep 0.2
    done
}

# A new cluster id: 16 random bytes in URL-safe base64 without padding (what
# `kafka-storage.sh random-uuid` prints), not starting with '-' (an option to the tools).
cluster_id() {
    local id
    while :; do
        id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
        [ "${id:0:1}" != - ] && break
    done
    echo "$id"
}

# Node $2's properties of an $3-node cluster in directory $1, ports from $4.
write_props() {
    local dir=$1 i=$2 n=$3 base=$4 voters="" k rf isr
    for ((k = 1; k <= n; k++)); do
        voters+="${voters:+,}$k@127.0.0.1:$((base + 2 * (k - 1) + 1))"
    done
    # Three nodes: every replicated topic on all three, writes acknowledged by two (one node
    # may be down); one node: nothing replicated.
    rf=$((n >= 3 ? 3 : 1))
    isr=$((n >= 3 ? 2 : 1))
    cat >"$dir/node$i.properties" <<EOF
# Written by scripts/kafka.sh (docs/kafka.md): node $i of $n, broker and controller in one.
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$((base + 2 * (i - 1))),CONTROLLER://127.0.0.1:$((base + 2 * (i - 1) + 1))
advertised.listeners=PLAINTEXT://127.0.0.1:$((base + 2 * (i - 1)))
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data$i
num.partitions=1
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
# Topics are made on purpose, never by a typo in a client.
auto.create.topics.enable=false
# The internal topics' partitions (default 50 each), made at the first group join or
# transaction: fewer make that first call quicker; a handful of groups needs no more.
offsets.topic.num.partitions=8
transaction.state.log.num.partitions=8
# A group's first join is not held 3 s (the default) for more members.
group.initial.rebalance.delay.ms=0
# Consumers may use session timeouts from 1 s (default 6 s): quick failure detection.
group.min.session.timeout.ms=1000
# A dead broker is fenced, and its partitions get new leaders, after 3 s (default 9 s).
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
EOF
}

# Parsed options.
nodes="" dir="" port_base=19092 owner="" node=""

parse() {
    while [ $# -gt 0 ]; do
        [ $# -ge 2 ] || usage
        case $1 in
        --nodes) nodes=$2 ;;
        --dir) dir=$2 ;;
        --port-base) port_base=$2 ;;
        --owner) owner=$2 ;;
        --node) node=$2 ;;
        --timeout) start_timeout_s=$2 ;;
        *) usage ;;
        esac
        shift 2
    done
}

# The existing directory $dir, absolute.
existing_dir() {
    [ -n "$dir" ] || usage
    [ -d "$dir" ] || die "no directory $dir"
    dir=$(cd "$dir" && pwd)
}

# The nodes of the cluster in $dir: 1..N for its N properties files.
node_ids() {
    local i=1
    while [ -f "$dir/node$i.properties" ]; do
        echo "$i"
        i=$((i + 1))
    done
}

check_timeout() {
    [[ $start_timeout_s =~ ^[0-9]+$ ]] || die "bad --timeout $start_timeout_s"
}

check_node() {
    [[ $node =~ ^[0-9]+$ ]] && [ -f "$dir/node$node.properties" ] ||
        die "no node $node in $dir"
}

cmd_start() {
    parse "$@"
    [ "$nodes" = 1 ] || [ "$nodes" = 3 ] || usage
    [ -n "$dir" ] || usage
    [[ $port_base =~ ^[0-9]+$ ]] && [ "$port_base" -ge 1024 ] &&
        [ $((port_base + 2 * nodes - 1)) -le 65535 ] || die "bad --port-base $port_base"
    [ -z "$owner" ] || [[ $owner =~ ^[0-9]+$ ]] || die "bad --owner $owner"
    check_timeout
    check_java
    resolve
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    local i pid formatted=0 id
    for i in $(node_ids); do
        if pid=$(running_pid "$dir" "$i"); then
            die "node $i of $dir runs (pid $pid): scripts/kafka.sh stop --dir $dir first"
        fi
    done
    for i in "$dir"/data*; do
        [ -e "$i" ] || continue
        [[ ${i##*/data} =~ ^[0-9]+$ ]] && [ "${i##*/data}" -le "$nodes" ] ||
            die "$dir holds a cluster of more nodes ($i): remove it or use another directory"
    done
    for ((i = 1; i <= nodes; i++)); do
        write_props "$dir" "$i" "$nodes" "$port_base"
        [ -f "$dir/data$i/meta.properties" ] && formatted=$((formatted + 1))
    done
    if [ "$formatted" = 0 ]; then
        # One cluster id for all the nodes; their storage formatted side by side.
        id=$(cluster_id)
        local fpids=()
        for ((i = 1; i <= nodes; i++)); do
            java "${tool_opts[@]}" -cp "$lib/*" kafka.tools.StorageTool format -t "$id" \
                -c "$dir/node$i.properties" </dev/null >"$dir/format$i.log" 2>&1 &
            fpids+=($!)
        done
        for ((i = 1; i <= nodes; i++)); do
            wait "${fpids[i - 1]}" ||
                die "formatting node $i failed: $(tail -n 5 "$dir/format$i.log")"
        done
    elif [ "$formatted" != "$nodes" ]; then
        die "$dir holds the data of $formatted of the $nodes nodes: remove it or use another directory"
    fi
    if [ -n "$owner" ]; then echo "$owner" >"$dir/owner"; else rm -f "$dir/owner"; fi
    local all=()
    for ((i = 1; i <= nodes; i++)); do
        launch "$dir" "$i"
        all+=("$i")
    done
    wait_ready "$dir" "${all[@]}"
    local b=""
    for i in "${all[@]}"; do b+="${b:+,}127.0.0.1:$(client_port "$dir" "$i")"; done
    echo "$b" >"$dir/bootstrap"
    echo "$b"
}

cmd_stop() {
    parse "$@"
    existing_dir
    # shellcheck disable=SC2046 # node ids are numbers
    stop_nodes "$dir" $(node_ids)
}

cmd_kill() {
    parse "$@"
    existing_dir
    check_node
    running_pid "$dir" "$node" >/dev/null || die "node $node of $dir is not running"
    kill_nodes "$dir" "$node"
}

cmd_restart() {
    parse "$@"
    existing_dir
    check_node
    check_timeout
    check_java
    resolve
    stop_nodes "$dir" "$node"
    launch "$dir" "$node"
    wait_ready "$dir" "$node"
    cat "$dir/bootstrap"
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
resolve)
    [ $# = 0 ] || usage
    check_java
    resolve
    echo "$lib"
    ;;
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
kill) cmd_kill "$@" ;;
restart) cmd_restart "$@" ;;
topics)
    [ $# -ge 2 ] && [ "$1" = --bootstrap ] || usage
    b=$2
    shift 2
    check_java
    resolve
    exec java "${tool_opts[@]}" -cp "$lib/*" org.apache.kafka.tools.TopicCommand \
        --bootstrap-server "$b" "$@"
    ;;
perf-producer)
    check_java
    resolve
    exec java "${perf_opts[@]}" -cp "$lib/*" org.apache.kafka.tools.ProducerPerformance "$@"
    ;;
*) usage ;;
esac
