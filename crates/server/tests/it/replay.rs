//! Determinism of the server's state machine (`Node`: the FIX edge's sessions and the
//! exchange), without sockets: a seeded random stream of journal records (logons, orders,
//! cancels, replaces, mass cancels, status, resend requests, sequence resets, gaps and
//! repeats, ticks, disconnects, checkpoints) is applied to one node; at random points it is
//! snapshotted and restored into a second one, and from then on both must produce
//! byte-identical FIX output and equal state hashes. This is what makes "snapshot + tail
//! replay == full replay" hold. A third node applies the stream in recovery mode (no output
//! formatted, ClOrdID hashes computed ahead as recovery's decoding thread does:
//! `Node::apply_prehashed`); at the end it goes live and must answer a ResendRequest for
//! everything with exactly the bytes the live one sends (the resend store keeps
//! ExecutionReport recipes and formats them only when resent). The stream runs with the
//! default store size and with a tiny one, so eviction is exercised too.

use exchange::{Backing, ClHashes, ClOrdId, NewOrder, Replace};
use fix::app::Echo;
use fix::{InHeader, Inbound, Text};
use fix_gateway::{AppMsg, FixInput, Outbox};
use server::node::record_hashes;
use server::record::KIND_RECORD;
use server::{Config, Node, Record};
use std::path::Path;
use std::sync::Arc;
use types::{OrdType, Side, TimeInForce};

/// The workspace's xorshift, with the two calls these tests make.
struct Rng(types::XorShift64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
}

/// A FIX message on connection `conn` with MsgSeqNum `seq` (SendingTime set, and
/// OrigSendingTime for a PossDup).
fn fix(conn: u64, seq: u64, poss_dup: bool, msg: Inbound<AppMsg>) -> Record {
    Record::Fix(FixInput {
        conn,
        header: InHeader {
            msg_seq_num: seq,
            poss_dup,
            sending_time_ns: 1,
            orig_sending_time_ns: if poss_dup { 1 } else { 0 },
            ..InHeader::default()
        },
        msg,
    })
}

/// A Logon from `sender` on `conn` with MsgSeqNum `seq` (no reset).
fn logon(conn: u64, seq: u64, sender: &str) -> Record {
    Record::fix44_logon(conn, seq, sender, false)
}

/// A ResendRequest for everything from `begin` on.
fn resend_request(conn: u64, seq: u64, begin: u64) -> Record {
    fix(
        conn,
        seq,
        false,
        Inbound::ResendRequest {
            begin: Some(begin),
            end: Some(0),
        },
    )
}

fn cl(s: String) -> ClOrdId {
    ClOrdId::from(s.as_str())
}

fn random_input(r: &mut Rng, seqs: &mut [u64], next_cl: &mut u64) -> Record {
    let s = r.below(seqs.len() as u64) as usize;
    let conn = s as u64 + 10;
    match r.below(100) {
        0..=1 => return Record::Tick,
        2 if r.below(5) == 0 => return Record::Disconnected { conn },
        _ => {}
    }
    let seq = seqs[s];
    let name = format!("CLIENT{}", s + 1);
    if s != 0 && r.below(400) == 0 {
        // A logon that resets both sides' numbers (and empties the session's store); not
        // session 0's, whose stored reports the end of the test asks for.
        seqs[s] = 2;
        return Record::fix44_logon(conn, 1, &name, true);
    }
    let msg = match r.below(100) {
        0..=4 => FixInput::fix44_logon(conn, seq, &name, false).msg,
        5..=54 => {
            *next_cl += 1;
            Inbound::App(AppMsg::New(NewOrder {
                cl_ord_id: cl(format!("c{}", *next_cl)),
                symbol: r.below(3) as u32,
                side: if r.below(2) == 0 {
                    Side::Buy
                } else {
                    Side::Sell
                },
                ord_type: if r.below(10) == 0 {
                    OrdType::Market
                } else {
                    OrdType::Limit
                },
                tif: [
                    TimeInForce::Day,
                    TimeInForce::Gtc,
                    TimeInForce::Ioc,
                    TimeInForce::Fok,
                ][r.below(4) as usize],
                price: 995 + r.below(10) as i64,
                qty: 1 + r.below(20),
                account: None,
                post_only: r.below(10) == 0,
                ..Default::default()
            }))
        }
        55..=69 => {
            *next_cl += 1;
            Inbound::App(AppMsg::Cancel {
                cl_ord_id: cl(format!("c{}", *next_cl)),
                orig_cl_ord_id: cl(format!("c{}", 1 + r.below(*next_cl))),
            })
        }
        70..=84 => {
            *next_cl += 1;
            Inbound::App(AppMsg::Replace(Replace {
                cl_ord_id: cl(format!("c{}", *next_cl)),
                orig_cl_ord_id: cl(format!("c{}", 1 + r.below(*next_cl))),
                symbol: r.below(3) as u32,
                price: 995 + r.below(10) as i64,
                qty: 1 + r.below(30),
                stop_price: 0,
            }))
        }
        85..=87 => Inbound::App(AppMsg::MassCancel {
            cl_ord_id: cl(format!("m{}", r.next())),
            request_type: if r.below(2) == 0 { 7 } else { 1 },
            symbol: Some(r.below(3) as u32),
            side: None,
        }),
        88..=91 => Inbound::App(AppMsg::Status {
            cl_ord_id: cl(format!("c{}", 1 + r.below(*next_cl + 1))),
            echo: Echo::EMPTY,
        }),
        // Trading-status subscriptions (and unsubscribes): edge state the snapshot carries.
        92 => Inbound::App(AppMsg::TradingStatus {
            req_id: fix::Text::from(["t1", "t2"][r.below(2) as usize]),
            subscription: r.below(3) as u8,
        }),
        93..=94 => Inbound::ResendRequest {
            begin: Some(1 + r.below(20)),
            end: Some(0),
        },
        95..=97 => {
            // Reset mode: recovers from any gap (messages queued behind it below the new
            // number are dropped, those above it wait on).
            seqs[s] = seq + 3;
            return fix(
                conn,
                seq,
                false,
                Inbound::SequenceReset {
                    new_seq: Some(seq + 3),
                    gap_fill: false,
                },
            );
        }
        _ => Inbound::Heartbeat {
            test_req_id: Text::EMPTY,
        },
    };
    // Mostly in sequence, sometimes a gap or a repeat.
    let (sent, poss_dup) = match r.below(200) {
        0 => (seq + 2, false),
        1..=4 => (seq.saturating_sub(1), true),
        _ => (seq, false),
    };
    if sent >= seq {
        seqs[s] = sent + 1;
    }
    fix(conn, sent, poss_dup, msg)
}

#[test]
fn snapshot_restore_is_indistinguishable_from_the_original() {
    for seed in [1u64, 7, 42, 1234, 99999] {
        run_stream(seed, Config::defaults().lenient().resend_store_max);
    }
}

#[test]
fn a_small_resend_store_evicts_identically_after_restore_and_replay() {
    for seed in [3u64, 77, 4242] {
        run_stream(seed, 7);
    }
}

/// Disconnects session 1's current connection, logs it on again from a new one and asks for
/// every message: the answer (resent messages with PossDupFlag, gap fills) as bytes.
fn resend_everything(x: &mut Node, seq: &mut u64, ts: u64, msg_seq: u64) -> Vec<u8> {
    let mut out = Outbox::default();
    for input in [
        Record::Disconnected { conn: 10 },
        logon(500, msg_seq, "CLIENT1"),
        resend_request(500, msg_seq + 1, 1),
    ] {
        *seq += 1;
        x.apply(*seq, ts, &input, &mut out);
    }
    out.buf
}

/// An empty node for `cfg`, its tables resident (as the live loop's).
fn node(cfg: &Config) -> Node {
    Node::new(cfg, Backing::Resident)
}

/// The snapshot of `x` (`Node::snapshot_and_hash`).
fn snapshot(x: &Node) -> Vec<u8> {
    let mut snap = Vec::new();
    x.snapshot_and_hash(&mut snap);
    snap
}

fn run_stream(seed: u64, store_max: usize) {
    {
        let mut cfg = Config::defaults().lenient();
        cfg.orders_max = 1 << 14;
        cfg.resend_store_max = store_max;
        let mut r = Rng(types::XorShift64::new(
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        ));
        let mut a = node(&cfg);
        // Recovery mode (no framing of output) must reach the very same state.
        let mut quiet = node(&cfg);
        quiet.set_replaying(true);
        // As recovery applies: ClOrdID hashes computed ahead (or, for every third input, not:
        // then the exchange computes them), which must change nothing.
        let hasher = quiet.cl_hasher();
        let mut oq = Outbox::default();
        let mut seqs = vec![1u64; 4];
        let mut next_cl = 0;
        let (mut oa, mut ob) = (Outbox::default(), Outbox::default());
        let mut b: Option<Node> = None;
        let mut ts = 1_800_000_000_000_000_000u64;
        // Everything applied, for the bounded replay at the end.
        let mut journal: Vec<(u64, u64, Record)> = Vec::new();
        for seq in 1..=3000u64 {
            ts += r.below(300_000_000);
            // Now and then a checkpoint, as the event loop journals them.
            let input = if r.below(60) == 0 {
                Record::Checkpoint(a.checkpoint())
            } else {
                random_input(&mut r, &mut seqs, &mut next_cl)
            };
            journal.push((seq, ts, input.clone()));
            let mut bytes = Vec::new();
            input.encode(&mut bytes);
            assert_eq!(Record::decode(&bytes).unwrap(), input);
            oa.clear();
            a.apply(seq, ts, &input, &mut oa);
            oq.clear();
            let hashes = if seq % 3 == 0 {
                ClHashes::default()
            } else {
                record_hashes(&hasher, &input)
            };
            quiet.apply_prehashed(seq, ts, &input, hashes, &mut oq);
            if let Some(b) = b.as_mut() {
                ob.clear();
                b.apply(seq, ts, &input, &mut ob);
                assert_eq!(oa.buf, ob.buf, "seed {seed} seq {seq}: output differs");
                if seq % 250 == 0 {
                    assert_eq!(a.state_hash(), b.state_hash(), "seed {seed} seq {seq}");
                }
            }
            if seq == 1500 || r.below(700) == 0 {
                let snap = snapshot(&a);
                // Either backing (a replica made while the loop serves is `Lazy`): the same
                // state, and from here on the same output as the original.
                let backing = if seq % 2 == 0 {
                    Backing::Lazy
                } else {
                    Backing::Resident
                };
                let restored = Node::restore(&cfg, &snap, backing).unwrap();
                assert_eq!(
                    restored.state_hash(),
                    a.state_hash(),
                    "seed {seed} seq {seq}"
                );
                assert_eq!(
                    snap,
                    snapshot(&restored),
                    "snapshot of a restored node is identical"
                );
                b = Some(restored);
            }
        }
        if let Some(b) = &b {
            assert_eq!(a.state_hash(), b.state_hash(), "seed {seed} at the end");
        }
        assert_eq!(
            a.state_hash(),
            quiet.state_hash(),
            "seed {seed}: replay mode"
        );
        assert!(a.divergence().is_none() && quiet.divergence().is_none());
        quiet.set_replaying(false);
        // A replay whose stores are bounded by a checkpoint (each of the last few, as
        // `recovery::store_bound` may find any of them) skips storing what the stores forget
        // and ends in the same state, answering a ResendRequest with the same bytes.
        let seq = 3000;
        let a_hash = a.state_hash();
        let live = resend_everything(&mut a, &mut seq.clone(), ts + 1, seqs[0]);
        let replayed = resend_everything(&mut quiet, &mut seq.clone(), ts + 1, seqs[0]);
        assert_eq!(live, replayed, "seed {seed}: resend after a quiet replay");
        let checkpoints: Vec<usize> = (0..journal.len())
            .filter(|&i| matches!(journal[i].2, Record::Checkpoint(_)))
            .collect();
        let mut bounded_any = false;
        for &at in checkpoints.iter().rev().take(4) {
            let Record::Checkpoint(cp) = &journal[at].2 else {
                unreachable!()
            };
            let mut x = node(&cfg);
            x.set_replaying(true);
            bounded_any |= x.bound_stores(journal[at].0, cp);
            let mut o = Outbox::default();
            for (seq, ts, input) in &journal {
                o.clear();
                x.apply(*seq, *ts, input, &mut o);
            }
            x.unbound_stores();
            x.set_replaying(false);
            assert!(
                x.divergence().is_none(),
                "seed {seed}: {:?}",
                x.divergence()
            );
            assert_eq!(
                x.state_hash(),
                a_hash,
                "seed {seed}: replay bounded at record {}",
                journal[at].0
            );
            let resent = resend_everything(&mut x, &mut seq.clone(), ts + 1, seqs[0]);
            assert_eq!(live, resent, "seed {seed}: resend after a bounded replay");
        }
        // (The default store never fills in this stream; the small one does.)
        assert!(
            bounded_any || store_max > 100,
            "seed {seed}: some checkpoint bounded the stores ({} checkpoints)",
            checkpoints.len()
        );

        let text = String::from_utf8_lossy(&live);
        assert!(
            text.contains("\x0135=8\x01") && text.contains("\x0143=Y\x01"),
            "seed {seed}: ExecutionReports were resent with PossDupFlag"
        );
        let stored = text.matches("\x0135=8\x01").count();
        assert!(
            stored <= store_max,
            "seed {seed}: {stored} reports resent, store holds {store_max}"
        );
        let stats = a.exchange.stats;
        // A Logon on a logged-on session logs it out until its next Logon: a fair share of
        // the stream meets a session that is down.
        assert!(
            stats.orders > 300 && stats.trades > 50,
            "seed {seed}: the stream placed orders and traded: {stats:?}"
        );
    }
}

#[test]
fn damaged_snapshots_are_refused_not_trusted() {
    let cfg = Config::defaults().lenient();
    let snap = snapshot(&node(&cfg));
    assert!(Node::restore(&cfg, &snap, Backing::Lazy).is_ok());
    for cut in [0, 4, 8, 20, snap.len() / 2, snap.len() - 1] {
        assert!(
            Node::restore(&cfg, &snap[..cut], Backing::Lazy).is_err(),
            "cut at {cut}"
        );
    }
    // Trailing bytes are damage too.
    let mut longer = snap.clone();
    longer.push(0);
    assert!(Node::restore(&cfg, &longer, Backing::Lazy).is_err());
}

#[test]
fn a_snapshot_of_an_older_format_is_skipped_and_the_journal_replayed_from_the_start() {
    use journal::{Durability, JournalConfig, JournalWriter};
    let dir = tempfile::tempdir().unwrap();
    let cfg = Arc::new(Config::defaults().lenient());
    let mut r = Rng(types::XorShift64::new(0x1234_5678_9abc_def1));
    let mut seqs = vec![1u64; 4];
    let mut next_cl = 0;
    let mut x = node(&cfg);
    let (mut j, _) = JournalWriter::open(dir.path(), JournalConfig::default()).unwrap();
    let ts = 1_800_000_000_000_000_000u64;
    for seq in 1..=400u64 {
        let input = random_input(&mut r, &mut seqs, &mut next_cl);
        journal_and_apply(&mut j, &mut x, seq, ts + seq, &input);
    }
    j.commit(Durability::Process).unwrap();
    // A snapshot at 300 in an earlier layout (the gateway's, magic RIALTOGW), checksummed by
    // the journal.
    let mut old = b"RIALTOGW".to_vec();
    old.extend_from_slice(&[0u8; 64]);
    journal::snapshot::write(dir.path(), 300, &old).unwrap();
    let mut notes = Vec::new();
    let (y, rec) = server::recover(&cfg, dir.path(), true, |m| notes.push(m.to_string())).unwrap();
    assert_eq!(rec.snapshot_seq, None);
    assert_eq!(rec.replayed, 400);
    assert_eq!(y.state_hash(), x.state_hash());
    assert!(
        notes.iter().any(|n| n.contains("older format")),
        "start says why it replays everything: {notes:?}"
    );
}

/// A journal of `n` random inputs in small segments (many of them), plus the exchange after
/// each of the given sequence numbers' snapshots (written to the data dir) and the final one.
struct Recorded {
    dir: tempfile::TempDir,
    cfg: Arc<Config>,
    inputs: Vec<Record>,
}

fn small_segments() -> journal::JournalConfig {
    journal::JournalConfig {
        segment_size_bytes: 32 << 10,
        batch_buffer_bytes: 16 << 10,
        payload_len_max: 4 << 10,
    }
}

const TS0: u64 = 1_800_000_000_000_000_000;

/// Journals `input` as record `seq` at `ts` (asserting the number the journal gives it) and
/// applies it to `x`, as the server's loop does.
fn journal_and_apply(
    j: &mut journal::JournalWriter,
    x: &mut Node,
    seq: u64,
    ts: u64,
    input: &Record,
) {
    let mut buf = Vec::new();
    input.encode(&mut buf);
    assert_eq!(j.append(KIND_RECORD, ts, &buf).unwrap(), seq);
    x.apply(seq, ts, input, &mut Outbox::default());
}

fn record_journal(n: u64, snapshots_at: &[u64]) -> Recorded {
    use journal::{Durability, JournalWriter};
    let dir = tempfile::tempdir().unwrap();
    let cfg = Arc::new(Config::defaults().lenient());
    let mut r = Rng(types::XorShift64::new(0x0ddb_a11c_afe0_1234));
    let mut seqs = vec![1u64; 4];
    let mut next_cl = 0;
    let mut x = node(&cfg);
    x.set_replaying(true);
    let (mut j, _) = JournalWriter::open(dir.path(), small_segments()).unwrap();
    let mut inputs = Vec::new();
    for seq in 1..=n {
        let input = random_input(&mut r, &mut seqs, &mut next_cl);
        journal_and_apply(&mut j, &mut x, seq, TS0 + seq, &input);
        if snapshots_at.contains(&seq) {
            journal::snapshot::write(dir.path(), seq, &snapshot(&x)).unwrap();
        }
        inputs.push(input);
    }
    j.commit(Durability::Process).unwrap();
    Recorded { dir, cfg, inputs }
}

impl Recorded {
    /// State hash after applying records `1..=upto` from scratch.
    fn hash_after(&self, upto: u64) -> u64 {
        let mut x = node(&self.cfg);
        x.set_replaying(true);
        let mut out = Outbox::default();
        for (i, input) in self.inputs[..upto as usize].iter().enumerate() {
            let seq = i as u64 + 1;
            x.apply(seq, TS0 + seq, input, &mut out);
            out.clear();
        }
        x.set_replaying(false);
        x.state_hash()
    }

    /// Segment file and offset of record `seq`.
    fn locate(&self, seq: u64) -> (std::path::PathBuf, u64) {
        let mut rd = journal::JournalReader::open(self.dir.path(), seq).unwrap();
        let rec = rd.next_record().unwrap().unwrap();
        assert_eq!(rec.seq, seq);
        (rec.segment.to_path_buf(), rec.offset)
    }

    fn flip(&self, path: &std::path::Path, at: u64) {
        let mut bytes = std::fs::read(path).unwrap();
        bytes[at as usize] ^= 0x20;
        std::fs::write(path, bytes).unwrap();
    }

    /// A last write that reached the disk only up to `at`: zeroes the rest of `path` (the rest
    /// of the last record and the commit marker after it).
    fn tear(&self, path: &std::path::Path, at: u64) {
        let mut bytes = std::fs::read(path).unwrap();
        bytes[at as usize..].fill(0);
        std::fs::write(path, bytes).unwrap();
    }

    /// Every file of the journal directory, for "nothing was modified" checks.
    fn journal_bytes(&self) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(self.dir.path().join("journal"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "seg"))
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|p| {
                let b = std::fs::read(&p).unwrap();
                (p, b)
            })
            .collect()
    }

    fn start(
        &self,
    ) -> Result<
        (
            Node,
            journal::JournalWriter,
            journal::RecoveryReport,
            server::Recovered,
            Vec<String>,
        ),
        server::ServerError,
    > {
        let mut notes = Vec::new();
        let o = server::recover_and_open(&self.cfg, self.dir.path(), small_segments(), |m| {
            notes.push(m.to_string())
        })?;
        // The snapshot handed on is the one the state came from.
        assert_eq!(o.snapshot.as_ref().map(|s| s.seq), o.recovered.snapshot_seq);
        Ok((o.node, o.journal, o.report, o.recovered, notes))
    }
}

#[test]
fn start_up_reads_the_journal_once_truncates_a_torn_tail_and_matches_a_full_replay() {
    let rec = record_journal(3000, &[1000, 2000]);
    // The last write is torn inside its last record: its checksum fails, and nothing valid
    // follows (no commit marker either).
    let (seg, off) = rec.locate(3000);
    rec.tear(&seg, off + 30);
    let (x, j, report, r, _) = rec.start().unwrap();
    assert!(report.segments.len() > 5, "several segments: {report}");
    assert_eq!(r.snapshot_seq, Some(2000));
    assert_eq!(r.replayed, 999);
    assert_eq!(r.phases.journal_passes, 1);
    assert_eq!(r.last_seq, 2999);
    let torn = report.truncated.as_ref().expect("torn tail reported");
    assert_eq!((torn.segment.clone(), torn.offset), (seg, off));
    assert!(
        r.journal_report.contains("torn tail"),
        "{}",
        r.journal_report
    );
    assert_eq!(j.next_seq(), 3000);
    assert_eq!(x.state_hash(), rec.hash_after(2999));
    assert_eq!(r.state_hash, rec.hash_after(2999));
    drop(j);

    // Read-only recovery (journal verify) agrees, and so does a second start.
    let (y, again) = server::recover(&rec.cfg, rec.dir.path(), true, |_| {}).unwrap();
    assert_eq!((y.state_hash(), again.replayed), (x.state_hash(), 999));
    let (z, _, report2, r2, _) = rec.start().unwrap();
    assert!(report2.truncated.is_none(), "truncated once: {report2}");
    assert_eq!(
        (z.state_hash(), r2.phases.journal_passes),
        (x.state_hash(), 1)
    );
}

/// A replay from record 1 makes its node with `Backing::Background`: the exchange's tables
/// (about 106 MB) are faulted in on a thread of their own while records are applied, and that
/// is done when recovery returns (the plan was taken and run), so the node a loop serves from
/// is resident as before. The state is the same as from a node resident from the start.
#[test]
fn a_replay_from_the_start_faults_its_tables_in_beside_it_and_ends_resident() {
    let mut fresh = Node::new(&Config::defaults().lenient(), Backing::Background);
    let plan = fresh.take_populate();
    assert!(plan.bytes() > 100 << 20, "{} bytes planned", plan.bytes());
    assert!(plan.bytes() < 110 << 20, "{} bytes planned", plan.bytes());
    assert_eq!(fresh.take_populate().bytes(), 0, "taken once");
    assert_eq!(
        node(&Config::defaults().lenient()).take_populate().bytes(),
        0,
        "resident from the start"
    );

    let rec = record_journal(1500, &[]);
    let (mut x, _, _, r, _) = rec.start().unwrap();
    assert_eq!((r.snapshot_seq, r.replayed), (None, 1500));
    assert_eq!(x.take_populate().bytes(), 0, "faulted in during start-up");
    assert_eq!(x.state_hash(), rec.hash_after(1500));
    let (mut y, full) = server::recover(&rec.cfg, rec.dir.path(), false, |_| {}).unwrap();
    assert_eq!(y.take_populate().bytes(), 0, "faulted in during the replay");
    assert_eq!((y.state_hash(), full.replayed), (x.state_hash(), 1500));
    // Both full replays took their ClOrdID answers from the decoding thread's resolver
    // (`exchange::resolve`) to the end.
    for (what, resolved) in [
        ("start-up", &r.phases.resolved),
        ("replay", &full.phases.resolved),
    ] {
        assert!(
            resolved
                .as_deref()
                .is_some_and(|r| r.contains("answered on the decoding thread")),
            "{what}: {resolved:?}"
        );
    }
}

#[test]
fn start_up_with_a_damaged_newest_snapshot_replays_from_the_older_one() {
    let rec = record_journal(2500, &[1000, 2000]);
    let newest = journal::snapshot::snapshot_path(rec.dir.path(), 2000);
    rec.flip(&newest, 100);
    let (x, j, _, r, notes) = rec.start().unwrap();
    assert!(
        notes.iter().any(|n| n.contains("skipped damaged snapshot")),
        "{notes:?}"
    );
    assert_eq!(r.snapshot_seq, Some(1000));
    assert_eq!(r.replayed, 1500);
    assert_eq!(r.phases.journal_passes, 2);
    assert_eq!(j.next_seq(), 2501);
    assert_eq!(x.state_hash(), rec.hash_after(2500));

    // No usable snapshot at all: everything from record 1.
    rec.flip(&journal::snapshot::snapshot_path(rec.dir.path(), 1000), 100);
    drop(j);
    let (y, _, _, r, _) = rec.start().unwrap();
    assert_eq!((r.snapshot_seq, r.replayed), (None, 2500));
    assert_eq!(y.state_hash(), x.state_hash());
}

#[test]
fn start_up_refuses_corruption_before_the_tail_naming_segment_and_offset_and_modifies_nothing() {
    let rec = record_journal(3000, &[1000]);
    // A torn tail that must NOT be truncated, since start-up fails.
    let (last_seg, last_off) = rec.locate(3000);
    rec.tear(&last_seg, last_off + 30);
    for bad in [500, 1500] {
        // Before the snapshot (only verified) and after it (replayed).
        let (seg, off) = rec.locate(bad);
        rec.flip(&seg, off + 40);
        let before = rec.journal_bytes();
        let err = rec.start().err().expect("corruption refused").0;
        assert!(
            err.contains(&seg.display().to_string()) && err.contains(&format!("offset {off}")),
            "record {bad}: {err}"
        );
        assert!(
            before == rec.journal_bytes(),
            "record {bad}: journal modified"
        );
        rec.flip(&seg, off + 40);
    }
}

#[test]
fn start_up_refuses_a_damaged_last_committed_record_naming_segment_and_offset() {
    let rec = record_journal(1500, &[1000]);
    // The commit's marker follows record 1500: it was acknowledged, so damage there is not a
    // torn tail to drop but corruption to stop for.
    let (seg, off) = rec.locate(1500);
    rec.flip(&seg, off + 30);
    let before = rec.journal_bytes();
    let err = rec
        .start()
        .err()
        .expect("damaged committed record refused")
        .0;
    assert!(
        err.contains(&seg.display().to_string())
            && err.contains(&format!("offset {off}"))
            && err.contains("committed record"),
        "{err}"
    );
    assert!(before == rec.journal_bytes(), "journal modified");
    let verify = server::tools::verify(rec.dir.path(), (*rec.cfg).clone());
    assert!(verify.is_err(), "verify must refuse it too");
}

#[test]
fn verify_names_segments_of_the_format_before_commit_markers() {
    let rec = record_journal(1500, &[1000]);
    let v = server::tools::verify(rec.dir.path(), (*rec.cfg).clone()).unwrap();
    assert!(v.older_format.is_none(), "{:?}", v.older_format);
    assert_eq!(v.last_commit_seq, Some(1500));
    // The same records as one segment of format 1 (records only, no commit markers).
    let jdir = rec.dir.path().join("journal");
    let mut bytes = journal::format::encode_segment_header_version(1, 1).to_vec();
    let mut rd = journal::JournalReader::open(rec.dir.path(), 1).unwrap();
    while let Some(r) = rd.next_record().unwrap() {
        let at = bytes.len();
        bytes.resize(at + journal::format::RECORD_HEADER_LEN + r.payload.len(), 0);
        bytes[at + journal::format::RECORD_HEADER_LEN..].copy_from_slice(r.payload);
        journal::format::seal_record(&mut bytes[at..], r.seq, r.timestamp_ns, r.kind);
    }
    drop(rd);
    for (path, _) in rec.journal_bytes() {
        std::fs::remove_file(path).unwrap();
    }
    let old = jdir.join(journal::format::segment_file_name(1));
    std::fs::write(&old, bytes).unwrap();
    let v = server::tools::verify(rec.dir.path(), (*rec.cfg).clone()).unwrap();
    let older = v.older_format.clone().expect("older format reported");
    assert!(
        older.contains("format 1") && older.contains(&old.display().to_string()),
        "{older}"
    );
    assert_eq!((v.last_seq, v.last_commit_seq), (Some(1500), None));
    assert!(v.hashes_agree());
    assert_eq!(v.full_replay_hash, rec.hash_after(1500));
    // Start-up reads it and continues in a segment of the current format.
    let (x, j, report, _, _) = rec.start().unwrap();
    assert_eq!(x.state_hash(), rec.hash_after(1500));
    assert_eq!(
        report.new_format_segment,
        Some(jdir.join(journal::format::segment_file_name(1501)))
    );
    assert_eq!(j.next_seq(), 1501);
}

#[test]
fn start_up_stops_cleanly_when_the_snapshot_disagrees_and_modifies_nothing() {
    let rec = record_journal(1500, &[]);
    let (last_seg, last_off) = rec.locate(1500);
    rec.tear(&last_seg, last_off + 30);
    // A snapshot named 1200 holding the state after record 1000.
    let mut x = node(&rec.cfg);
    let mut out = Outbox::default();
    for (i, input) in rec.inputs[..1000].iter().enumerate() {
        x.apply(i as u64 + 1, TS0 + i as u64 + 1, input, &mut out);
        out.clear();
    }
    journal::snapshot::write(rec.dir.path(), 1200, &snapshot(&x)).unwrap();
    let before = rec.journal_bytes();
    let err = rec.start().err().expect("mismatch refused").0;
    assert!(err.contains("is named 1200"), "{err}");
    assert!(before == rec.journal_bytes(), "journal modified");
}

/// A journal like the event loop writes (a checkpoint every `every` records) of `n` random
/// inputs in small segments, with a resend store of 7 so that stores fill and forget; the
/// checkpoint at record `tamper` (if any) claims one more message than was sent for the first
/// FIX session it lists. Returns the recording and each client's next MsgSeqNum.
fn record_with_checkpoints(n: u64, every: u64, tamper: Option<u64>) -> (Recorded, Vec<u64>) {
    use journal::{Durability, JournalWriter};
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::defaults().lenient();
    cfg.resend_store_max = 7;
    let cfg = Arc::new(cfg);
    let mut r = Rng(types::XorShift64::new(0x5eed_c0de_1234_5678));
    let mut seqs = vec![1u64; 4];
    let mut next_cl = 0;
    let mut x = node(&cfg);
    let (mut j, _) = JournalWriter::open(dir.path(), small_segments()).unwrap();
    let mut inputs = Vec::new();
    for seq in 1..=n {
        let input = if seq % every == 0 {
            let mut cp = x.checkpoint();
            if tamper == Some(seq) {
                cp.fix.sessions[0].out_seq += 1;
            }
            Record::Checkpoint(cp)
        } else {
            random_input(&mut r, &mut seqs, &mut next_cl)
        };
        journal_and_apply(&mut j, &mut x, seq, TS0 + seq, &input);
        inputs.push(input);
    }
    j.commit(Durability::Process).unwrap();
    (Recorded { dir, cfg, inputs }, seqs)
}

#[test]
fn checkpoints_bound_the_resend_stores_of_a_replay_which_ends_in_the_same_state() {
    let (rec, seqs) = record_with_checkpoints(3000, 50, None);
    let want = rec.hash_after(3000);
    let segments = journal::list_segments(rec.dir.path()).unwrap().0.len();
    assert!(segments > 3, "many segments: {segments}");
    let (cp_seq, cp) = server::recovery::store_bound(rec.dir.path()).expect("a checkpoint");
    assert_eq!(cp_seq % 50, 0);
    assert!(cp_seq > 2500, "from the last segments: {cp_seq}");
    assert!(cp.fix.sessions.iter().any(|m| m.oldest_stored > 1));
    // Full replay (journal verify).
    let (_, full) = server::recover(&rec.cfg, rec.dir.path(), false, |_| {}).unwrap();
    assert_eq!(full.state_hash, want);
    assert_eq!(full.phases.store_bound, Some(cp_seq));
    // Start-up (no snapshot: the whole journal), which then answers a ResendRequest exactly as
    // an unbounded replay does.
    let opened =
        server::recover_and_open(&rec.cfg, rec.dir.path(), small_segments(), |_| {}).unwrap();
    assert_eq!(opened.recovered.state_hash, want);
    assert_eq!(opened.recovered.phases.store_bound, Some(cp_seq));
    let mut bounded = opened.node;
    let mut plain = node(&rec.cfg);
    plain.set_replaying(true);
    let mut out = Outbox::default();
    for (i, input) in rec.inputs.iter().enumerate() {
        plain.apply(i as u64 + 1, TS0 + i as u64 + 1, input, &mut out);
        out.clear();
    }
    plain.set_replaying(false);
    let ts = TS0 + 10_000;
    let mut reports = 0;
    for session in 0..4u64 {
        // Above anything the client sent: the logon is taken with a gap (whose
        // ResendRequest to the client changes nothing here).
        let seq = seqs[session as usize] + 1_000;
        let ask = |x: &mut Node| {
            let mut out = Outbox::default();
            let name = format!("CLIENT{}", session + 1);
            for (k, input) in [
                Record::Disconnected { conn: session + 10 },
                logon(900 + session, seq, &name),
                resend_request(900 + session, seq + 1, 1),
            ]
            .iter()
            .enumerate()
            {
                x.apply(3001 + 3 * session + k as u64, ts, input, &mut out);
            }
            out.buf
        };
        let a = ask(&mut bounded);
        let b = ask(&mut plain);
        assert_eq!(a, b, "CLIENT{}: resend after a bounded start", session + 1);
        let text = String::from_utf8_lossy(&a);
        let resent = text.matches("\x0135=8\x01").count();
        assert!(resent <= 7 && text.contains("\x0143=Y\x01"), "{text}");
        reports += resent;
    }
    assert!(reports >= 14, "stored reports were resent: {reports}");
}

#[test]
fn a_checkpoint_the_replay_disagrees_with_stops_recovery_naming_record_and_session() {
    let (rec, _) = record_with_checkpoints(1000, 50, Some(700));
    let err = server::recover(&rec.cfg, rec.dir.path(), false, |_| {})
        .err()
        .expect("a diverged replay is refused");
    let e = err.to_string();
    assert!(
        e.contains("journal record 700") && e.contains("diverged"),
        "{e}"
    );
    assert!(e.contains("CLIENT") && e.contains("->RIALTO"), "{e}");
    let err = server::recover_and_open(&rec.cfg, rec.dir.path(), small_segments(), |_| {})
        .err()
        .expect("start-up refuses it too");
    assert!(err.to_string().contains("journal record 700"), "{err}");
}

/// The `journal_input` fuzz target's body on its seeds (real records of every kind, and a
/// non-canonical encoding: a new order without an account whose account bytes are not zero)
/// and on seeded mutations of them, so `cargo test` covers it without a fuzzer. Every seed
/// decodes, also in place over the record of any other seed (replay's recycled slots hold
/// whatever came before).
#[test]
fn journal_input_fuzz_body_on_seeds_and_mutations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/journal_input");
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 20, "seeds of every kind: {}", seeds.len());
    let records: Vec<Record> = seeds
        .iter()
        .map(|(name, b)| Record::decode(b).unwrap_or_else(|e| panic!("seed {name}: {e}")))
        .collect();
    for ((name, b), want) in seeds.iter().zip(&records) {
        for prev in &records {
            let mut slot = prev.clone();
            slot.decode_into(b).unwrap();
            assert_eq!(&slot, want, "seed {name} decoded over {prev:?}");
        }
    }
    let mut r = Rng(types::XorShift64::new(0xfeed_f00d_dead_beef));
    for (_, seed) in &seeds {
        server::fuzz_input(seed);
        for _ in 0..300 {
            let mut b = seed.clone();
            for _ in 0..1 + r.below(4) {
                match r.below(3) {
                    0 if !b.is_empty() => {
                        let i = r.below(b.len() as u64) as usize;
                        b[i] = r.next() as u8;
                    }
                    1 if !b.is_empty() => {
                        b.truncate(r.below(b.len() as u64) as usize);
                    }
                    _ => b.push(r.next() as u8),
                }
            }
            server::fuzz_input(&b);
        }
    }
}

/// A ResendRequest applied in replay (nothing formatted) leaves its session exactly as serving
/// it live does: the gap fills and resent reports count as sent for the heartbeat timer.
/// Otherwise a replayed session sends its next Heartbeat at another Tick than the live one
/// did, numbers everything after it differently, and the next checkpoint stops recovery.
#[test]
fn a_resend_request_replayed_leaves_the_session_as_served_live() {
    let cfg = Config::defaults().lenient();
    let (mut live, mut replayed) = (node(&cfg), node(&cfg));
    replayed.set_replaying(true);
    let order = Inbound::App(AppMsg::New(NewOrder {
        cl_ord_id: cl("o1".into()),
        symbol: 0,
        side: Side::Buy,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Day,
        price: 1000,
        qty: 1,
        account: None,
        post_only: false,
        ..Default::default()
    }));
    const S: u64 = 1_000_000_000;
    // The order's report at 2 s, the resend at 20 s, a Tick at 35 s: a Heartbeat (30 s
    // interval) is due only if nothing was sent since 2 s.
    let records = [
        (TS0 + S, Record::fix44_logon(1, 1, "CLIENT1", true)),
        (TS0 + 2 * S, fix(1, 2, false, order)),
        (TS0 + 20 * S, resend_request(1, 3, 1)),
        (TS0 + 35 * S, Record::Tick),
    ];
    let mut out = Outbox::default();
    for (i, (ts, r)) in records.iter().enumerate() {
        live.apply(i as u64 + 1, *ts, r, &mut out);
        replayed.apply(i as u64 + 1, *ts, r, &mut out);
    }
    let cp = Record::Checkpoint(live.checkpoint());
    live.apply(5, TS0 + 36 * S, &cp, &mut out);
    replayed.apply(5, TS0 + 36 * S, &cp, &mut out);
    assert_eq!(replayed.divergence(), None);
    assert_eq!(live.state_hash(), replayed.state_hash());
}
