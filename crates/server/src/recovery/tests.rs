use super::*;
use std::time::Duration;

fn channels() -> (BatchSender, BatchReceiver) {
    batch_channels(None, Arc::new(Config::defaults().fix_config()))
}

/// A journal record holding `input`, as the reader would return it.
fn record<'a>(seq: u64, payload: &'a [u8]) -> journal::Record<'a> {
    journal::Record {
        seq,
        timestamp_ns: seq * 10,
        kind: KIND_RECORD,
        payload,
        segment: Path::new("test.seg"),
        offset: seq,
    }
}

fn encoded(input: &Record) -> Vec<u8> {
    let mut b = Vec::new();
    input.encode(&mut b);
    b
}

/// A decoder that queues Tick records `from`, `from + 1`, ... until the applying side
/// hangs up; returns the record it was refused at.
fn push_ticks_until_the_applier_goes(mut tx: BatchSender, tick: &[u8], from: u64) -> u64 {
    let mut seq = from - 1;
    loop {
        seq += 1;
        if !tx.push(&record(seq, tick)).unwrap() {
            return seq;
        }
    }
}

/// Polls until the decoder has filled the queue and sleeps (at most 30 s).
fn wait_until_the_decoder_waits(rx: &BatchReceiver) {
    let t = std::time::Instant::now();
    while !rx.handoff.lock().decoder_waits {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the decoder never waited"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn batches_arrive_in_order_past_a_full_queue_and_a_partial_last_batch() {
    let n = (BATCHES_IN_FLIGHT as u64 + 3) * BATCH_RECORDS as u64 + 17;
    let inputs = [
        encoded(&Record::Tick),
        encoded(&Record::Disconnected { conn: 7 }),
    ];
    let (mut tx, mut rx) = channels();
    std::thread::scope(|scope| {
        let decoder = scope.spawn(move || {
            for seq in 1..=n {
                assert!(tx.push(&record(seq, &inputs[(seq % 2) as usize])).unwrap());
            }
            tx.finish();
        });
        // A slow start: the decoder fills the queue and waits for it to drain.
        wait_until_the_decoder_waits(&rx);
        let mut next = 1;
        let mut done = None;
        while let Some(batch) = rx.next(done.take()) {
            for d in batch.records() {
                assert_eq!((d.seq, d.ts), (next, next * 10));
                let want = if next % 2 == 0 {
                    Record::Tick
                } else {
                    Record::Disconnected { conn: 7 }
                };
                assert_eq!(d.input, want);
                next += 1;
            }
            done = Some(batch);
        }
        assert_eq!(next, n + 1);
        decoder.join().unwrap();
    });
}

/// The populating thread's gate opens once the decoder has made every batch it will make
/// (a full queue, the applying side holding two), or once it is done; from then on the
/// decoder makes no batch.
#[test]
fn the_populate_gate_opens_once_the_decoder_has_its_batches_or_is_done() {
    let tick = encoded(&Record::Tick);
    let (mut tx, mut rx) = channels();
    let (taken_tx, taken_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        // Two batches, then the rest once the applying side has taken them (as
        // `apply_batches` takes two first): the order a replay has, made certain.
        let decoder = scope.spawn(move || {
            for seq in 1..=2 * BATCH_RECORDS as u64 {
                assert!(tx.push(&record(seq, &tick)).unwrap());
            }
            taken_rx.recv().unwrap();
            push_ticks_until_the_applier_goes(tx, &tick, 2 * BATCH_RECORDS as u64 + 1)
        });
        let cur = rx.next(None);
        let mut next = rx.next(None);
        taken_tx.send(()).unwrap();
        wait_until_the_decoder_waits(&rx);
        assert!(rx.handoff.lock().pool_made());
        rx.pool_made()();
        let made = rx.handoff.lock().made;
        assert!(made > BATCHES_IN_FLIGHT, "{made} batches made");
        // Taking and returning batches from then on makes no new ones.
        let mut done = cur;
        for _ in 0..3 * BATCHES_IN_FLIGHT {
            let taken = rx.next(done.take());
            assert!(taken.is_some());
            done = next;
            next = taken;
        }
        assert_eq!(rx.handoff.lock().made, made);
        drop((done, next));
        drop(rx);
        decoder.join().unwrap();
    });

    let (tx, rx) = channels();
    assert!(
        !rx.handoff.lock().pool_made(),
        "a decoder that has made none"
    );
    drop(tx);
    assert!(rx.handoff.lock().pool_made(), "a decoder that is done");
    rx.pool_made()();
}

#[test]
fn a_gone_applier_stops_a_waiting_decoder_and_a_gone_decoder_ends_the_applier() {
    let tick = encoded(&Record::Tick);
    let (tx, rx) = channels();
    std::thread::scope(|scope| {
        let decoder = scope.spawn(move || push_ticks_until_the_applier_goes(tx, &tick, 1));
        // The decoder fills the queue and sleeps; dropping the receiver must wake it.
        wait_until_the_decoder_waits(&rx);
        drop(rx);
        let stopped_at = decoder.join().unwrap();
        assert!(stopped_at > (BATCHES_IN_FLIGHT * BATCH_RECORDS) as u64);
    });

    // A decoder dropped without `finish` (a panic): the applier gets what was queued, then
    // the end, not a hang.
    let tick = encoded(&Record::Tick);
    let (mut tx, mut rx) = channels();
    std::thread::scope(|scope| {
        let applier = scope.spawn(move || {
            let mut got = 0;
            let mut done = None;
            while let Some(b) = rx.next(done.take()) {
                got += b.len;
                done = Some(b);
            }
            got
        });
        // Once the applier waits for a batch: the end must wake it.
        let t = std::time::Instant::now();
        while !tx.handoff.lock().applier_waits {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the applier never waited"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        for seq in 1..=BATCH_RECORDS as u64 + 5 {
            assert!(tx.push(&record(seq, &tick)).unwrap());
        }
        drop(tx);
        assert_eq!(applier.join().unwrap(), BATCH_RECORDS);
    });
}

#[test]
fn a_bad_record_is_an_error_naming_segment_offset_and_seq() {
    let (mut tx, _rx) = channels();
    let e = tx.push(&record(5, &[99])).unwrap_err();
    assert_eq!(
        e.0,
        "test.seg offset 5: record 5: bad input record: unknown record tag"
    );
    let mut rec = record(6, &[2]);
    rec.kind = 9;
    let e = tx.push(&rec).unwrap_err();
    assert_eq!(e.0, "test.seg offset 6: record 6 has unknown kind 9");
    // A journal of the earlier record format is named as such, with both versions.
    for (kind, name) in [
        (crate::record::KIND_RECORD_V1, "1"),
        (crate::record::KIND_RECORD_V2, "2"),
    ] {
        rec.kind = kind;
        let e = tx.push(&rec).unwrap_err();
        assert!(
            e.0.contains(&format!(
                "record format {name}, written by an earlier Rialto; this version reads format 3"
            )),
            "{e}"
        );
    }
}
