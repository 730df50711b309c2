//! The per-session FIX message log (`message_log = true` on a session): every message the
//! session's connections send and receive at the order-entry port, one line each, in
//! `<message_log_dir>/<SenderCompID>-<TargetCompID>.messages.log`:
//! `<UTC timestamp> in|out <the message as sent, SOH and all>`, like QuickFIX's file log.
//!
//! Role: the event loop copies each logged message into one buffer per iteration
//! ([`MessageLogSink::push`]) and hands the buffer to the `message-log` thread, which formats
//! and writes the lines. Sessions without the log cost one branch per message.
//!
//! Never: blocks the loop (a full channel drops the iteration's buffer, counted and noted in
//! the files as a line `... dropped N messages`), or logs a message twice.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Buffers in flight between the loop and the thread.
const CHANNEL: usize = 1024;

/// Direction of a logged message.
const IN: u8 = 0;
const OUT: u8 = 1;

/// The loop's side.
pub(crate) struct MessageLogSink {
    /// Session index -> logged.
    on: Vec<bool>,
    buf: Vec<u8>,
    tx: Sender<Vec<u8>>,
    dropped: u64,
}

impl MessageLogSink {
    /// Whether session `ix` is logged.
    #[inline]
    pub(crate) fn logs(&self, ix: usize) -> bool {
        self.on.get(ix).copied().unwrap_or(false)
    }

    /// One message of session `ix`, received (`inbound`) or sent, at `ts_ns`.
    pub(crate) fn push(&mut self, ix: u32, inbound: bool, ts_ns: u64, msg: &[u8]) {
        self.buf.extend_from_slice(&ix.to_le_bytes());
        self.buf.push(if inbound { IN } else { OUT });
        self.buf.extend_from_slice(&ts_ns.to_le_bytes());
        self.buf
            .extend_from_slice(&(msg.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(msg);
    }

    /// Hands this iteration's messages to the thread.
    pub(crate) fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let b = std::mem::take(&mut self.buf);
        match self.tx.try_send(b) {
            Ok(()) => {}
            Err(TrySendError::Full(b)) | Err(TrySendError::Disconnected(b)) => {
                self.dropped += count(&b);
                tracing::warn!(
                    dropped = self.dropped,
                    "message log behind: messages dropped"
                );
            }
        }
    }
}

/// Messages in a buffer.
fn count(mut b: &[u8]) -> u64 {
    let mut n = 0;
    while b.len() >= 17 {
        let len = u32::from_le_bytes(b[13..17].try_into().unwrap()) as usize;
        b = b.get(17 + len..).unwrap_or(&[]);
        n += 1;
    }
    n
}

/// Starts the `message-log` thread for the sessions named in `names` (index -> file stem)
/// whose flag is on; `None` if no session is logged.
pub(crate) fn start(
    dir: &Path,
    names: Vec<(String, bool)>,
) -> std::io::Result<Option<MessageLogSink>> {
    if !names.iter().any(|(_, on)| *on) {
        return Ok(None);
    }
    std::fs::create_dir_all(dir)?;
    let (tx, rx) = crossbeam_channel::bounded(CHANNEL);
    let on = names.iter().map(|(_, on)| *on).collect();
    let dir = dir.to_path_buf();
    std::thread::Builder::new()
        .name("message-log".into())
        .spawn(move || writer(dir, names, rx))?;
    Ok(Some(MessageLogSink {
        on,
        buf: Vec::with_capacity(64 * 1024),
        tx,
        dropped: 0,
    }))
}

fn writer(dir: PathBuf, names: Vec<(String, bool)>, rx: Receiver<Vec<u8>>) {
    let mut files: HashMap<u32, BufWriter<File>> = HashMap::new();
    let mut line = Vec::with_capacity(1024);
    for b in rx {
        let mut rest = &b[..];
        while rest.len() >= 17 {
            let ix = u32::from_le_bytes(rest[..4].try_into().unwrap());
            let dir_byte = rest[4];
            let ts = u64::from_le_bytes(rest[5..13].try_into().unwrap());
            let len = u32::from_le_bytes(rest[13..17].try_into().unwrap()) as usize;
            let Some(msg) = rest.get(17..17 + len) else {
                break;
            };
            rest = &rest[17 + len..];
            let Some((name, _)) = names.get(ix as usize) else {
                continue;
            };
            let f = match files.entry(ix) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    let path = dir.join(format!("{name}.messages.log"));
                    match OpenOptions::new().create(true).append(true).open(&path) {
                        Ok(f) => v.insert(BufWriter::new(f)),
                        Err(e) => {
                            tracing::error!(path = %path.display(), error = %e, "message log");
                            continue;
                        }
                    }
                }
            };
            line.clear();
            fix::write_utc_timestamp(&mut line, ts, fix::TimePrecision::Micros);
            line.extend_from_slice(if dir_byte == IN { b" in  " } else { b" out " });
            line.extend_from_slice(msg);
            line.push(b'\n');
            let _ = f.write_all(&line);
        }
        for f in files.values_mut() {
            let _ = f.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_logged_sessions_land_in_their_files_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let names = vec![
            ("A-RIALTO".to_string(), true),
            ("B-RIALTO".to_string(), false),
        ];
        let mut sink = start(dir.path(), names).unwrap().unwrap();
        assert!(sink.logs(0) && !sink.logs(1));
        sink.push(0, true, 1_700_000_000_000_000_000, b"8=FIX.4.4\x0135=A\x01");
        sink.push(
            0,
            false,
            1_700_000_000_000_001_000,
            b"8=FIX.4.4\x0135=A\x01",
        );
        sink.flush();
        drop(sink);
        // The thread ends when the sink is gone; wait for the file.
        let path = dir.path().join("A-RIALTO.messages.log");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut text = String::new();
        while std::time::Instant::now() < deadline {
            text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.lines().count() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "20231114-22:13:20.000000 in  8=FIX.4.4\x0135=A\x01",
                "20231114-22:13:20.000001 out 8=FIX.4.4\x0135=A\x01"
            ]
        );
        assert!(!dir.path().join("B-RIALTO.messages.log").exists());
    }

    #[test]
    fn count_reads_the_entries_of_a_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = start(dir.path(), vec![("X".into(), true)])
            .unwrap()
            .unwrap();
        sink.push(0, true, 0, b"abc");
        sink.push(0, false, 0, b"");
        assert_eq!(count(&sink.buf), 2);
    }
}
