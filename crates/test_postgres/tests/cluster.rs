//! The throwaway cluster itself: reachable as a non-superuser owning its database, on the
//! loopback only; stopped and started again with its data; gone after drop.

use test_postgres::{postgres, TestPostgres};

#[test]
fn a_cluster_starts_stops_starts_again_and_is_removed() {
    let mut pg = TestPostgres::start();
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    let row = c
        .query_one(
            "SELECT current_user::text, current_database()::text, \
             (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), \
             current_setting('listen_addresses')",
            &[],
        )
        .unwrap();
    let (user, db, superuser, listen): (String, String, bool, String) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    assert_eq!(
        (user.as_str(), db.as_str(), superuser, listen.as_str()),
        ("rialto", "rialto", false, "127.0.0.1")
    );
    c.batch_execute("CREATE TABLE kept (v BIGINT); INSERT INTO kept VALUES (42);")
        .unwrap();
    drop(c);
    let mut su = postgres::Client::connect(&pg.superuser_url(), postgres::NoTls).unwrap();
    let superuser: bool = su
        .query_one(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(superuser);
    drop(su);

    let other = pg.create_database("other");
    postgres::Client::connect(&other, postgres::NoTls)
        .unwrap()
        .batch_execute("CREATE TABLE t (v BIGINT)")
        .unwrap();
    pg.exec_superuser("REVOKE INSERT ON kept FROM rialto");

    pg.stop();
    assert!(!pg.is_running());
    assert!(postgres::Client::connect(&pg.url(), postgres::NoTls).is_err());
    pg.start_again();
    let port = pg.port();
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    let v: i64 = c.query_one("SELECT v FROM kept", &[]).unwrap().get(0);
    assert_eq!(v, 42);
    let e = c.execute("INSERT INTO kept VALUES (1)", &[]).unwrap_err();
    assert!(
        e.as_db_error()
            .is_some_and(|d| d.message().contains("permission denied")),
        "{e:?}"
    );
    drop(c);

    let dir = pg.dir().to_path_buf();
    assert!(dir.join("data/PG_VERSION").exists());
    drop(pg);
    assert!(!dir.exists(), "{} left behind", dir.display());
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    assert!(postgres::Client::connect(&url, postgres::NoTls).is_err());
}
