//! Glue shared by the integration tests: the engine seen through the model's [`Inspect`] trait.

use engine::{Engine, EngineConfig};
use model::audit::RestingView;
use model::Inspect;
use types::{Command, EventSink, Instrument, Matcher, Side, SymbolId};

/// The fast engine wrapped so the scenario runner and the property test can look at its book.
pub struct Eng(pub Engine);

impl Eng {
    pub fn new(instruments: &[Instrument]) -> Eng {
        Eng(Engine::new(instruments, EngineConfig::default()))
    }
}

impl Matcher for Eng {
    fn apply<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        self.0.apply(cmd, sink)
    }
}

impl Inspect for Eng {
    fn resting_view(&self, symbol: SymbolId, side: Side) -> Vec<RestingView> {
        self.0
            .resting(symbol, side)
            .map(|o| (o.id, o.price, o.qty))
            .collect()
    }
    fn check(&self) -> Result<(), String> {
        self.0.check_invariants()
    }
}
