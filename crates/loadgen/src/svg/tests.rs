use super::*;

fn chart() -> Chart {
    Chart {
        title: "Latency vs load <test> & co".into(),
        x_label: "Load (K rps)".into(),
        y_label: "Latency (µs)".into(),
        series: vec![
            Series {
                name: "P50".into(),
                points: vec![(10.0, 20.0), (20.0, 25.0), (50.0, 90.0)],
            },
            Series {
                name: "P99".into(),
                points: vec![(10.0, 40.0), (20.0, 60.0), (50.0, 2_500.0)],
            },
        ],
        marker: Some((50.0, "knee".into())),
        threshold: Some((1_000.0, "1 ms".into())),
        log_x: false,
    }
}

/// A minimal well-formedness check: every tag opened is closed in order, attributes quoted.
fn well_formed(svg: &str) -> Result<(), String> {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let text = &rest[..i];
        if text.contains('>') {
            return Err(format!("stray '>' in text {text:?}"));
        }
        let end = rest[i..].find('>').ok_or("unclosed tag")? + i;
        let tag = &rest[i + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') {
            continue;
        }
        if !tag.matches('"').count().is_multiple_of(2) {
            return Err(format!("unbalanced quotes in <{tag}>"));
        }
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or("").to_string();
            stack.push(name);
        }
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed: {stack:?}"))
    }
}

#[test]
fn svg_is_well_formed_and_has_every_series() {
    let svg = render(&chart());
    well_formed(&svg).unwrap();
    assert!(svg.starts_with("<?xml"));
    assert!(svg.contains(r#"data-name="P50""#));
    assert!(svg.contains(r#"data-name="P99""#));
    assert_eq!(svg.matches("<polyline").count(), 2);
    assert_eq!(svg.matches("<circle").count(), 6);
    assert!(svg.contains("knee"));
    assert!(svg.contains(">1 ms<"));
    assert!(svg.contains("&lt;test&gt; &amp; co"));
    // Log axis: decades 10, 100, 1000, 10000 are labelled.
    for label in [">10<", ">100<", ">1000<", ">10000<"] {
        assert!(svg.contains(label), "missing y label {label}");
    }
}

#[test]
fn empty_and_nonpositive_points_are_skipped() {
    let c = Chart {
        series: vec![Series {
            name: "P50".into(),
            points: vec![(1.0, 0.0), (2.0, f64::NAN)],
        }],
        marker: None,
        threshold: None,
        ..chart()
    };
    let svg = render(&c);
    well_formed(&svg).unwrap();
    assert_eq!(svg.matches("<circle").count(), 0);
}

#[test]
fn checker_rejects_broken_markup() {
    assert!(well_formed("<svg><g></svg>").is_err());
    assert!(well_formed("<svg a=\"x></svg>").is_err());
}

#[test]
fn log_x_axis_labels_decades() {
    let c = Chart {
        log_x: true,
        series: vec![Series {
            name: "QFJ P99".into(),
            points: vec![(0.5, 300.0), (2.0, 900.0), (150.0, 80.0), (0.0, 5.0)],
        }],
        ..chart()
    };
    let svg = render(&c);
    well_formed(&svg).unwrap();
    for label in [">0.1<", ">1<", ">10<", ">100<", ">1000<"] {
        assert!(svg.contains(label), "missing x label {label}");
    }
    // The point at x = 0 cannot be drawn on a log axis.
    assert_eq!(svg.matches("<circle").count(), 3);
}

#[test]
fn nice_steps() {
    assert_eq!(nice_step(100.0, 10.0), 10.0);
    assert_eq!(nice_step(130.0, 8.0), 20.0);
    assert_eq!(nice_step(7.0, 8.0), 1.0);
}
