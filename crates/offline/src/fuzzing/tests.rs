use super::*;

#[test]
fn decodes_every_byte_string() {
    assert!(decode(&[]).is_empty());
    assert_eq!(decode(&[1, 2, 3]).len(), 1);
    let all: Vec<u8> = (0..16u8)
        .flat_map(|op| [op, op, op, op, op, op, op, op + 3])
        .collect();
    let cmds = decode(&all);
    assert_eq!(cmds.len(), 16);
    assert!(cmds.iter().any(|c| matches!(c, Command::New(_))));
    assert!(cmds.iter().any(|c| matches!(c, Command::Cancel { .. })));
    assert!(cmds.iter().any(|c| matches!(c, Command::Replace { .. })));
    assert!(cmds.iter().any(|c| matches!(c, Command::MassCancel { .. })));
}
