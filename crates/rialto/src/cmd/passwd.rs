//! `rialto passwd`: makes a session's `password_hash` for `rialto.toml`. Reads the password
//! from stdin (one line; on a terminal it prompts twice, without echo) and prints its salted
//! argon2id hash, a PHC string (`$argon2id$v=19$...`), on stdout.
//!
//! Never: takes the password as an argument (it would show in `ps` and the shell's
//! history), prints it, or keeps it after hashing (the buffers are wiped).

use super::CmdResult;
use std::io::{IsTerminal, Write};
use zeroize::Zeroize;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> CmdResult {
    let stdin = std::io::stdin();
    let mut pw = if stdin.is_terminal() {
        let mut first = prompt("password: ")?;
        let mut again = prompt("again: ")?;
        let same = first == again;
        again.zeroize();
        if !same {
            first.zeroize();
            return Err("the passwords differ".into());
        }
        first
    } else {
        server::auth::read_password(&mut stdin.lock())?
    };
    let hash = server::auth::hash_password(&pw);
    pw.zeroize();
    println!("{}", hash?);
    Ok(())
}

/// One line from the terminal with echo off (restored after, whatever happens).
fn prompt(text: &str) -> Result<Vec<u8>, String> {
    use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions};
    let stdin = std::io::stdin();
    let mut err = std::io::stderr();
    let _ = write!(err, "{text}");
    let _ = err.flush();
    let saved = tcgetattr(&stdin).map_err(|e| format!("terminal: {e}"))?;
    let mut quiet = saved.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    tcsetattr(&stdin, OptionalActions::Now, &quiet).map_err(|e| format!("terminal: {e}"))?;
    let read = server::auth::read_password(&mut stdin.lock());
    let _ = tcsetattr(&stdin, OptionalActions::Now, &saved);
    let _ = writeln!(err);
    read
}
