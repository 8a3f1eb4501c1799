//! TechEmpower Framework Benchmarks peer on actix (bench/peers/tfb-actix).
//!
//!     tfb-actix PORT [web|http]        (DATABASE_URL from the environment)
//!
//! Serves the TFB tests (/plaintext, /json, /db, /queries, /fortunes, /updates,
//! /cached-queries) on 127.0.0.1:PORT with one worker thread per core. It mirrors the two
//! ways TechEmpower's own actix entries (frameworks/Rust/actix) are written:
//!
//! * `web` (default), the "Realistic" entry: actix-web 4 with its router and extractors;
//!   every worker opens its own PostgreSQL connection (App::data_factory) and prepares
//!   its statements once (src/web.rs).
//! * `http`, the "Platform" entry: a bare actix-http 3 service on actix-server, no
//!   actix-web router, dispatching on the path by hand; same per-worker connection
//!   (src/platform.rs).
//!
//! Both share src/db.rs (tokio-postgres: prepared statements; the SELECTs of /queries and
//! /updates are pipelined on the worker's connection by polling them together with
//! try_join_all, one query per id; /updates then writes all rows in one UPDATE, ids
//! sorted) and src/util.rs (query-count parsing, JSON rows, fortunes HTML written by hand
//! with HTML escaping, as the TFB entries do with a compile-time template).
mod db;
mod platform;
mod util;
mod web;

use std::process::exit;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: tfb-actix PORT [web|http]   (reads DATABASE_URL)";
    let port: u16 = match args.get(1).and_then(|p| p.parse().ok()) {
        Some(p) => p,
        None => {
            eprintln!("{usage}");
            exit(2)
        }
    };
    let mode = args.get(2).map(String::as_str).unwrap_or("web");
    let url = match std::env::var("DATABASE_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            eprintln!("tfb-actix: DATABASE_URL is not set");
            exit(2)
        }
    };
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let result = match mode {
        "web" => web::run(port, workers, url),
        "http" => platform::run(port, workers, url),
        _ => {
            eprintln!("{usage}");
            exit(2)
        }
    };
    if let Err(e) = result {
        eprintln!("tfb-actix: {e}");
        exit(1)
    }
}
