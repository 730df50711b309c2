#!/usr/bin/env python3
"""Plays QuickFIX/J's server acceptance definitions against `rialto serve`.

QuickFIX/J (github.com/quickfix-j/quickfixj) checks its own acceptor with definition files
(`*.def`): lines of messages a client sends (`I`), messages it expects back (`E`), connections
(`iCONNECT`, `i2,CONNECT`) and expected disconnections (`eDISCONNECT`). This runner plays each
definition over TCP against a fresh `rialto serve`, with the semantics of their harness
(`quickfixj-core/src/test/java/quickfix/test/acceptance/`), and prints one line per definition
(on a failure: the first step that differed, field by field) and a total. Standard library only.

The definitions are QuickFIX/J's files: keep them outside this repository. To get them:

    git clone --depth 1 https://github.com/quickfix-j/quickfixj /tmp/quickfixj
    DEFS=/tmp/quickfixj/quickfixj-core/src/test/resources/quickfix/test/acceptance/definitions/server

or, from a clone without a work tree (bare or mirrored):

    git -C quickfixj.git archive HEAD \\
        quickfixj-core/src/test/resources/quickfix/test/acceptance/definitions/server \\
        | tar -x -C /tmp/qfj
    DEFS=/tmp/qfj/quickfixj-core/src/test/resources/quickfix/test/acceptance/definitions/server

Then, with a built binary (`cargo build --release -p rialto`):

    scripts/qfj-acceptance.py --defs $DEFS/fix44 --rialto target/release/rialto --fix-version 4.4
    scripts/qfj-acceptance.py --defs $DEFS/fix42 --rialto target/release/rialto --fix-version 4.2

`--only NAME` (a name or a glob; repeatable) plays some definitions; `--logs DIR` keeps the logs
(each definition's transcript.txt and its servers' output) there instead of a new temporary
directory; `--strict` compares Text and TestReqID as their harness does (below). Exit status 0
when no failure is Rialto's (or the runner's), 1 otherwise.

What their harness does, and so this runner:
- Sent lines (`I`, `I2,` for client 2): `<TIME>`, `<TIME+n>` and `<TIME-n>` become the UTC time
  now plus or minus n x 1.1 s, with milliseconds from FIX.4.2 on (whole seconds before);
  BodyLength (9) is inserted after BeginString unless the line starts its body with one;
  CheckSum (10) is computed and appended unless the line has one (`10=0` is sent as `10=000`).
  A line whose first field is not BeginString is sent as written (a garbled message). Sending
  on a connection the server closed is silently dropped.
- Expected lines (`E`, `E2,`): the next message received on that connection must have the same
  MsgType; every field received, except SendingTime (52), TransactTime (60), OrigSendingTime
  (122), BodyLength (9) and CheckSum (10), must be in the line with the same value (for Text
  (58), the line's value a prefix of the one received); every field of the line must be
  received (times and CheckSum with any value); BodyLength is compared when the line has one
  and its time fields have the lengths of those received. Fields are read as `tag=value<SOH>`,
  the last of a repeated tag counting; a field without a value is not read. Messages received
  and never expected are not checked.
- `iCONNECT`/`i1,CONNECT` connects client 1 (`i2,CONNECT` client 2) after 50 ms (their
  `atest.reconnectDelay`), closing that client's earlier connection first; `eDISCONNECT`/
  `e2,DISCONNECT` waits up to 20 s (theirs) for the server to close the connection.
- Their server: TargetCompID ISLD for clients with SenderCompID TW, in memory, with
  ResetOnDisconnect=Y, and an application (ATApplication) that echoes every NewOrderSingle (D)
  and SecurityDefinition (d) back as it came, except a PossResend (97=Y) order whose ClOrdID
  it has already seen.

Where this runner differs, and why:
- Rialto is an exchange, not an echo: where a line expects their echo (an expected D or d), any
  application message (MsgType not 0-5 or A: an ExecutionReport, a BusinessMessageReject...)
  is accepted, with the header fields the server sets compared as above (BeginString,
  MsgSeqNum, CompIDs, PossDupFlag, SendingTime and OrigSendingTime present), its body not.
- Text (58) is free text for a person: unless `--strict`, neither its wording nor its presence
  is compared, nor BodyLength, which follows from the wording. Likewise the TestReqID (112) of
  a TestRequest the server sends is its own choice (theirs is `TEST`): unless `--strict`, any
  value is accepted. A pass line lists the steps that passed only so.
- Waits are bounded: `--timeout` (default 5 s; theirs is 10 s) for each expected message, except
  for what a server sends on its own timer, a Heartbeat without TestReqID or a TestRequest:
  up to 2.5 x HeartBtInt + 5 s (the HeartBtInt of the connection's last Logon). An expected
  message on a connection the server closed fails at once.
- The server, one per definition: `rialto serve` with its own temporary data directory, on
  127.0.0.1 with a port the system chooses, market data off, with comp_id ISLD, one firm and one
  session TW in the version given, the instruments the definitions name in Symbol (55) (tick
  0.01, lot 1) and no end of trading day (DAY orders stay open whatever the time).

Failures that need their test server are listed apart from Rialto's own:
- reset-on-disconnect: their server resets both sides' sequence numbers at each new connection;
  Rialto keeps them across connections (as a venue must). A definition that fails after a
  second connection is played again with a fresh server for each connection made once every
  earlier one is closed, which is what their setting amounts to: if it passes so, it needs
  their reset-on-disconnect; otherwise the failure of that second play is reported.
- echo: the first difference is an application message where the line expects an
  administrative one, right after an order whose echo the definition expected and got
  answered: Rialto answered it with more messages than their one echo (an ExecutionReport New,
  then Canceled for a market order that found no liquidity); or right after a PossResend
  (97=Y) repeat of an order Rialto refused (an order without OrderQty, which their echo takes):
  a refused order was never entered, so its repeat is not one Rialto already has.
- their decoder: the first difference comes after the definition sent a message whose
  BodyLength runs into the next message. Their decoder then resumes after the expected end of
  the bad message and so loses the next one too (its source says it "drops messages
  unnecessarily"), which the definition expects; Rialto resumes at the next BeginString and
  processes the next message.
"""

import argparse
import datetime
import fnmatch
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

SOH = "\x01"

# Their harness's patterns (AcceptanceTestSuite.load, InitiateMessageStep, ExpectMessageStep).
MESSAGE_PATTERN = re.compile(r"I(\d,)*(8=FIXT?\.\d\.\d\x01)(.*?\x01)(10=.*|)")
TIME_PATTERN = re.compile(r"<TIME([+-](\d+))*>")
FIELD_PATTERN = re.compile(r"(\d+)=([^\x01]+)\x01")
EXPECT_CLIENT_PATTERN = re.compile(r"E(\d+),.*")
COMMENT_PATTERN = re.compile(r"[ \t]*#.*")
CONNECT_PATTERN = re.compile(r"i(\d*),?CONNECT")
DISCONNECT_PATTERN = re.compile(r"e(\d*),?DISCONNECT")
SET_SESSION_PATTERN = re.compile(r"iSET_SESSION.*")

TIME_FIELDS = ("52", "60", "122")
ADMIN_TYPES = {"0", "1", "2", "3", "4", "5", "A"}
ECHOED_TYPES = {"D", "d"}  # what their ATMessageCracker sends back
# The header fields a server sets on a message of its own; on an application answer that
# stands for their echo only these are compared (the rest of an echo's header is the order's).
SERVER_HEADER = ("8", "34", "43", "49", "52", "56", "122")
RECONNECT_DELAY_S = 0.05  # their atest.reconnectDelay
DISCONNECT_WAIT_S = 20.0  # their TestIoHandler.waitForDisconnect
CONNECT_WAIT_S = 5.0
SERVER_START_S = 20.0
SERVER_STOP_S = 10.0

# What a failure is: its tag on the definition's line, and its words in the total.
LABELS = {
    "rialto": ("Rialto's", "Rialto's"),
    "echo": ("needs their echo application", "need their echo application"),
    "reset-on-disconnect": ("needs their reset-on-disconnect", "need their reset-on-disconnect"),
    "their-decoder": ("needs their decoder's resynchronisation",
                      "need their decoder's resynchronisation"),
    "runner": ("the runner's", "the runner's"),
}
ALLOWANCE_NAMES = {"58": "Text", "9": "BodyLength", "112": "TestReqID"}


def show(text):
    """A message for people: SOH as `|`."""
    return text.replace(SOH, "|")


def parse_fields(text):
    """Their ExpectMessageStep.simpleParse: tag -> value, the last of a repeated tag counting."""
    return {m.group(1): m.group(2) for m in FIELD_PATTERN.finditer(text)}


def checksum(text):
    return sum(text.encode("latin-1")) % 256


def java_lines(data):
    """Lines as Java's BufferedReader.readLine splits them (at \\n, \\r or \\r\\n)."""
    lines = re.split(r"\r\n|\r|\n", data)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class Step:
    def __init__(self, kind, line, lineno):
        self.kind = kind  # "send", "expect", "connect", "disconnect" or "set_session"
        self.line = line
        self.lineno = lineno
        self.client = 1
        self.fields = {}
        if kind == "expect":
            m = EXPECT_CLIENT_PATTERN.fullmatch(line)
            self.client = int(m.group(1)) if m else 1
            self.fields = parse_fields(line)
        elif kind in ("connect", "disconnect"):
            m = (CONNECT_PATTERN if kind == "connect" else DISCONNECT_PATTERN).match(line)
            self.client = int(m.group(1)) if m.group(1) else 1


def load_definition(path):
    """Their AcceptanceTest.load: one step per line it recognises, other lines ignored."""
    with open(path, encoding="latin-1", newline="") as f:
        data = f.read()
    steps = []
    for n, line in enumerate(java_lines(data), 1):
        if COMMENT_PATTERN.fullmatch(line):
            continue
        if line.startswith("I"):
            steps.append(Step("send", line, n))
        elif line.startswith("E"):
            steps.append(Step("expect", line, n))
        elif CONNECT_PATTERN.fullmatch(line):
            steps.append(Step("connect", line, n))
        elif SET_SESSION_PATTERN.fullmatch(line):
            steps.append(Step("set_session", line, n))
        elif DISCONNECT_PATTERN.fullmatch(line):
            steps.append(Step("disconnect", line, n))
    return steps


def utc_timestamp(offset_ms, millis):
    now = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(milliseconds=offset_ms)
    text = now.strftime("%Y%m%d-%H:%M:%S")
    return text + ".%03d" % (now.microsecond // 1000) if millis else text


def insert_times(tail, begin_string):
    """Their InitiateMessageStep.insertTimes: <TIME+n> is now + n x 1100 ms."""
    millis = begin_string >= "FIX.4.2"
    while True:
        m = TIME_PATTERN.search(tail)
        if not m:
            return tail
        offset = 0
        if m.group(2) is not None:
            offset = int(m.group(2)) * 1100 * (-1 if m.group(1).startswith("-") else 1)
        tail = tail[:m.start()] + utc_timestamp(offset, millis) + tail[m.end():]


def build_message(line):
    """Their InitiateMessageStep.run: (client id, message to send, whether its BodyLength
    runs past its body)."""
    m = MESSAGE_PATTERN.fullmatch(line)
    long_body_length = False
    if m:
        client = int(m.group(1).replace(",", "")) if m.group(1) else 1
        version = m.group(2)
        tail = insert_times(m.group(3), version[2:9])
        trailer = "10=000" + SOH if m.group(4) == "10=0" + SOH else m.group(4)
        if tail.startswith("9="):
            declared = re.match(r"9=(\d+)\x01", tail)
            if declared:
                long_body_length = int(declared.group(1)) > len(tail) - declared.end()
            message = version + tail + trailer
        else:
            message = version + "9=%d%s" % (len(tail), SOH) + tail + trailer
    else:
        client = 1
        message = line[1:]
    if SOH + "10=" not in message:
        message += "10=%03d%s" % (checksum(message), SOH)
    return client, message, long_body_length


def split_frames(buf):
    """Splits received bytes into FIX frames: (frames, rest). A frame is (text, problem):
    problem None when BeginString, BodyLength and CheckSum frame it and the sum is right."""
    out = []
    while buf:
        start = buf.find(b"8=")
        if start < 0:
            return out, buf[-1:] if buf.endswith(b"8") else b""
        if start > 0:
            out.append((buf[:start].decode("latin-1"), "bytes outside any message"))
            buf = buf[start:]
        soh = buf.find(b"\x01")
        if soh < 0:
            return out, buf
        rest = buf[soh + 1:]
        m = re.match(rb"9=(\d+)\x01", rest)
        if not m:
            if re.fullmatch(rb"(9(=\d*)?)?", rest):
                return out, buf  # BodyLength not all here yet
            problem = "no BodyLength after BeginString"
        else:
            end = soh + 1 + m.end() + int(m.group(1))
            if len(buf) < end + 7:
                return out, buf
            trailer = buf[end:end + 7]
            if re.fullmatch(rb"10=\d{3}\x01", trailer):
                problem = None if sum(buf[:end]) % 256 == int(trailer[3:6]) else "wrong CheckSum"
                out.append((buf[:end + 7].decode("latin-1"), problem))
                buf = buf[end + 7:]
                continue
            problem = "BodyLength does not end at CheckSum"
        nxt = buf.find(b"8=FIX", 1)
        bad, buf = (buf, b"") if nxt < 0 else (buf[:nxt], buf[nxt:])
        out.append((bad.decode("latin-1"), problem))
    return out, buf


CLOSED = object()


class Connection:
    """One client connection; a thread queues every frame the server sends."""

    def __init__(self, port, client, transcript):
        self.client = client
        self.transcript = transcript
        self.heart_bt_int = 30
        self.closing = False
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=CONNECT_WAIT_S)
        self.sock.settimeout(None)
        self.inbox = queue.Queue()
        self.closed = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        buf = b""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                frames, buf = split_frames(buf + data)
                for text, problem in frames:
                    note = f"  [{problem}]" if problem else ""
                    self.transcript(f"{self.client} < {show(text)}{note}")
                    self.inbox.put((text, problem))
        except OSError:
            pass
        if buf:
            self.transcript(f"{self.client} < {show(buf.decode('latin-1'))}  [incomplete at close]")
        if not self.closing:
            self.transcript(f"{self.client} closed by the server")
        self.closed.set()
        self.inbox.put(CLOSED)

    def send(self, message):
        fields = parse_fields(message)
        if fields.get("35") == "A" and fields.get("108", "").lstrip("-").isdigit():
            self.heart_bt_int = max(int(fields["108"]), 1)
        self.transcript(f"{self.client} > {show(message)}")
        try:
            self.sock.sendall(message.encode("latin-1"))
        except OSError as e:
            # Their harness writes through MINA, which drops a write to a closed session.
            self.transcript(f"{self.client}   not sent: {e}")

    def next_message(self, timeout):
        """The next frame; CLOSED if the server closed the connection first; None on timeout."""
        try:
            item = self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is CLOSED:
            self.inbox.put(CLOSED)
        return item

    def close(self):
        self.closing = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        if not self.closed.is_set():
            self.transcript(f"{self.client} closed by the client")
        self.reader.join(timeout=5)


class Server:
    """A `rialto serve` with its own data directory; its output goes to files in `directory`."""

    def __init__(self, binary, directory, config_text):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        config = os.path.join(directory, "rialto.toml")
        with open(config, "w") as f:
            f.write(config_text)
        self.stdout_path = os.path.join(directory, "stdout.log")
        self.stderr = open(os.path.join(directory, "stderr.log"), "wb")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", config, "--data-dir", os.path.join(directory, "data"),
             "--listen", "127.0.0.1:0", "--market-data-listen", "off"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr)
        self.port = None
        self.listening = threading.Event()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()
        if not self.listening.wait(SERVER_START_S) or self.port is None:
            self.stop()
            raise RuntimeError(f"rialto serve did not listen within {SERVER_START_S:.0f} s "
                               f"(its output is in {directory})")

    def _pump(self):
        with open(self.stdout_path, "wb") as out:
            for line in self.proc.stdout:
                out.write(line)
                out.flush()
                m = re.search(rb"listening for FIX on 127\.0\.0\.1:(\d+)", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    self.listening.set()
        self.listening.set()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(SERVER_STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.pump.join(timeout=5)
        self.stderr.close()


def config_toml(begin_string, symbols):
    lines = ['comp_id = "ISLD"', 'trading_day_end = "off"', ""]
    for s in symbols:
        lines += ["[[instruments]]", f'symbol = "{s}"', 'tick = "0.01"', "lot = 1", ""]
    lines += ["[[firms]]", 'name = "TW"', "accounts = [1]", "",
              "[[sessions]]", 'sender_comp_id = "TW"', 'firm = "TW"',
              f'fix_version = "{begin_string}"', 'market_data = "off"', ""]
    return "\n".join(lines)


class Failure(Exception):
    def __init__(self, step, summary, details=(), received=None, runner=False):
        super().__init__(summary)
        self.step = step
        self.summary = summary
        self.details = list(details)
        self.received = received
        self.runner = runner


def compare(expected, actual, strict):
    """Their ExpectMessageStep.assertMessageEqual, every difference listed: (differences,
    allowances), both empty when equal their way. Unless `strict`, Text (58) and BodyLength (9),
    and the TestReqID (112) of a TestRequest, are left out, and listed in the allowances when
    they would have differed."""
    diffs, allowed = [], []
    loose = set() if strict else {"58"} | ({"112"} if expected.get("35") == "1" else set())
    if expected.get("35") != actual.get("35"):
        diffs.append(f"35 (MsgType): expected {expected.get('35')}, got {actual.get('35')}")
    for key, value in actual.items():
        if key in TIME_FIELDS or key in ("9", "10", "35"):
            continue
        out = diffs if key not in loose else allowed
        if key not in expected:
            out.append(f"{key}: not expected, got {value}")
        elif key == "58":
            if not value.startswith(expected[key]):
                out.append(f"58 (Text): expected to start with '{expected[key]}', got '{value}'")
        elif expected[key] != value:
            out.append(f"{key}: expected {expected[key]}, got {value}")
    for key in expected:
        if key not in actual:
            (diffs if key not in loose else allowed).append(f"{key}: expected {expected[key]}, absent")
    if "9" in expected and "9" in actual:
        lengths_differ = any(k in expected and k in actual and len(expected[k]) != len(actual[k])
                             for k in TIME_FIELDS)
        if not lengths_differ and expected["9"] != actual["9"]:
            (diffs if strict else allowed).append(
                f"9 (BodyLength): expected {expected['9']}, got {actual['9']}")
    return diffs, allowed


def compare_echo(expected, actual):
    """An application message standing for their echo: any application MsgType, and the header
    fields the server sets compared their way."""
    diffs = []
    if actual.get("35") in ADMIN_TYPES:
        diffs.append(f"35 (MsgType): expected an application message (their echo of "
                     f"{expected.get('35')}), got {actual.get('35')}")
    for key in SERVER_HEADER:
        if key in actual and key not in expected:
            diffs.append(f"{key}: not expected, got {actual[key]}")
        elif key in expected and key not in actual:
            diffs.append(f"{key}: expected {expected[key]}, absent")
        elif key in expected and key not in TIME_FIELDS and expected[key] != actual[key]:
            diffs.append(f"{key}: expected {expected[key]}, got {actual[key]}")
    return diffs


class Play:
    """One play of a definition against fresh servers. With `reset_emulation`, a connection
    made once every earlier one is closed gets a fresh server (their ResetOnDisconnect=Y)."""

    def __init__(self, args, steps, directory, config_text, reset_emulation=False):
        self.args = args
        self.steps = steps
        self.dir = directory
        self.config_text = config_text
        self.reset_emulation = reset_emulation
        self.servers = []
        self.conns = {}
        self.connects = 0
        self.echoes = []  # MsgTypes of the application messages that stood for their echo
        self.allowances = []  # (line, what differed) of the steps that passed by an allowance
        self.last_order_echoed = {}  # client -> whether its latest application message was echoed
        self.refused_orders = set()  # (client, ClOrdID) of orders Rialto refused (150=8)
        self.resent_refused = {}  # client -> whether its latest message is a PossResend of one
        self.long_body_length_sent = {}  # client -> whether it sent a BodyLength past its body
        os.makedirs(directory, exist_ok=True)
        self.transcript_file = open(os.path.join(directory, "transcript.txt"), "w",
                                    encoding="latin-1")
        self.lock = threading.Lock()
        self.t0 = time.monotonic()

    def transcript(self, text):
        with self.lock:
            self.transcript_file.write("%8.3f %s\n" % (time.monotonic() - self.t0, text))
            self.transcript_file.flush()

    def start_server(self):
        n = len(self.servers) + 1
        server = Server(self.args.rialto, os.path.join(self.dir, "server" if n == 1 else f"server{n}"),
                        self.config_text)
        self.servers.append(server)
        self.transcript(f"server started on port {server.port}, output in {server.dir}")

    def play(self):
        try:
            self.start_server()
            for step in self.steps:
                self.run_step(step)
        finally:
            for conn in self.conns.values():
                conn.close()
            for server in self.servers:
                server.stop()
            self.transcript_file.close()

    def conn(self, step, client):
        if client not in self.conns:
            raise Failure(step, f"client {client} is not connected", runner=True)
        return self.conns[client]

    def run_step(self, step):
        if step.kind == "connect":
            time.sleep(RECONNECT_DELAY_S)
            if step.client in self.conns:
                self.conns.pop(step.client).close()
            if self.reset_emulation and self.connects and all(c.closed.is_set() for c in self.conns.values()):
                for conn in self.conns.values():
                    conn.close()
                self.conns.clear()
                self.servers[-1].stop()
                self.start_server()
            try:
                self.conns[step.client] = Connection(self.servers[-1].port, step.client, self.transcript)
            except OSError as e:
                raise Failure(step, f"connection to server failed: {e}")
            self.connects += 1
            self.transcript(f"{step.client} connected")
        elif step.kind == "send":
            client, message, long_body_length = build_message(step.line)
            self.conn(step, client).send(message)
            if long_body_length:
                self.long_body_length_sent[client] = True
            fields = parse_fields(message)
            if fields.get("35") not in ADMIN_TYPES:
                self.last_order_echoed[client] = False
                self.resent_refused[client] = (fields.get("97") == "Y"
                                               and (client, fields.get("11")) in self.refused_orders)
        elif step.kind == "expect":
            self.expect(step)
        elif step.kind == "disconnect":
            if not self.conn(step, step.client).closed.wait(DISCONNECT_WAIT_S):
                raise Failure(step, f"client not disconnected within {DISCONNECT_WAIT_S:.0f} s")
        else:
            raise Failure(step, "iSET_SESSION changes their server's session in process: not "
                                "playable against another server", runner=True)

    def expect(self, step):
        conn = self.conn(step, step.client)
        expected = step.fields
        mtype = expected.get("35")
        timeout = self.args.timeout
        if mtype == "1" or (mtype == "0" and "112" not in expected):
            timeout = max(timeout, 2.5 * conn.heart_bt_int + 5)
        item = conn.next_message(timeout)
        if item is None:
            raise Failure(step, f"no message within {timeout:.0f} s")
        if item is CLOSED:
            raise Failure(step, "the server closed the connection instead")
        text, problem = item
        if problem:
            raise Failure(step, f"received a malformed frame ({problem})", received=text)
        actual = parse_fields(text)
        if mtype in ECHOED_TYPES:
            diffs, allowed = compare_echo(expected, actual), []
            if not diffs:
                self.echoes.append(actual.get("35"))
                self.last_order_echoed[step.client] = True
                if actual.get("150") == "8":
                    self.refused_orders.add((step.client, actual.get("11")))
        else:
            diffs, allowed = compare(expected, actual, self.args.strict)
        if diffs:
            raise Failure(step, "the message differs", diffs, received=text)
        self.allowances += [(step.lineno, a) for a in allowed]

    def classify(self, failure):
        """Which of LABELS a failure of this play is, short of reset-on-disconnect (which needs
        another play)."""
        step = failure.step
        if failure.runner:
            return "runner"
        if self.long_body_length_sent.get(step.client):
            return "their-decoder"
        if step.kind == "expect" and failure.received is not None:
            got = parse_fields(failure.received).get("35")
            if (step.fields.get("35") in ADMIN_TYPES and got not in ADMIN_TYPES
                    and (self.last_order_echoed.get(step.client)
                         or self.resent_refused.get(step.client))):
                return "echo"
        return "rialto"


def failure_lines(name, label, failure, play, note=None):
    step = failure.step
    lines = [f"FAIL  {name}  [{LABELS[label][0]}] line {step.lineno}: {failure.summary}"]
    if note:
        lines.append(f"        {note}")
    lines.append(f"        expected: {show(step.line)}")
    if failure.received is not None:
        lines.append(f"        got:      {show(failure.received)}")
    lines += [f"          {d}" for d in failure.details]
    lines.append(f"        logs: {play.dir}")
    return lines


def pass_line(name, play):
    notes = []
    if play.echoes:
        notes.append("their echo answered by Rialto's " + " ".join(play.echoes))
    if play.allowances:
        what = sorted({ALLOWANCE_NAMES[a.split(":")[0].split(" ")[0]] for _, a in play.allowances})
        where = sorted({n for n, _ in play.allowances})
        notes.append(f"{', '.join(what)} differ{'s' if len(what) == 1 else ''} at "
                     f"line{'s' if len(where) > 1 else ''} {', '.join(map(str, where))}")
    return f"pass  {name}" + (f"  ({'; '.join(notes)})" if notes else "")


def run_definition(args, name, steps, logs, config_text):
    """Plays one definition (twice if a reconnection may explain its failure): (label or
    "pass", output lines)."""
    play = Play(args, steps, os.path.join(logs, name), config_text)
    try:
        play.play()
        return "pass", [pass_line(name, play)]
    except Failure as f:
        failure = f
    label = play.classify(failure)
    index = steps.index(failure.step)
    if label != "rialto" or sum(1 for s in steps[:index] if s.kind == "connect") < 2:
        return label, failure_lines(name, label, failure, play)
    again = Play(args, steps, os.path.join(logs, name + ".reset-emulation"), config_text,
                 reset_emulation=True)
    try:
        again.play()
    except Failure as second:
        label = again.classify(second)
        note = ("played again with a fresh server at each new connection (their "
                "reset-on-disconnect), it fails so:")
        return label, failure_lines(name, label, second, again, note)
    note = (f"passes when played again with a fresh server at each new connection "
            f"(logs: {again.dir})")
    return "reset-on-disconnect", failure_lines(name, "reset-on-disconnect", failure, play, note)


def main():
    parser = argparse.ArgumentParser(
        description="Play QuickFIX/J's server acceptance definitions against rialto serve (the "
                    "header of this script says where to get them and what it checks).")
    parser.add_argument("--defs", required=True, help="directory of .def files (e.g. .../server/fix44)")
    parser.add_argument("--rialto", required=True, help="the rialto binary")
    parser.add_argument("--fix-version", required=True, choices=["4.2", "4.4"],
                        help="the definitions' FIX version (the session's BeginString)")
    parser.add_argument("--only", action="append", default=[], help="a definition's name or a glob (repeatable)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each expected message")
    parser.add_argument("--strict", action="store_true",
                        help="compare Text (58), BodyLength (9) and a TestRequest's TestReqID (112) as their harness does")
    parser.add_argument("--logs", help="directory for the logs (default: a new temporary directory)")
    args = parser.parse_args()

    begin_string = "FIX." + args.fix_version
    args.rialto = os.path.abspath(args.rialto)
    if not os.access(args.rialto, os.X_OK):
        parser.error(f"{args.rialto} is not executable")
    names = sorted(f[:-4] for f in os.listdir(args.defs) if f.endswith(".def"))
    if args.only:
        names = [n for n in names if any(fnmatch.fnmatch(n, p) or fnmatch.fnmatch(n + ".def", p) for p in args.only)]
    if not names:
        parser.error(f"no definitions to play in {args.defs}")

    definitions = {n: load_definition(os.path.join(args.defs, n + ".def")) for n in names}
    sent = [s.line for steps in definitions.values() for s in steps if s.kind == "send"]
    versions = Counter(m.group(1) for m in (re.match(r"I(?:\d,)*8=(FIXT?\.\d\.\d)\x01", line) for line in sent) if m)
    if versions and versions.most_common(1)[0][0] != begin_string:
        parser.error(f"the definitions speak {versions.most_common(1)[0][0]}, not {begin_string}")
    symbols = sorted({s for line in sent for s in re.findall(r"\x0155=([A-Za-z0-9.]+)\x01", line)})
    config_text = config_toml(begin_string, symbols)

    logs = os.path.abspath(args.logs) if args.logs else tempfile.mkdtemp(prefix=f"qfj-acceptance-{args.fix_version}-")
    os.makedirs(logs, exist_ok=True)
    print(f"QuickFIX/J's acceptance definitions in {args.defs} against {args.rialto} "
          f"({begin_string}); logs in {logs}", flush=True)

    # A SIGTERM stops the runner as Ctrl-C does, so that its servers are stopped too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    counts = Counter()
    for name in names:
        try:
            label, lines = run_definition(args, name, definitions[name], logs, config_text)
        except RuntimeError as e:
            label, lines = "runner", [f"FAIL  {name}  [{LABELS['runner'][0]}] {e}"]
        counts[label] += 1
        print("\n".join(lines), flush=True)

    failing = ", ".join(f"{counts[k]} {LABELS[k][1]}" for k in LABELS if counts[k])
    print(f"{begin_string}: {counts['pass']} of {len(names)} pass" + (f"; failing: {failing}" if failing else ""))
    if counts["pass"] == len(names) and not args.logs:
        shutil.rmtree(logs, ignore_errors=True)
    return 1 if counts["rialto"] or counts["runner"] else 0


if __name__ == "__main__":
    sys.exit(main())
