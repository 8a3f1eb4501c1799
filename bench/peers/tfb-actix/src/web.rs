//! The "Realistic" variant: actix-web 4, its router and extractors. Every worker builds
//! its own App, and App::data_factory gives each one its own database connection.
use actix_web::http::header::{CONTENT_TYPE, SERVER};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use bytes::Bytes;
use serde::Serialize;

use crate::db::{describe, Db};
use crate::util::{count_param, fortunes_html, Message, SERVER as NAME};

fn respond(content_type: &'static str, body: impl Into<Bytes>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((SERVER, NAME))
        .insert_header((CONTENT_TYPE, content_type))
        .body(body.into())
}

fn json<T: Serialize>(value: &T) -> HttpResponse {
    match serde_json::to_vec(value) {
        Ok(body) => respond("application/json", body),
        Err(_) => HttpResponse::InternalServerError().finish(),
    }
}

fn db_error(e: tokio_postgres::Error) -> HttpResponse {
    eprintln!("tfb-actix: {}", describe(&e));
    HttpResponse::InternalServerError().insert_header((SERVER, NAME)).finish()
}

async fn plaintext() -> HttpResponse {
    respond("text/plain", "Hello, World!")
}

async fn json_test() -> HttpResponse {
    json(&Message { message: "Hello, World!" })
}

async fn single(db: web::Data<Db>) -> HttpResponse {
    db.world().await.map_or_else(db_error, |w| json(&w))
}

async fn queries(db: web::Data<Db>, req: HttpRequest) -> HttpResponse {
    let n = count_param(req.query_string(), "queries");
    db.worlds(n).await.map_or_else(db_error, |w| json(&w))
}

async fn updates(db: web::Data<Db>, req: HttpRequest) -> HttpResponse {
    let n = count_param(req.query_string(), "queries");
    db.update(n).await.map_or_else(db_error, |w| json(&w))
}

async fn cached(db: web::Data<Db>, req: HttpRequest) -> HttpResponse {
    json(&db.cached(count_param(req.query_string(), "count")))
}

async fn fortunes(db: web::Data<Db>) -> HttpResponse {
    match db.fortunes().await {
        Ok(rows) => respond("text/html; charset=utf-8", fortunes_html(&rows)),
        Err(e) => db_error(e),
    }
}

pub fn run(port: u16, workers: usize, url: String) -> std::io::Result<()> {
    actix_rt::System::new().block_on(async move {
        HttpServer::new(move || {
            let url = url.clone();
            App::new()
                .data_factory(move || {
                    let url = url.clone();
                    async move {
                        Db::connect(&url).await.inspect_err(|e| {
                            eprintln!("tfb-actix: cannot connect to the database: {}", describe(e))
                        })
                    }
                })
                .route("/plaintext", web::get().to(plaintext))
                .route("/json", web::get().to(json_test))
                .route("/db", web::get().to(single))
                .route("/queries", web::get().to(queries))
                .route("/updates", web::get().to(updates))
                .route("/fortunes", web::get().to(fortunes))
                .route("/cached-queries", web::get().to(cached))
        })
        .workers(workers)
        .backlog(1024)
        .bind(("127.0.0.1", port))?
        .run()
        .await
    })
}
