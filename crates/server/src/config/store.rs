//! `store`: the trade store (`store = "off"`, or `[store] path = "..."` or `url = "..."`).
//!
//! Role: where the trade-store follower writes and the history routes read (`crate::store`):
//! SQLite at `data_dir/rialto.db` unless a path is given, PostgreSQL when a `url` is; off with
//! `store = "off"`.

use super::{err, ConfigError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The default file name of the SQLite store in the data directory (`trade_store::SQLITE_FILE`).
pub const SQLITE_FILE: &str = "rialto.db";

/// The file's form: the string `"off"`, or a table.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum StoreFile {
    Word(String),
    Table(StoreTable),
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreTable {
    /// The SQLite file (default `data_dir/rialto.db`).
    pub path: Option<PathBuf>,
    /// A PostgreSQL URL (`postgres://user:password@host:port/database`) instead of SQLite.
    pub url: Option<String>,
}

/// The validated store settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreConfig {
    /// The SQLite file (`None`: `rialto.db` in the data directory, wherever that is set).
    Sqlite { path: Option<PathBuf> },
    /// A PostgreSQL database.
    Postgres { url: String },
}

/// Where a server's store is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreTarget {
    Sqlite(PathBuf),
    Postgres(String),
}

impl StoreConfig {
    /// The store of a server whose data directory is `data_dir`.
    pub fn target(&self, data_dir: &Path) -> StoreTarget {
        match self {
            StoreConfig::Sqlite { path } => {
                StoreTarget::Sqlite(path.clone().unwrap_or_else(|| data_dir.join(SQLITE_FILE)))
            }
            StoreConfig::Postgres { url } => StoreTarget::Postgres(url.clone()),
        }
    }
}

#[cfg(feature = "store")]
impl StoreTarget {
    /// Where it is, for messages: the file, or the URL without its password
    /// (`trade_store::redact_url`).
    pub fn describe(&self) -> String {
        match self {
            StoreTarget::Sqlite(p) => p.display().to_string(),
            StoreTarget::Postgres(url) => trade_store::redact_url(url),
        }
    }
}

/// `None`: `store = "off"`.
pub(super) fn store_config(file: Option<StoreFile>) -> Result<Option<StoreConfig>, ConfigError> {
    let table = match file {
        None => StoreTable::default(),
        Some(StoreFile::Word(w)) if w == "off" => return Ok(None),
        Some(StoreFile::Word(w)) => {
            return err(format!(
                "store = {w:?}: give \"off\", or a [store] table (path = \"...\" for SQLite, \
                 url = \"postgres://...\" for PostgreSQL)"
            ))
        }
        Some(StoreFile::Table(t)) => t,
    };
    match (table.path, table.url) {
        (Some(_), Some(_)) => {
            err("[store] has both path (SQLite) and url (PostgreSQL): give one".to_string())
        }
        (path, None) => Ok(Some(StoreConfig::Sqlite { path })),
        (None, Some(url)) => {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                let scheme = url.split(':').next().unwrap_or("");
                return err(format!(
                    "store.url must be a PostgreSQL URL (postgres://user:password@host:port/database), \
                     got a {scheme:?} URL"
                ));
            }
            Ok(Some(StoreConfig::Postgres { url }))
        }
    }
}
