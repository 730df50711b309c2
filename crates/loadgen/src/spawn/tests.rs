use super::*;

#[test]
fn command_lines_split_and_substitute() {
    let s = SpawnSpec::from_command_line("java -jar r.jar --port {port}").unwrap();
    assert_eq!(s.program, PathBuf::from("java"));
    assert_eq!(s.args, vec!["-jar", "r.jar", "--port", "{port}"]);
    assert!(SpawnSpec::from_command_line("  ").is_err());
    let r = SpawnSpec::rialto(PathBuf::from("/x/rialto"), "fsync", "spin", Some(1));
    let pair = |flag: &str| {
        r.args
            .iter()
            .position(|a| a == flag)
            .map(|i| &r.args[i + 1])
    };
    assert_eq!(pair("--durability").map(String::as_str), Some("fsync"));
    assert_eq!(pair("--idle").map(String::as_str), Some("spin"));
    assert_eq!(pair("--cpu").map(String::as_str), Some("1"));
    let u = SpawnSpec::rialto(PathBuf::from("/x/rialto"), "process", "park", None);
    assert!(!u.args.iter().any(|a| a == "--cpu"));
}

#[test]
fn with_http_serves_the_rest_api_on_a_port_of_its_own_with_the_config_given() {
    let s = SpawnSpec::rialto(PathBuf::from("/x/rialto"), "process", "park", None)
        .with_http("[[api_keys]]\n".into());
    let i = s.args.iter().position(|a| a == "--config").unwrap();
    assert_eq!(s.args[i + 1], "{config}");
    let i = s.args.iter().position(|a| a == "--http-listen").unwrap();
    assert_eq!(s.args[i + 1], "127.0.0.1:{http_port}");
    assert_eq!(s.config.as_deref(), Some("[[api_keys]]\n"));
}

#[test]
fn a_missing_program_is_a_clear_error() {
    let spec = SpawnSpec {
        program: PathBuf::from("/nonexistent/rialto-nope"),
        args: vec![],
        ready_timeout: Duration::from_secs(1),
        keep_log: None,
        config: None,
    };
    let e = SpawnedServer::start(&spec).err().unwrap();
    assert!(e.contains("cannot start /nonexistent/rialto-nope"), "{e}");
}
