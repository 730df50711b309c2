//! Cluster mode on Apache Kafka: instruments sharded over engine processes, each shard with an
//! active engine and hot standbys, any number of gateways (the FIX and HTTP edges).
//!
//! Role: the command log is topic `<prefix>.commands`, one partition per shard: a partition is
//! its shard's journal (a command's offset is its sequence number). Gateways append commands
//! with an idempotent producer (`acks=all`); every engine of the shard applies the partition
//! in order with the same `exchange::Exchange` as single-node mode; the active one publishes
//! each command's [`exchange::wire::Outcome`] to `<prefix>.events` (partitioned the same way),
//! which the gateways read back. Leadership is in the log itself ([`LogRecord::Takeover`]):
//! who is active is a function of the partition, like everything else (`docs/design/
//! scale-out.md` argues the choice). Engines report their role and position on
//! `<prefix>.status` for [`status`].
//!
//! Modules: [`engine`] (`rialto engine`), [`gateway`] (the link `rialto gateway` starts),
//! [`status`] (`rialto cluster status`), [`kafka`] (clients, topics).
//!
//! Never: on the single-node path; `server` does not depend on this crate.

pub mod engine;
pub mod gateway;
pub mod kafka;
pub mod status;

use exchange::codec::{Dec, DecodeError, Enc};
use exchange::wire::{Cause, Command};

/// One record of a shard's command log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogRecord {
    /// A gateway's command, stamped with the gateway's clock.
    Command {
        ts_ns: u64,
        cause: Cause,
        command: Command,
    },
    /// The active engine's heartbeat: time passes (`Input::Tick`) and the active is alive.
    Heartbeat {
        engine: String,
        epoch: u32,
        ts_ns: u64,
    },
    /// `engine` becomes the active one with `epoch`, if `epoch` is the current one plus one
    /// (the first such record in the log wins; any other is ignored).
    Takeover { engine: String, epoch: u32 },
    /// The active engine's next step of its pending mass cancels (`Input::Continue`).
    Continue { epoch: u32, ts_ns: u64 },
}

fn name(e: &mut Enc<'_>, s: &str) {
    e.bytes(s.as_bytes());
}

impl LogRecord {
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut e = Enc(out);
        match self {
            LogRecord::Command {
                ts_ns,
                cause,
                command,
            } => {
                e.u8(1);
                e.u64(*ts_ns);
                cause.encode(&mut e);
                command.encode(&mut e);
            }
            LogRecord::Heartbeat {
                engine,
                epoch,
                ts_ns,
            } => {
                e.u8(2);
                name(&mut e, engine);
                e.u32(*epoch);
                e.u64(*ts_ns);
            }
            LogRecord::Takeover { engine, epoch } => {
                e.u8(3);
                name(&mut e, engine);
                e.u32(*epoch);
            }
            LogRecord::Continue { epoch, ts_ns } => {
                e.u8(4);
                e.u32(*epoch);
                e.u64(*ts_ns);
            }
        }
    }

    pub fn decode(b: &[u8]) -> Result<LogRecord, DecodeError> {
        let mut d = Dec(b);
        let r = match d.u8()? {
            1 => LogRecord::Command {
                ts_ns: d.u64()?,
                cause: Cause::decode(&mut d)?,
                command: Command::decode(&mut d)?,
            },
            2 => LogRecord::Heartbeat {
                engine: d.str()?.to_string(),
                epoch: d.u32()?,
                ts_ns: d.u64()?,
            },
            3 => LogRecord::Takeover {
                engine: d.str()?.to_string(),
                epoch: d.u32()?,
            },
            4 => LogRecord::Continue {
                epoch: d.u32()?,
                ts_ns: d.u64()?,
            },
            _ => return Err(DecodeError("bad command-log record tag")),
        };
        d.end()?;
        Ok(r)
    }
}

/// Wall-clock time, ns since the epoch.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use exchange::{ClOrdId, NewOrder, Principal};

    #[test]
    fn log_records_round_trip_and_bad_bytes_are_errors() {
        let mut order = NewOrder::BLANK;
        order.cl_ord_id = ClOrdId::from_bytes(b"A1").unwrap();
        order.qty = 10;
        order.price = 100;
        let records = [
            LogRecord::Command {
                ts_ns: 7,
                cause: Cause {
                    gateway: 2,
                    record: 99,
                    index: 1,
                },
                command: Command::New {
                    who: Principal {
                        originator: 1025,
                        firm: 3,
                    },
                    order,
                },
            },
            LogRecord::Heartbeat {
                engine: "a".into(),
                epoch: 4,
                ts_ns: 5,
            },
            LogRecord::Takeover {
                engine: "b".into(),
                epoch: 5,
            },
            LogRecord::Continue { epoch: 5, ts_ns: 6 },
        ];
        for r in &records {
            let mut b = Vec::new();
            r.encode(&mut b);
            assert_eq!(&LogRecord::decode(&b).unwrap(), r);
            for cut in 0..b.len() {
                assert!(LogRecord::decode(&b[..cut]).is_err(), "{r:?} cut at {cut}");
            }
            b.push(0);
            assert!(LogRecord::decode(&b).is_err());
        }
        assert!(LogRecord::decode(&[9]).is_err());
    }
}
