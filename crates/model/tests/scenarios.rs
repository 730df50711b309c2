//! Runs every `scenarios/*.scn` file against the reference model and against the engine.
//! A failure names the file, the line, the scenario, and the expected and actual events.

mod common;

use std::path::PathBuf;

use model::scenario::{self, Outcome, Scenario};
use model::Reference;

fn load() -> Vec<(String, Vec<Scenario>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable scenarios directory").path())
        .filter(|p| p.extension().is_some_and(|x| x == "scn"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no scenario files in {}", dir.display());
    paths
        .iter()
        .map(|p| {
            let name = format!(
                "scenarios/{}",
                p.file_name().unwrap_or_default().to_string_lossy()
            );
            let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{name}: {e}"));
            let parsed = scenario::parse(&name, &text).unwrap_or_else(|e| panic!("{e}"));
            (name, parsed)
        })
        .collect()
}

fn run_all<M: model::Inspect>(make: impl Fn(&[types::Instrument]) -> M + Copy) -> Outcome {
    let mut total = Outcome::default();
    let mut failures = Vec::new();
    for (name, scenarios) in load() {
        match scenario::run(&name, &scenarios, make) {
            Ok(o) => {
                total.scenarios += o.scenarios;
                total.commands += o.commands;
                total.books += o.books;
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    total
}

#[test]
fn scenarios_pass_on_the_reference() {
    let o = run_all(Reference::new);
    assert!(o.scenarios >= 110 && o.commands >= 500, "{o:?}");
}

#[test]
fn scenarios_pass_on_the_engine() {
    let o = run_all(common::Eng::new);
    assert!(o.scenarios >= 110 && o.commands >= 500, "{o:?}");
}
