//! The web dashboard's files (`dashboard`: built into the binary) at `/`, and the benchmark
//! runs its Benchmarks view draws: `GET /api/v1/bench/runs` lists the `rialto bench sweep`
//! CSV files of the directory the server was given (`[http] bench_dir`; none: an empty list,
//! `configured` false), and `GET /api/v1/bench/runs/{name}` answers one.
//!
//! Never: a path outside that directory (a run's name is letters, digits, `.`, `_` and `-`,
//! not starting with a dot; `.csv` is added), a file over [`RUN_BYTES_MAX`], a directory
//! listing of more than [`RUNS_MAX`] runs.

use crate::http::{answer, ok_json, path_of, Shared};
use crate::json::Answer;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::sync::Arc;
use std::time::UNIX_EPOCH;
use utoipa::ToSchema;

/// Runs listed at most (by name).
pub const RUNS_MAX: usize = 1000;
/// A run's CSV at most: a sweep's is a few KiB.
pub const RUN_BYTES_MAX: u64 = 4 << 20;

/// `GET /` and the dashboard's other files (`/assets/...`); any other path: 404 JSON.
pub(crate) async fn file(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let Some(a) = dashboard::asset(path) else {
        return answer(Answer::error(
            404,
            "not_found",
            format!("no route {}", uri.path()),
        ));
    };
    let mut r = (StatusCode::OK, a.bytes).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(a.content_type),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if a.immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// One run of `GET /api/v1/bench/runs`.
#[derive(Serialize, ToSchema)]
pub struct BenchRun {
    /// The file's name without `.csv`.
    #[schema(example = "sweep-2026-11-24")]
    pub name: String,
    pub bytes: u64,
    /// When the file was last written, ns UTC.
    pub modified_ns: u64,
}

/// `GET /api/v1/bench/runs`.
#[derive(Serialize, ToSchema)]
pub struct BenchRuns {
    /// Whether the server was given a benchmark directory.
    pub configured: bool,
    pub runs: Vec<BenchRun>,
}

fn bench_off() -> Answer {
    Answer::error(
        404,
        "bench_off",
        "this server was given no benchmark directory ([http] bench_dir, --bench-dir)",
    )
}

/// The `rialto bench sweep` CSV files of the server's benchmark directory, by name.
#[utoipa::path(get, path = "/api/v1/bench/runs", tag = "bench",
    responses((status = 200, description = "The runs (none without a benchmark directory)",
        body = BenchRuns),
        (status = 503, description = "The directory cannot be read (`bench_unavailable`)",
            body = crate::json::ErrorBody)))]
pub(crate) async fn runs(State(s): State<Arc<Shared>>) -> Response {
    let Some(dir) = s.bench_dir.clone() else {
        return ok_json(&BenchRuns {
            configured: false,
            runs: Vec::new(),
        });
    };
    let listed = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<BenchRun>> {
        let mut runs = Vec::new();
        for e in std::fs::read_dir(&dir)? {
            let e = e?;
            let name = e.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".csv")) else {
                continue;
            };
            let Ok(meta) = e.metadata() else { continue };
            if !valid_name(stem) || !meta.is_file() || meta.len() > RUN_BYTES_MAX {
                continue;
            }
            let modified_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as u64);
            runs.push(BenchRun {
                name: stem.to_owned(),
                bytes: meta.len(),
                modified_ns,
            });
        }
        runs.sort_by(|a, b| a.name.cmp(&b.name));
        runs.truncate(RUNS_MAX);
        Ok(runs)
    })
    .await;
    match listed {
        Ok(Ok(runs)) => ok_json(&BenchRuns {
            configured: true,
            runs,
        }),
        Ok(Err(e)) => answer(Answer::error(
            503,
            "bench_unavailable",
            format!("the benchmark directory cannot be read: {e}"),
        )),
        Err(_) => answer(Answer::error(
            503,
            "bench_unavailable",
            "the benchmark directory's read did not finish",
        )),
    }
}

/// A run's name: letters, digits, `.`, `_`, `-`; not starting with a dot; at most 200 bytes.
fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 200
        && !n.starts_with('.')
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// One run's CSV (`rialto bench sweep`'s columns), as written.
#[utoipa::path(get, path = "/api/v1/bench/runs/{name}", tag = "bench",
    params(("name" = String, Path, description = "The run (its file name without .csv)",
        example = "sweep-2026-11-24")),
    responses((status = 200, description = "The CSV", content_type = "text/csv", body = String),
        (status = 400, description = "Not a run's name (`invalid_name`)",
            body = crate::json::ErrorBody),
        (status = 404, description = "No benchmark directory (`bench_off`) or no such run \
            (`unknown_run`)", body = crate::json::ErrorBody),
        (status = 503, description = "The run cannot be read (`bench_unavailable`)",
            body = crate::json::ErrorBody)))]
pub(crate) async fn run(
    State(s): State<Arc<Shared>>,
    name: Result<Path<String>, PathRejection>,
) -> Response {
    let name = match path_of(name) {
        Ok(n) => n,
        Err(a) => return answer(a),
    };
    let Some(dir) = s.bench_dir.clone() else {
        return answer(bench_off());
    };
    if !valid_name(&name) {
        return answer(Answer::error(
            400,
            "invalid_name",
            format!(
                "{name:?} is not a run's name (letters, digits, '.', '_' and '-', not starting \
                 with '.')"
            ),
        ));
    }
    let path = dir.join(format!("{name}.csv"));
    let read = tokio::task::spawn_blocking(move || -> std::io::Result<Option<Vec<u8>>> {
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= RUN_BYTES_MAX => std::fs::read(&path).map(Some),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    })
    .await;
    match read {
        Ok(Ok(Some(bytes))) => {
            let mut r = (StatusCode::OK, bytes).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            );
            r
        }
        Ok(Ok(None)) => answer(Answer::error(
            404,
            "unknown_run",
            format!("no run {name:?} in the benchmark directory"),
        )),
        Ok(Err(e)) => answer(Answer::error(
            503,
            "bench_unavailable",
            format!("run {name:?} cannot be read: {e}"),
        )),
        Err(_) => answer(Answer::error(
            503,
            "bench_unavailable",
            "the run's read did not finish",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::valid_name;

    #[test]
    fn run_names_stay_in_their_directory() {
        for ok in ["sweep-2026-11-24", "a.b_c-1", "x"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            ".hidden",
            "../etc/passwd",
            "a/b",
            "a\\b",
            "a b",
            "é",
            "..",
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert!(!valid_name(&"a".repeat(201)));
    }
}
