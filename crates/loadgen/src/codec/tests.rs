use super::*;

fn tiny() -> CodecBench {
    CodecBench {
        messages: 300,
        warmup: 50,
        seconds: 0.01,
    }
}

#[test]
fn every_figure_once_per_mode() {
    let mut lines = Vec::new();
    let check = run_codec(&tiny(), &[None], |f| lines.push(*f)).unwrap();
    assert!(check > 0);
    let names: Vec<(&str, &str)> = lines.iter().map(|f| (f.figure, f.msg)).collect();
    assert_eq!(
        names,
        [
            ("clock", "none"),
            ("send", "NewOrderSingle"),
            ("send", "ExecutionReport"),
            ("receive", "ExecutionReport"),
            ("receive", "NewOrderSingle"),
            ("receive_send", "NewOrderSingle>ExecutionReport"),
            ("throughput", "NewOrderSingle>ExecutionReport"),
        ]
    );
    for f in &lines {
        match f.measure {
            Measure::Latency {
                count,
                p50_ns,
                p99_ns,
                max_ns,
                ..
            } => {
                assert_eq!(count, 300);
                assert!(1 <= p50_ns && p50_ns <= p99_ns && p99_ns <= max_ns, "{f:?}");
            }
            Measure::Throughput {
                count, msgs_per_s, ..
            } => assert!(count >= 256 && msgs_per_s > 0.0, "{f:?}"),
        }
        let back = parse_line(&f.line()).unwrap().unwrap();
        assert_eq!((back.figure.as_str(), back.msg.as_str()), (f.figure, f.msg));
        assert_eq!(back.implementation, "rialto");
    }
}

fn count_and_accept(m: &Message<'_>) -> Result<(), String> {
    // Requires what FIX 4.4 requires of both messages' headers.
    for tag in [tags::MSG_SEQ_NUM, tags::SENDER_COMP_ID, tags::SENDING_TIME] {
        need(m.get(tag), tag)?;
    }
    Ok(())
}

fn refuse_reports(m: &Message<'_>) -> Result<(), String> {
    match m.msg_type() {
        b"8" => Err("ExecutionReport refused".into()),
        _ => Ok(()),
    }
}

#[test]
fn a_validator_runs_on_every_figure_and_stops_the_run() {
    let mut lines = Vec::new();
    run_codec(&tiny(), &[None, Some(count_and_accept)], |f| lines.push(*f)).unwrap();
    assert_eq!(lines.len(), 13);
    assert!(lines[7..].iter().all(|f| f.validation));
    let err = run_codec(&tiny(), &[Some(refuse_reports)], |_| {}).unwrap_err();
    assert_eq!(err, "send: ExecutionReport refused");
}

#[test]
fn messages_carry_the_agreed_fields() {
    let [nos, er] = sample_messages().unwrap();
    assert_eq!(
        nos,
        "8=FIX.4.4|9=136|35=D|34=2|49=CLIENT1|56=RIALTO|52=20231114-22:13:20.000|\
         11=ORD-0000001|55=ACME|54=1|38=100|40=2|44=101.25|59=0|60=20231114-22:13:20.000|10=201|"
    );
    for field in [
        "37=1000000|",
        "11=ORD-0000001|",
        "17=5000000.1|",
        "150=F|",
        "39=2|",
        "1=1|",
        "55=ACME|",
        "54=1|",
        "40=2|",
        "44=101.25|",
        "59=0|",
        "38=100|",
        "31=101.25|",
        "32=100|",
        "151=0|",
        "14=100|",
        "6=101.25|",
        "60=20231114-22:13:20.000|",
    ] {
        assert!(er.contains(field), "{field} in {er}");
    }
}

#[test]
fn lines_parse_and_compare() {
    let text = "\
codec impl=rialto figure=clock msg=none validation=off count=5 p50_ns=30 p99_ns=40 mean_ns=31
codec impl=quickfixj figure=clock msg=none validation=off count=5 p50_ns=50 p99_ns=60 mean_ns=51
codec impl=rialto figure=send msg=NewOrderSingle validation=off count=5 p50_ns=100 p99_ns=200 mean_ns=120
codec impl=rialto figure=send msg=NewOrderSingle validation=off count=5 p50_ns=300 p99_ns=400 mean_ns=320
codec impl=rialto figure=send msg=NewOrderSingle validation=off count=5 p50_ns=200 p99_ns=900 mean_ns=220
codec impl=quickfixj figure=send msg=NewOrderSingle validation=off count=5 p50_ns=4000 p99_ns=9000 mean_ns=4400
codec impl=quickfixj figure=send msg=NewOrderSingle validation=on count=5 p50_ns=5000 p99_ns=9000 mean_ns=5400
codec impl=rialto figure=throughput msg=NewOrderSingle>ExecutionReport validation=off count=9 mean_ns=500 msgs_per_s=2000000
codec impl=quickfixj figure=throughput msg=NewOrderSingle>ExecutionReport validation=off count=9 mean_ns=10000 msgs_per_s=100000
not a codec line";
    let lines: Vec<Line> = text
        .lines()
        .filter_map(parse_line)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(lines.len(), 9);
    assert_eq!(
        compare(&lines),
        [
            "codec-ratio figure=send msg=NewOrderSingle validation=off rialto_p50_ns=200 quickfixj_p50_ns=4000 ratio_p50_ns=20.0 rialto_p99_ns=400 quickfixj_p99_ns=9000 ratio_p99_ns=22.5 rialto_mean_ns=220 quickfixj_mean_ns=4400 ratio_mean_ns=20.0",
            "codec-ratio figure=throughput msg=NewOrderSingle>ExecutionReport validation=off rialto_msgs_per_s=2000000 quickfixj_msgs_per_s=100000 ratio_msgs_per_s=20.0 rialto_mean_ns=500 quickfixj_mean_ns=10000 ratio_mean_ns=20.0",
        ]
    );
    assert!(
        parse_line("codec impl=rialto figure=send msg=x validation=off p50_ns=fast")
            .unwrap()
            .is_err()
    );
    assert!(parse_line("codec impl=rialto send").unwrap().is_err());
}
