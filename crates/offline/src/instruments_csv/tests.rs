use super::*;

fn read(text: &str) -> Result<SymbolTable, String> {
    let mut t = SymbolTable::new();
    read_instruments(text.as_bytes(), &mut t)
        .map(|()| t)
        .map_err(|e| e.to_string())
}

#[test]
fn reads_instruments_in_order() {
    let t = read("symbol,tick,lot\nZED,5,100\n# c\n\nACME,1,1\n").unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t.instruments()[0].tick, 5);
    assert_eq!(t.instruments()[0].lot, 100);
    assert_eq!(t.name(1), "ACME");
}

#[test]
fn errors_name_line_and_field() {
    assert_eq!(
        read("symbol,tick,lot\nA,0,1\n").unwrap_err(),
        "line 2: field 'tick': must be at least 1, got \"0\""
    );
    assert_eq!(
        read("symbol,tick,lot\nA,1,x\n").unwrap_err(),
        "line 2: field 'lot': expected an integer, got \"x\""
    );
    assert_eq!(
        read("symbol,tick,lot\nA,1,1\nA,2,2\n").unwrap_err(),
        "line 3: field 'symbol': symbol A appears twice"
    );
    assert_eq!(
        read("symbol,tick,lot\nA,1\n").unwrap_err(),
        "line 2: expected 3 fields (symbol,tick,lot), got 2"
    );
    assert_eq!(
        read("sym,tick,lot\n").unwrap_err(),
        "line 1: expected the header \"symbol,tick,lot\", got \"sym,tick,lot\""
    );
}
