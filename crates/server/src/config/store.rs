//! `store`: the trade store (`store = "off"`, or `[store] path = "..."`).
//!
//! Role: where the trade-store follower writes (`crate::store`): SQLite at
//! `data_dir/rialto.db` unless a path is given; off with `store = "off"`.
//!
//! Never: accepts a PostgreSQL `url` (not built yet: refused with a clear error, rather than
//! silently writing to SQLite).

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
    /// A PostgreSQL URL (refused: not built yet).
    pub url: Option<String>,
}

/// The validated store settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    /// The SQLite file (`None`: `rialto.db` in the data directory, wherever that is set).
    pub path: Option<PathBuf>,
}

impl StoreConfig {
    /// The SQLite file of a server whose data directory is `data_dir`.
    pub fn path(&self, data_dir: &Path) -> PathBuf {
        self.path
            .clone()
            .unwrap_or_else(|| data_dir.join(SQLITE_FILE))
    }
}

/// `None`: `store = "off"`.
pub(super) fn store_config(file: Option<StoreFile>) -> Result<Option<StoreConfig>, ConfigError> {
    let table = match file {
        None => StoreTable::default(),
        Some(StoreFile::Word(w)) if w == "off" => return Ok(None),
        Some(StoreFile::Word(w)) => {
            return err(format!(
                "store = {w:?}: give \"off\", or a [store] table (path = \"...\")"
            ))
        }
        Some(StoreFile::Table(t)) => t,
    };
    if let Some(url) = table.url {
        let scheme = url.split(':').next().unwrap_or("");
        return err(format!(
            "store.url ({scheme}:...): PostgreSQL is not built yet; leave url out to use SQLite \
             (store.path, default data_dir/rialto.db)"
        ));
    }
    Ok(Some(StoreConfig { path: table.path }))
}
