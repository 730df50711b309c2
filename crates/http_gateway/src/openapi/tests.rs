use super::*;
use serde_json::Value;

fn doc() -> Value {
    serde_json::from_slice(&document()).expect("JSON")
}

#[test]
fn the_document_is_openapi_3_1_with_every_route_and_the_bearer_scheme() {
    let d = doc();
    assert!(d["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = d["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/health", &["get"][..]),
        ("/ready", &["get"]),
        ("/api/v1/instruments", &["get"]),
        ("/api/v1/book/{symbol}", &["get"]),
        ("/api/v1/ticker/{symbol}", &["get"]),
        ("/api/v1/orders", &["get", "post"]),
        ("/api/v1/orders/cancel-all", &["post"]),
        ("/api/v1/orders/{id}", &["get", "delete", "patch"]),
    ] {
        for m in methods {
            assert!(paths[path][m].is_object(), "{m} {path} is missing");
        }
    }
    assert_eq!(
        d["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    assert_eq!(
        paths["/api/v1/orders"]["post"]["security"][0]["bearer"],
        serde_json::json!([])
    );
}

#[test]
fn requests_that_change_state_take_an_idempotency_key_and_list_their_errors() {
    let d = doc();
    for (path, m) in [
        ("/api/v1/orders", "post"),
        ("/api/v1/orders/cancel-all", "post"),
        ("/api/v1/orders/{id}", "delete"),
        ("/api/v1/orders/{id}", "patch"),
    ] {
        let op = &d["paths"][path][m];
        let params = op["parameters"].as_array().unwrap();
        assert!(
            params
                .iter()
                .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"),
            "{m} {path}: {params:?}"
        );
        for status in ["400", "401", "404", "409", "413", "422", "429", "503"] {
            let r = &op["responses"][status];
            assert!(
                r["content"]["application/json"]["schema"].is_object(),
                "{m} {path} {status}"
            );
        }
        assert!(op["responses"]["429"]["headers"]["Retry-After"].is_object());
    }
}

#[test]
fn the_new_order_body_is_the_fields_the_parser_takes() {
    let d = doc();
    let s = &d["components"]["schemas"]["NewOrderRequest"];
    let mut fields: Vec<&str> = s["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "client_order_id",
            "display_quantity",
            "expire_time",
            "post_only",
            "price",
            "quantity",
            "side",
            "stop_price",
            "symbol",
            "time_in_force",
            "type"
        ]
    );
    let mut parsed: Vec<&str> = crate::http::NEW_ORDER_FIELDS.to_vec();
    parsed.sort_unstable();
    assert_eq!(
        fields, parsed,
        "the document and the parser take the same fields"
    );
    assert_eq!(s["additionalProperties"], false);
    let mut required: Vec<&str> = s["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["quantity", "side", "symbol"]);
}

#[test]
fn an_order_object_matches_its_schema_fields() {
    let d = doc();
    let s = &d["components"]["schemas"]["OrderJson"];
    let props = s["properties"].as_object().unwrap();
    let order = json::OrderJson {
        order_id: 1,
        client_order_id: None,
        symbol: "ACME".into(),
        side: "buy",
        ord_type: "stop_limit",
        time_in_force: "gtd",
        expire_time: Some("2026-11-30T16:00:00Z".into()),
        price: Some("1.00".into()),
        stop_price: Some("1.01".into()),
        triggered: Some(false),
        quantity: "1".into(),
        display_quantity: Some("1".into()),
        filled_quantity: "0".into(),
        remaining_quantity: "1".into(),
        average_price: None,
        status: "new",
        cancel_reason: None,
        updated_ns: 1,
        fills: Vec::new(),
    };
    let v = serde_json::to_value(&order).unwrap();
    for k in v.as_object().unwrap().keys() {
        assert!(props.contains_key(k), "{k} is not in the schema");
    }
    for r in s["required"].as_array().unwrap() {
        assert!(v.get(r.as_str().unwrap()).is_some(), "{r} is required");
    }
    for optional in [
        "fills",
        "stop_price",
        "triggered",
        "display_quantity",
        "expire_time",
    ] {
        assert!(
            !s["required"]
                .as_array()
                .unwrap()
                .contains(&Value::from(optional)),
            "{optional} is required"
        );
    }
}
