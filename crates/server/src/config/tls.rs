//! `[tls]`: the order-entry listener's certificate, key and optional client CA.
//!
//! Role: where the TLS files are (read and checked when the server starts, `transport`), and
//! the check that sessions naming a client certificate have client certificates to check.
//!
//! Never: reads the files here (only their paths are configuration).
//!
//! Invariants: a session's `client_cert_name` is set only with `client_ca_file`.

use super::{err, ConfigError, SessionDef};
use serde::Deserialize;
use std::path::PathBuf;

/// `[tls]` of `rialto.toml`: the FIX order-entry listener speaks TLS (1.2 and 1.3) only.
/// Paths are as given (relative ones from the working directory); the files are read, and
/// checked, when the server starts.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The server's certificate chain, PEM (leaf first).
    pub cert_file: PathBuf,
    /// Its private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// CA certificates, PEM: when set, every client must present a certificate issued by one
    /// of them, and a Logon must name a SenderCompID its certificate carries
    /// (`SessionConfig::client_cert_name`).
    #[serde(default)]
    pub client_ca_file: Option<PathBuf>,
}

/// A session's `client_cert_name` needs client certificates (`[tls] client_ca_file`).
pub(super) fn check_client_cert_names(
    tls: Option<&TlsConfig>,
    sessions: &[SessionDef],
) -> Result<(), ConfigError> {
    if tls.is_none_or(|t| t.client_ca_file.is_none()) {
        if let Some(s) = sessions.iter().find(|s| s.client_cert_name.is_some()) {
            return err(format!(
                "session {}: client_cert_name needs client certificates ([tls] client_ca_file)",
                s.sender_comp_id
            ));
        }
    }
    Ok(())
}
