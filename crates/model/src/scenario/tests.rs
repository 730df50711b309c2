use super::*;

const HEAD: &str = "instruments ACME, GRID tick=5 lot=10\nscenario s\n";

fn err(body: &str) -> String {
    parse("t.scn", &format!("{HEAD}{body}")).expect_err("should not parse")
}

#[test]
fn parses_commands_and_continuations() {
    let sc = parse(
        "t.scn",
        &format!("{HEAD}N 1 a2 GRID S P DAY 20@105 stp=none -> accepted 1\n  ; level GRID S 20@105 n=1\nbook GRID bids asks 1:20@105\n"),
    )
    .expect("parses");
    assert_eq!(sc.len(), 1);
    assert_eq!(sc[0].instruments[1].lot, 10);
    let Step::Command { cmd, expect, .. } = &sc[0].steps[0] else {
        panic!("first step is a command");
    };
    assert_eq!(
        *cmd,
        Command::New(NewOrder {
            id: 1,
            account: 2,
            symbol: 1,
            side: Side::Sell,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Day,
            price: 105,
            qty: 20,
            post_only: true,
            stp: StpMode::None,
            ..Default::default()
        })
    );
    assert_eq!(*expect, vec!["accepted 1", "level GRID S 20@105 n=1"]);
    assert_eq!(
        sc[0].steps[1],
        Step::Book {
            line: 5,
            symbol: 1,
            bids: vec![],
            asks: vec![(1, 105, 20)]
        }
    );
}

#[test]
fn errors_name_the_line_and_the_problem() {
    assert_eq!(
        err("N 1 a1 ACME X L GTC 1@1 -> none"),
        "t.scn:3: side: expected B or S, got `X`"
    );
    assert_eq!(
        err("N 1 a1 ACME B L GTC 1 -> none"),
        "t.scn:3: expected QTY@PRICE, got `1`"
    );
    assert_eq!(
        err("N 1 a1 ZZZ B L GTC 1@1 -> none"),
        "t.scn:3: unknown symbol `ZZZ` (declare it with `instruments`)"
    );
    assert_eq!(
        err("C 1 a1 ACME"),
        "t.scn:3: a command needs `-> events` (or `-> none`)"
    );
    assert_eq!(
        err("C x a1 ACME -> none"),
        "t.scn:3: id: expected a number, got `x`"
    );
    assert_eq!(
        err("C 1 1 ACME -> none"),
        "t.scn:3: account: expected aN, got `1`"
    );
    assert_eq!(err("-> accepted 1"), "t.scn:3: events without a command");
    assert_eq!(
        err("  ; accepted 1"),
        "t.scn:3: indented line does not follow a command"
    );
    assert_eq!(
        err("levels maybe"),
        "t.scn:3: expected `levels on` or `levels off`"
    );
    assert_eq!(
        err("FOO -> none"),
        "t.scn:3: unknown command or directive `FOO`"
    );
    assert!(err("R 1 a1 ACME 5@1 extra -> none").starts_with("t.scn:3: `R` takes 5 to 5 words"));
    assert_eq!(
        parse("t.scn", "scenario s\n").expect_err("no instruments"),
        "t.scn:1: declare `instruments` before the first scenario"
    );
    assert_eq!(
        parse("t.scn", "# nothing\n").expect_err("empty"),
        "t.scn: no scenarios"
    );
}

#[test]
fn runner_reports_the_first_difference() {
    let sc = parse(
        "t.scn",
        &format!("{HEAD}N 1 a1 ACME B L GTC 5@100 -> accepted 2\n"),
    )
    .expect("parses");
    let e = run("t.scn", &sc, Reference::new).expect_err("must fail");
    assert!(
        e.starts_with(
            "t.scn:3: scenario `s`: events differ\n  expected: accepted 2\n  got:      accepted 1"
        ),
        "{e}"
    );
    let sc = parse(
        "t.scn",
        &format!("{HEAD}N 1 a1 ACME B L GTC 5@100 -> accepted 1\nbook ACME bids asks\n"),
    )
    .expect("parses");
    let e = run("t.scn", &sc, Reference::new).expect_err("must fail");
    assert!(e.contains("t.scn:4: scenario `s`: Buy side differs"), "{e}");
}

#[test]
fn parses_order_types_ii_and_renders_their_events() {
    let sc = parse(
        "t.scn",
        &format!(
            "{HEAD}N 1 a2 GRID S L GTD 20@105 expire=77 display=10 stop=110 stp=none -> accepted 1\n\
             N 2 a2 ACME B M IOC 3 stop=9 -> accepted 2\n\
             CLOCK 1234 -> none\nCALL GRID -> none\nUNCROSS GRID -> none\nUNCROSS #0 105 -> none\n"
        ),
    )
    .expect("parses");
    let cmds: Vec<Command> = sc[0]
        .steps
        .iter()
        .map(|s| match s {
            Step::Command { cmd, .. } => *cmd,
            Step::Book { .. } => panic!("only commands"),
        })
        .collect();
    assert_eq!(
        cmds[0],
        Command::New(NewOrder {
            id: 1,
            account: 2,
            symbol: 1,
            side: Side::Sell,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Gtd,
            price: 105,
            qty: 20,
            post_only: false,
            stp: StpMode::None,
            stop_price: 110,
            display_qty: 10,
            expire_ns: 77,
        })
    );
    let Command::New(stop) = cmds[1] else {
        panic!("a new order");
    };
    assert_eq!(
        (stop.ord_type, stop.price, stop.stop_price, stop.stp),
        (OrdType::Market, 0, 9, StpMode::CancelNewest)
    );
    assert_eq!(
        cmds[2..],
        [
            Command::Expire { now_ns: 1234 },
            Command::CallStart { symbol: 1 },
            Command::Uncross {
                symbol: 1,
                reference: 0
            },
            Command::Uncross {
                symbol: 0,
                reference: 105
            },
        ]
    );
    let insts = &sc[0].instruments;
    let triggered = Event::Triggered {
        id: 7,
        account: 1,
        symbol: 0,
        side: Side::Buy,
        price: 0,
        qty: 4,
    };
    assert_eq!(render_event(&triggered, insts), "triggered 7 4@0");
    let uncrossed = Event::Uncrossed {
        symbol: 1,
        price: 105,
        qty: 30,
    };
    assert_eq!(render_event(&uncrossed, insts), "uncrossed GRID 30@105");
    let call = Event::Rejected {
        id: 3,
        reason: RejectReason::AuctionCall,
    };
    assert_eq!(render_event(&call, insts), "rejected 3 auction_call");
    let bad_stop = Event::Rejected {
        id: 3,
        reason: RejectReason::Invalid(types::Field::StopPrice),
    };
    assert_eq!(
        render_event(&bad_stop, insts),
        "rejected 3 invalid(stop_price)"
    );
}

#[test]
fn order_types_ii_errors_name_the_line_and_the_problem() {
    assert_eq!(
        err("N 1 a1 ACME B L GTX 1@1 -> none"),
        "t.scn:3: tif: expected GTC, DAY, IOC, FOK or GTD, got `GTX`"
    );
    assert_eq!(
        err("N 1 a1 ACME B L GTC 1@1 peak=3 -> none"),
        "t.scn:3: expected stp=MODE, stop=PRICE, display=QTY or expire=NS, got `peak=3`"
    );
    assert_eq!(
        err("N 1 a1 ACME B L GTC 1@1 stop=x -> none"),
        "t.scn:3: stop: expected a number, got `x`"
    );
    assert_eq!(
        err("CLOCK soon -> none"),
        "t.scn:3: clock: expected a number, got `soon`"
    );
    assert!(err("CALL -> none").starts_with("t.scn:3: `CALL` takes 2 to 2 words"));
    assert!(err("UNCROSS ACME 1 2 -> none").starts_with("t.scn:3: `UNCROSS` takes 2 to 3 words"));
    assert_eq!(
        err("UNCROSS ZZZ -> none"),
        "t.scn:3: unknown symbol `ZZZ` (declare it with `instruments`)"
    );
}
