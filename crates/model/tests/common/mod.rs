//! Glue shared by the integration tests: the engine seen through the model's [`Inspect`] trait.

use engine::{Engine, EngineConfig};
use model::audit::RestingView;
use model::Inspect;
use types::{Command, EventSink, Instrument, Matcher, Side, SymbolId};

/// The fast engine wrapped so the scenario runner and the property test can look at its book.
pub struct Eng(pub Engine);

impl Eng {
    /// The engine with its default (production) limits.
    #[allow(dead_code)] // each test binary uses one of the constructors
    pub fn new(instruments: &[Instrument]) -> Eng {
        Eng(Engine::new(instruments, EngineConfig::default()))
    }

    /// The engine with small limits, so that random streams exercise the ladder's re-centring
    /// and growth and the id table's hashed part and growth; still far above what a test
    /// stream rests, so the engine never answers `CapacityExceeded` where the reference trades.
    #[allow(dead_code)]
    pub fn small(instruments: &[Instrument]) -> Eng {
        let config = EngineConfig {
            orders_max: 1 << 12,
            levels_initial: 8,
            levels_max: 1 << 12,
            ids_direct: 1 << 8,
            ids_hashed_initial: 8,
        };
        Eng(Engine::new(instruments, config))
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
