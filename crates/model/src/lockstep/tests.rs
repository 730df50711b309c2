use super::*;
use crate::audit::RestingView;
use types::{EventSink, NewOrder, OrdType, Side, StpMode, Symbol, TimeInForce};

/// The reference with one fault injected: `Limited` refuses every order after the first,
/// `Mute` drops Level events.
enum Faulty {
    Limited(Reference),
    Mute(Reference),
}

impl Faulty {
    fn inner(&self) -> &Reference {
        match self {
            Faulty::Limited(r) | Faulty::Mute(r) => r,
        }
    }
}

impl Matcher for Faulty {
    fn apply<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        match self {
            Faulty::Limited(r) if r.is_used(1) => {
                if let Command::New(o) = cmd {
                    sink.on_event(&Event::Rejected {
                        id: o.id,
                        reason: RejectReason::CapacityExceeded,
                    });
                }
            }
            Faulty::Limited(r) => r.apply(cmd, sink),
            Faulty::Mute(r) => {
                let mut ev = Vec::new();
                r.apply(cmd, &mut ev);
                ev.iter()
                    .filter(|e| !matches!(e, Event::Level { .. }))
                    .for_each(|e| sink.on_event(e));
            }
        }
    }
}

impl Inspect for Faulty {
    fn resting_view(&self, symbol: SymbolId, side: Side) -> Vec<RestingView> {
        self.inner().resting_view(symbol, side)
    }
    fn check(&self) -> Result<(), String> {
        self.inner().check()
    }
}

fn new(id: u64) -> Command {
    Command::New(NewOrder {
        id,
        account: 1,
        symbol: 0,
        side: Side::Buy,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Gtc,
        price: 10,
        qty: 1,
        post_only: false,
        stp: StpMode::CancelNewest,
        ..Default::default()
    })
}

#[test]
fn reports_divergence_and_capacity() {
    let insts = [Instrument {
        symbol: Symbol::new("ACME").expect("valid"),
        tick: 1,
        lot: 1,
    }];
    let mut same = Lockstep::new(&insts, Reference::new(&insts));
    assert_eq!(same.apply(&new(1)).map(|e| e.len()), Ok(2));
    assert_eq!(same.commands(), 1);

    let mut limited = Lockstep::new(&insts, Faulty::Limited(Reference::new(&insts)));
    assert!(limited.apply(&new(1)).is_ok());
    assert_eq!(limited.apply(&new(2)), Err(LockstepError::Capacity));

    let mut mute = Lockstep::new(&insts, Faulty::Mute(Reference::new(&insts)));
    match mute.apply(&new(1)) {
        Err(LockstepError::Diverged(s)) => assert!(s.starts_with("command #0: New"), "{s}"),
        other => panic!("expected a divergence, got {other:?}"),
    }
}
