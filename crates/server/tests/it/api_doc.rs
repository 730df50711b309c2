//! docs/api.md's examples, run: each ```sh block of the REST reference runs with `sh -c`
//! (curl) against a fresh server, in the document's order, and its answer must match the
//! fenced block after it: an ```http block's status, its headers (the ones shown, with their
//! values) and the shape of its JSON body (the same keys and JSON types, recursively; ids and
//! times differ from run to run); a ```text block's lines, up to their last space (a metric and
//! its labels, not its value).

use serde_json::Value;
use server::{Config, Server};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOKEN: &str = "rk_doc_account1";
const TOKEN2: &str = "rk_doc_account2";

fn config(dir: &Path) -> Config {
    let hex = |t: &str| http_gateway::keys::hex(&http_gateway::keys::sha256(t));
    let text = format!(
        "listen = \"127.0.0.1:0\"\n\
         http_listen = \"127.0.0.1:0\"\n\
         orders_max = 65536\n\
         journal_segment_bytes = 1048576\n\
         [[api_keys]]\nname = \"doc1\"\naccount = 1\nsha256 = \"{}\"\nrequests_per_sec = 100000\n\
         [[api_keys]]\nname = \"doc2\"\naccount = 2\nsha256 = \"{}\"\nrequests_per_sec = 100000\n",
        hex(TOKEN),
        hex(TOKEN2)
    );
    let mut c = Config::from_toml(&text).expect("config");
    c.data_dir = dir.to_path_buf();
    c
}

/// One example: the command, the answer's kind (`http` or `text`) and text, and where.
struct Example {
    line: usize,
    command: String,
    kind: String,
    answer: String,
}

/// Every ```sh block of `doc` with the fenced block after it.
fn examples(doc: &str) -> Vec<Example> {
    let lines: Vec<&str> = doc.lines().collect();
    // Fenced blocks: (line of the opening fence, language, text).
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(lang) = lines[i].strip_prefix("```") {
            let start = i;
            let mut text = String::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with("```") {
                text.push_str(lines[i]);
                text.push('\n');
                i += 1;
            }
            blocks.push((start + 1, lang.trim().to_owned(), text));
        }
        i += 1;
    }
    let mut out = Vec::new();
    for w in blocks.windows(2) {
        let ((line, lang, command), (_, kind, answer)) = (&w[0], &w[1]);
        if lang == "sh" {
            assert!(
                kind == "http" || kind == "text",
                "docs/api.md:{line}: the block after a sh block must be its answer (```http or ```text), not ```{kind}"
            );
            out.push(Example {
                line: *line,
                command: command.clone(),
                kind: kind.clone(),
                answer: answer.clone(),
            });
        }
    }
    out
}

/// `got` has `want`'s shape: the same JSON types, the same keys, each element of an array
/// shaped like `want`'s first (an empty `want` array wants an empty one).
fn same_shape(want: &Value, got: &Value, at: &str) -> Result<(), String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let (mut wk, mut gk): (Vec<&String>, Vec<&String>) =
                (w.keys().collect(), g.keys().collect());
            wk.sort();
            gk.sort();
            if wk != gk {
                return Err(format!("{at}: keys {gk:?}, documented {wk:?}"));
            }
            for (k, v) in w {
                same_shape(v, &g[k], &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) => match w.first() {
            None if g.is_empty() => Ok(()),
            None => Err(format!("{at}: {} elements, documented none", g.len())),
            Some(first) => {
                // A documented array of several elements of the same shape (a book level)
                // is checked element by element when the lengths agree.
                if w.len() == g.len() {
                    for (n, (a, b)) in w.iter().zip(g).enumerate() {
                        same_shape(a, b, &format!("{at}[{n}]"))?;
                    }
                    return Ok(());
                }
                for (n, b) in g.iter().enumerate() {
                    same_shape(first, b, &format!("{at}[{n}]"))?;
                }
                Ok(())
            }
        },
        (Value::String(_), Value::String(_))
        | (Value::Number(_), Value::Number(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null) => Ok(()),
        _ => Err(format!("{at}: {got}, documented {want}")),
    }
}

/// An HTTP answer as `curl -i` prints it: the status, the headers and the body.
fn split_http(text: &str) -> (u16, Vec<(String, String)>, String) {
    let text = text.replace('\r', "");
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.trim().to_owned())
}

fn check(ex: &Example, out: &str) -> Result<(), String> {
    if ex.kind == "text" {
        for want in ex.answer.lines().filter(|l| !l.is_empty()) {
            let key = want.rsplit_once(' ').map_or(want, |(k, _)| k);
            if !out
                .lines()
                .any(|l| l.rsplit_once(' ').map(|(k, _)| k) == Some(key))
            {
                return Err(format!("no line {key:?} ..."));
            }
        }
        return Ok(());
    }
    let (want_status, want_headers, want_body) = split_http(&ex.answer);
    let (status, headers, body) = split_http(out);
    if status != want_status {
        return Err(format!("status {status}, documented {want_status}"));
    }
    for (n, v) in &want_headers {
        if !headers.iter().any(|(gn, gv)| gn == n && gv == v) {
            return Err(format!("no header {n}: {v}"));
        }
    }
    let want: Value = serde_json::from_str(&want_body)
        .map_err(|e| format!("the documented body is not JSON: {e}"))?;
    let got: Value =
        serde_json::from_str(&body).map_err(|e| format!("the answer is not JSON: {e}"))?;
    same_shape(&want, &got, "body")
}

/// Until the market-data follower has applied every journaled record (the public book and
/// ticker are its view).
fn follower_caught_up(s: &Server) {
    let md = s.market_data_counters().expect("market data is on");
    let store = s.store_counters().expect("the trade store is on");
    let deadline = Instant::now() + Duration::from_secs(20);
    let last = || s.counters.last_seq.load(Ordering::Acquire);
    while md.applied_seq.load(Ordering::Acquire) < last()
        || store.applied_seq.load(Ordering::Acquire) < last()
    {
        assert!(
            Instant::now() < deadline,
            "the market-data follower or the trade store did not catch up in 20 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn every_curl_example_of_the_rest_reference_answers_as_documented() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api.md");
    let doc = std::fs::read_to_string(&doc_path).expect("docs/api.md");
    let examples = examples(&doc);
    assert!(
        examples.len() >= 15,
        "only {} examples in docs/api.md",
        examples.len()
    );
    let curl = Command::new("curl").arg("--version").output();
    assert!(
        curl.is_ok_and(|o| o.status.success()),
        "curl is needed to run docs/api.md's examples (.ci/run installs it)"
    );

    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(config(dir.path()), Arc::new(|_: &str| {})).expect("server starts");
    let base = format!("http://{}", s.http_addr().expect("HTTP is on"));
    let mut failures = Vec::new();
    for ex in &examples {
        follower_caught_up(&s);
        let out = Command::new("sh")
            .arg("-c")
            .arg(&ex.command)
            .env("RIALTO", &base)
            .env("TOKEN", TOKEN)
            .env("TOKEN2", TOKEN2)
            .output()
            .expect("sh runs");
        let text = String::from_utf8_lossy(&out.stdout);
        if let Err(why) = check(ex, &text) {
            failures.push(format!(
                "docs/api.md:{}: {why}\n  command: {}\n  answer: {text}",
                ex.line,
                ex.command.trim()
            ));
        }
    }
    s.shutdown().expect("clean stop");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_shape_check_tells_a_different_answer() {
    let want: Value = serde_json::json!({"a": [["1", "2", 3]], "b": null, "c": {"d": 1}});
    let same = serde_json::json!({"a": [["5", "6", 7], ["8", "9", 1]], "b": null, "c": {"d": 2}});
    assert_eq!(same_shape(&want, &same, "body"), Ok(()));
    for other in [
        serde_json::json!({"a": [["1", "2", 3]], "b": "x", "c": {"d": 1}}),
        serde_json::json!({"a": [["1", 2, 3]], "b": null, "c": {"d": 1}}),
        serde_json::json!({"a": [], "b": null, "c": {}}),
        serde_json::json!({"a": [["1", "2", 3]], "b": null, "c": {"d": 1}, "e": 1}),
    ] {
        assert!(same_shape(&want, &other, "body").is_err(), "{other}");
    }
    let (status, headers, body) = split_http(
        "HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\n\r\n{\"code\":\"throttled\"}",
    );
    assert_eq!(status, 429);
    assert_eq!(headers, [("retry-after".to_owned(), "1".to_owned())]);
    assert_eq!(body, "{\"code\":\"throttled\"}");
}
