//! The server's error: a message for the operator, naming what failed and where.

#[derive(Debug)]
pub struct ServerError(pub String);

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServerError {}

impl From<journal::JournalError> for ServerError {
    fn from(e: journal::JournalError) -> Self {
        ServerError(e.to_string())
    }
}
