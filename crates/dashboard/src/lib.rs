//! Rialto's web dashboard, embedded: the files `npm run build` makes in `web/` (TypeScript,
//! bundled by Vite; charts by lightweight-charts and uPlot from npm), compiled into the binary
//! by `build.rs`, so that a running exchange serves the page with no Node and no network. The
//! HTTP edge (`http_gateway`) serves them at `/`; the page reads the public REST API and the
//! WebSocket's `book`, `trades`, `ticker` and `stats` channels.
//!
//! A crate built before the front end (or on a machine without Node) serves [`NOT_BUILT`] at
//! `/` instead: a page that says how to build the dashboard.

include!(concat!(env!("OUT_DIR"), "/files.rs"));

/// One embedded file.
#[derive(Clone, Copy, Debug)]
pub struct Asset {
    pub content_type: &'static str,
    pub bytes: &'static [u8],
    /// Its name carries a hash of its content (Vite's `assets/`): cacheable for good.
    pub immutable: bool,
}

/// The page served at `/` when the dashboard was not built.
pub const NOT_BUILT: &str = include_str!("not_built.html");

/// The file at `path` (no leading `/`; "" is `index.html`).
pub fn asset(path: &str) -> Option<Asset> {
    let path = if path.is_empty() { "index.html" } else { path };
    if let Some(&(_, content_type, bytes)) = FILES.iter().find(|f| f.0 == path) {
        return Some(Asset {
            content_type,
            bytes,
            immutable: path.starts_with("assets/"),
        });
    }
    (path == "index.html" && !BUILT).then_some(Asset {
        content_type: "text/html; charset=utf-8",
        bytes: NOT_BUILT.as_bytes(),
        immutable: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_always_a_page() {
        let a = asset("").expect("a page at /");
        assert!(a.content_type.starts_with("text/html"));
        let text = std::str::from_utf8(a.bytes).expect("UTF-8");
        assert!(text.contains("<html"), "{text}");
        assert!(!a.immutable);
        if !BUILT {
            assert_eq!(text, NOT_BUILT);
        }
    }

    #[test]
    fn the_page_of_a_build_without_node_says_how_to_build_the_dashboard() {
        assert!(NOT_BUILT.contains("<html"));
        for step in [
            "npm --prefix crates/dashboard/web ci",
            "npm --prefix crates/dashboard/web run build",
            "cargo build --release",
        ] {
            assert!(NOT_BUILT.contains(step), "{step}");
        }
    }

    #[test]
    fn built_assets_are_found_and_typed() {
        for &(path, content_type, bytes) in FILES {
            let a = asset(path).expect("every file is served");
            assert_eq!(a.content_type, content_type);
            assert_eq!(a.bytes.len(), bytes.len());
            assert_eq!(a.immutable, path.starts_with("assets/"));
        }
        assert!(asset("nope.js").is_none());
        assert!(asset("../Cargo.toml").is_none());
    }
}
