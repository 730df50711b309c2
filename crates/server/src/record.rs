//! The journal's records: every input of the server's state machine (`Node`), and their
//! binary encoding (the payload of one journal record).
//!
//! Role: the complete, self-contained input stream. A record is what an edge made of one
//! inbound message (a FIX message, `fix_gateway::FixInput`; an API request,
//! `http_gateway::ApiInput`), or one connection, timer
//! or lifecycle event, or a checkpoint. Replaying the same records with the same timestamps
//! rebuilds the exchange and every edge's state, byte for byte.
//!
//! Encoding: one tag byte, then the variant's fields (`exchange::codec`). The journal record
//! kind says the encoding's version: [`KIND_RECORD`]; a journal of an earlier version (kind 1,
//! or 2: Logons with their passwords) is refused with a message naming both versions, never
//! misread.

use exchange::codec::{Dec, DecodeError, Enc};
use fix_gateway::{ConnId, EdgeCheckpoint, FixInput, SessionMark};
use http_gateway::ApiInput;

/// Journal record kind of a [`Record`] in this version's encoding.
pub const KIND_RECORD: u16 = 3;
/// Journal record kind of the encoding whose Logons carried their Password instead of the
/// verdict on their credentials: not readable by this version.
pub const KIND_RECORD_V2: u16 = 2;
/// Journal record kind of the record encoding of Rialto before the exchange and its FIX edge
/// were separate: not readable by this version.
pub const KIND_RECORD_V1: u16 = 1;

/// One input of the server's state machine.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Record {
    /// A new process run starts: every connection of the previous one is gone.
    Startup,
    /// Timer: heartbeats and test requests fall due on the record's timestamp.
    Tick,
    /// Clean stop: Logout to every logged-on session.
    Shutdown,
    /// A TCP connection closed.
    Disconnected { conn: ConnId },
    /// The event loop logs out the session on `conn` for its conduct: the edge sends Logout
    /// saying why and closes the connection.
    Evict { conn: ConnId, why: Evict },
    /// One FIX message from a connection.
    Fix(FixInput),
    /// One request of an API key (REST).
    Api(ApiInput),
    /// The state as it stood before this record, journaled by the event loop every
    /// `Config::checkpoint_every_records` records. Applying it changes nothing; a replay checks
    /// it (one that disagrees has diverged and stops with an error) and recovery uses the first
    /// one of the last segment to skip storing messages the resend stores will have forgotten
    /// by the end (`FixEdge::bound_stores`).
    Checkpoint(Checkpoint),
    /// The exchange's pending work goes on: one chunk of each pending mass cancel
    /// (`exchange::Input::Continue`). The event loop journals one per iteration while
    /// `Node::has_pending_work`; with nothing pending it changes nothing.
    Continue,
    /// Cluster mode, on a gateway: what shard `shard`'s engine reported for one command (an
    /// `exchange::wire::Outcome`, checked before it was journaled), read at `offset` of the
    /// event log's partition.
    Outcome {
        shard: u16,
        offset: u64,
        payload: Vec<u8>,
    },
}

/// Why a session is logged out by the server ([`Record::Evict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evict {
    /// Over its logout throttle: more than this many messages a second.
    Throttle { per_sec: u32 },
    /// It read its output too slowly: this many bytes were waiting.
    SlowConsumer { unread: u64 },
}

impl Evict {
    /// The Logout's Text.
    pub fn text(self) -> String {
        match self {
            Evict::Throttle { per_sec } => {
                format!("throttled: over {per_sec} messages a second (logout limit)")
            }
            Evict::SlowConsumer { unread } => {
                format!("slow consumer: {unread} bytes of output unread")
            }
        }
    }
}

/// See [`Record::Checkpoint`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    pub exchange: exchange::Checkpoint,
    pub fix: EdgeCheckpoint,
}

/// Encoded size of a session mark.
const MARK_LEN: usize = 4 + 8 + 8 + 8;

impl Record {
    /// A FIX 4.4 Logon on `conn` from `sender` to `RIALTO` (no password, 30 s heartbeats).
    pub fn fix44_logon(conn: ConnId, seq: u64, sender: &str, reset: bool) -> Record {
        Record::Fix(FixInput::fix44_logon(conn, seq, sender, reset))
    }

    /// Appends the binary encoding of `self` to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut e = Enc(out);
        match self {
            Record::Startup => e.u8(1),
            Record::Tick => e.u8(2),
            Record::Shutdown => e.u8(3),
            Record::Disconnected { conn } => {
                e.u8(4);
                e.u64(*conn);
            }
            Record::Fix(f) => {
                e.u8(5);
                f.encode(&mut e);
            }
            Record::Evict { conn, why } => {
                e.u8(9);
                e.u64(*conn);
                match why {
                    Evict::Throttle { per_sec } => {
                        e.u8(1);
                        e.u64(u64::from(*per_sec));
                    }
                    Evict::SlowConsumer { unread } => {
                        e.u8(2);
                        e.u64(*unread);
                    }
                }
            }
            Record::Checkpoint(c) => {
                e.u8(6);
                c.exchange.encode(&mut e);
                e.u64(c.fix.store_max);
                e.u32(c.fix.sessions.len() as u32);
                for m in &c.fix.sessions {
                    e.u32(m.session);
                    e.u64(m.comp_ids);
                    e.u64(m.out_seq);
                    e.u64(m.oldest_stored);
                }
            }
            Record::Continue => e.u8(7),
            Record::Outcome {
                shard,
                offset,
                payload,
            } => {
                e.u8(11);
                e.u32(u32::from(*shard));
                e.u64(*offset);
                e.u32(payload.len() as u32);
                e.0.extend_from_slice(payload);
            }
            Record::Api(a) => {
                e.u8(10);
                a.encode(&mut e);
            }
        }
    }

    pub fn decode(b: &[u8]) -> Result<Record, DecodeError> {
        let mut r = Record::Tick;
        r.decode_into(b)?;
        Ok(r)
    }

    /// Decodes `b` into `self`, reusing its storage: replay decodes every record into a
    /// recycled batch slot, and an order-entry message decoded into a slot that holds one
    /// only has its fields overwritten (`FixInput::decode_into`). The result equals
    /// `Record::decode(b)`. On error `self` holds some valid but unspecified record.
    #[inline]
    pub fn decode_into(&mut self, b: &[u8]) -> Result<(), DecodeError> {
        let mut d = Dec(b);
        match d.u8()? {
            1 => *self = Record::Startup,
            2 => *self = Record::Tick,
            3 => *self = Record::Shutdown,
            4 => *self = Record::Disconnected { conn: d.u64()? },
            9 => {
                let conn = d.u64()?;
                let why = match (d.u8()?, d.u64()?) {
                    (1, n) => Evict::Throttle {
                        per_sec: u32::try_from(n).map_err(|_| DecodeError("bad throttle"))?,
                    },
                    (2, n) => Evict::SlowConsumer { unread: n },
                    _ => return Err(DecodeError("bad evict reason")),
                };
                *self = Record::Evict { conn, why };
            }
            5 => match self {
                Record::Fix(f) => f.decode_into(&mut d)?,
                other => *other = Record::Fix(FixInput::decode(&mut d)?),
            },
            6 => {
                let exchange = exchange::Checkpoint::decode(&mut d)?;
                let store_max = d.u64()?;
                let n = d.u32()? as usize;
                if n > d.0.len() / MARK_LEN {
                    return Err(DecodeError("checkpoint longer than its record"));
                }
                let mut sessions = Vec::with_capacity(n);
                for _ in 0..n {
                    sessions.push(SessionMark {
                        session: d.u32()?,
                        comp_ids: d.u64()?,
                        out_seq: d.u64()?,
                        oldest_stored: d.u64()?,
                    });
                }
                *self = Record::Checkpoint(Checkpoint {
                    exchange,
                    fix: EdgeCheckpoint {
                        store_max,
                        sessions,
                    },
                });
            }
            7 => *self = Record::Continue,
            10 => *self = Record::Api(ApiInput::decode(&mut d)?),
            11 => {
                let shard = u16::try_from(d.u32()?).map_err(|_| DecodeError("bad shard"))?;
                let offset = d.u64()?;
                let n = d.u32()? as usize;
                *self = Record::Outcome {
                    shard,
                    offset,
                    payload: d.take(n)?.to_vec(),
                };
            }
            _ => return Err(DecodeError("unknown record tag")),
        }
        d.end()
    }

    /// True for messages that count against the application share of the inbound queue.
    #[inline]
    pub fn is_application(&self) -> bool {
        matches!(self, Record::Fix(f) if f.is_application())
    }
}

/// Decodes a journal record as a [`Record`]; an error names the segment, offset and seq, and
/// a record of an earlier version's encoding names both versions.
pub fn decode_record(rec: &journal::Record<'_>) -> Result<Record, crate::ServerError> {
    let mut r = Record::Tick;
    decode_record_into(rec, &mut r)?;
    Ok(r)
}

/// [`decode_record`] into an existing record, reusing its storage ([`Record::decode_into`]).
#[inline]
pub fn decode_record_into(
    rec: &journal::Record<'_>,
    into: &mut Record,
) -> Result<(), crate::ServerError> {
    if rec.kind != KIND_RECORD {
        return Err(bad_kind(rec));
    }
    into.decode_into(rec.payload)
        .map_err(|e| bad_record(rec, format!(": {e}")))
}

#[cold]
fn bad_kind(rec: &journal::Record<'_>) -> crate::ServerError {
    if rec.kind == KIND_RECORD_V1 || rec.kind == KIND_RECORD_V2 {
        return bad_record(
            rec,
            format!(
                " is in record format {}, written by an earlier Rialto; this \
                 version reads format {KIND_RECORD}: replay it with the version that wrote it, \
                 or start from an empty data directory",
                rec.kind
            ),
        );
    }
    bad_record(rec, format!(" has unknown kind {}", rec.kind))
}

#[cold]
fn bad_record(rec: &journal::Record<'_>, what: String) -> crate::ServerError {
    crate::ServerError(format!(
        "{} offset {}: record {}{what}",
        rec.segment.display(),
        rec.offset,
        rec.seq
    ))
}
