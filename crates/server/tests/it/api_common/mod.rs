//! Helpers shared by the REST and WebSocket tests: a server with two API keys (alice on account
//! 1, bob on account 2, another firm) and a blocking HTTP client of its REST API.

use server::{Config, Server};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub const TOKEN_A: &str = "rk_test_alice";
pub const TOKEN_B: &str = "rk_test_bob";

/// A config on ephemeral ports (HTTP too) with alice's and bob's keys, `alice_rate` alice's
/// `requests_per_sec` (bob's 100,000), data in `dir`.
pub fn config(dir: &Path, alice_rate: u32) -> Config {
    let hex = |t: &str| http_gateway::keys::hex(&http_gateway::keys::sha256(t));
    let text = format!(
        "listen = \"127.0.0.1:0\"\n\
         http_listen = \"127.0.0.1:0\"\n\
         orders_max = 65536\n\
         journal_segment_bytes = 1048576\n\
         [[api_keys]]\nname = \"alice\"\naccount = 1\nsha256 = \"{}\"\nrequests_per_sec = {alice_rate}\n\
         [[api_keys]]\nname = \"bob\"\naccount = 2\nsha256 = \"{}\"\nrequests_per_sec = 100000\n",
        hex(TOKEN_A),
        hex(TOKEN_B)
    );
    let mut c = Config::from_toml(&text).expect("config");
    c.data_dir = dir.to_path_buf();
    c
}

pub fn start(cfg: Config) -> Server {
    Server::start(cfg, Arc::new(|_: &str| {})).expect("server starts")
}

/// A client of one server's REST API.
pub struct Api {
    pub base: String,
    pub agent: ureq::Agent,
}

impl Api {
    pub fn of(s: &Server) -> Api {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        Api {
            base: format!("http://{}", s.http_addr().expect("HTTP is on")),
            agent,
        }
    }

    /// `method path` with `token` (if any), Idempotency-Key `idem` (if any) and `body`: the
    /// status, the JSON body and its text.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        idem: Option<&str>,
        body: &str,
    ) -> (u16, serde_json::Value, String) {
        let url = format!("{}{path}", self.base);
        let mut req = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(t) = token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        if let Some(k) = idem {
            req = req.header("Idempotency-Key", k);
        }
        let req = req
            .header("Content-Type", "application/json")
            .body(body.to_owned())
            .unwrap();
        let mut r = self.agent.run(req).expect("an answer");
        let status = r.status().as_u16();
        let text = r.body_mut().read_to_string().expect("a body");
        let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        (status, v, text)
    }

    /// `POST /api/v1/orders` with `body` for `token`: the status and the JSON answer.
    pub fn post_order(&self, token: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
        let (st, v, _) = self.call(
            "POST",
            "/api/v1/orders",
            Some(token),
            None,
            &body.to_string(),
        );
        (st, v)
    }

    /// A new order that must be accepted (201): the answer.
    pub fn accepted(&self, token: &str, body: serde_json::Value) -> serde_json::Value {
        let (st, v) = self.post_order(token, &body);
        assert_eq!(st, 201, "{body}: {v}");
        v
    }
}
