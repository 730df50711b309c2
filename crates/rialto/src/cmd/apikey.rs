//! `rialto apikey new --account N [--name NAME]`: makes an API key for the REST API. Prints
//! the token once (on stdout, first line) and the `[[api_keys]]` entry for `rialto.toml`,
//! which holds only the token's SHA-256.

use super::CmdResult;

#[derive(clap::Subcommand, Debug)]
pub enum ApikeyCommand {
    /// A new random token and its config entry.
    New(NewArgs),
}

#[derive(clap::Args, Debug)]
pub struct NewArgs {
    /// The account the key's orders go to (it trades for that account's firm).
    #[arg(long)]
    account: u32,
    /// The key's name in the config and the logs (default `key-<account>`).
    #[arg(long)]
    name: Option<String>,
}

pub fn run(cmd: ApikeyCommand) -> CmdResult {
    let ApikeyCommand::New(a) = cmd;
    let name = a.name.unwrap_or_else(|| format!("key-{}", a.account));
    if name.is_empty() || name.contains(['"', '\\', '\n']) {
        return Err("--name: a name without quotes, backslashes or newlines".into());
    }
    let (token, sha) = http_gateway::keys::new_token()?;
    println!("{token}");
    println!();
    println!("# The token above is shown once: give it to the key's user (Authorization: Bearer <token>).");
    println!("# Add this to rialto.toml; it holds only the token's SHA-256.");
    println!("[[api_keys]]");
    println!("name = \"{name}\"");
    println!("account = {}", a.account);
    println!("sha256 = \"{}\"", http_gateway::keys::hex(&sha));
    Ok(())
}
