//! Embeds the built dashboard (`web/dist`, made by `npm run build` in `web/`) in the crate: a
//! table of every file under `web/dist` with its content type, as `include_bytes!`. Without
//! a build (a machine without Node), the table holds one page that says how to make it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dist = root.join("web").join("dist");
    // A new build of the front end, or its removal, rebuilds the table (cargo scans a
    // directory's files; a path that does not exist would rerun this at every build).
    let mut files = Vec::new();
    if dist.join("index.html").is_file() {
        println!("cargo:rerun-if-changed={}", dist.display());
        collect(&dist, &dist, &mut files);
    } else {
        println!("cargo:rerun-if-changed={}", root.join("web").display());
    }
    files.sort();
    let mut out = String::new();
    let built = !files.is_empty();
    out.push_str(
        "/// Every file of the built dashboard: its path under the root, content type, bytes.\n",
    );
    out.push_str("pub static FILES: &[(&str, &str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        let _ = writeln!(
            out,
            "    ({rel:?}, {:?}, include_bytes!({:?})),",
            content_type(rel),
            abs.display().to_string()
        );
    }
    out.push_str("];\n");
    let _ = writeln!(
        out,
        "/// Whether `web/dist` was built when this crate was.\npub const BUILT: bool = {built};"
    );
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("files.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

/// Files under `dir`, as (path relative to `root` with `/`, absolute path).
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(root, &p, files);
        } else if let Ok(rel) = p.strip_prefix(root) {
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push((rel, p));
        }
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" | "map" => "application/json",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
