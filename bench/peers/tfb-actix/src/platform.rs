//! The "Platform" variant: a bare actix-http 3 service on actix-server, without
//! actix-web. Each worker's service factory opens the worker's database connection;
//! requests are dispatched on the path by hand.
use std::rc::Rc;

use actix_http::body::BoxBody;
use actix_http::header::{HeaderValue, CONTENT_TYPE, SERVER};
use actix_http::{HttpService, Request, Response, StatusCode};
use actix_server::Server;
use actix_service::{fn_factory, fn_service};
use bytes::Bytes;
use serde::Serialize;

use crate::db::{describe, Db, DbResult};
use crate::util::{count_param, fortunes_html, Message, SERVER as NAME};

fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<BoxBody> {
    let mut res = Response::with_body(status, BoxBody::new(body.into()));
    let headers = res.headers_mut();
    headers.insert(SERVER, HeaderValue::from_static(NAME));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    res
}

fn json<T: Serialize>(value: DbResult<T>) -> Response<BoxBody> {
    match value.map_err(|e| describe(&e)).and_then(|v| serde_json::to_vec(&v).map_err(|e| e.to_string())) {
        Ok(body) => respond(StatusCode::OK, "application/json", body),
        Err(e) => {
            eprintln!("tfb-actix: {e}");
            respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "internal error")
        }
    }
}

async fn handle(db: &Db, req: Request) -> Response<BoxBody> {
    let query = req.uri().query().unwrap_or("");
    match req.path() {
        "/plaintext" => respond(StatusCode::OK, "text/plain", "Hello, World!"),
        "/json" => json(Ok(Message { message: "Hello, World!" })),
        "/db" => json(db.world().await),
        "/queries" => json(db.worlds(count_param(query, "queries")).await),
        "/updates" => json(db.update(count_param(query, "queries")).await),
        "/cached-queries" => json(Ok(db.cached(count_param(query, "count")))),
        "/fortunes" => match db.fortunes().await {
            Ok(rows) => respond(StatusCode::OK, "text/html; charset=utf-8", fortunes_html(&rows)),
            Err(e) => json::<()>(Err(e)),
        },
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found"),
    }
}

pub fn run(port: u16, workers: usize, url: String) -> std::io::Result<()> {
    actix_rt::System::new().block_on(async move {
        Server::build()
            .workers(workers)
            .backlog(1024)
            .bind("tfb-actix-http", ("127.0.0.1", port), move || {
                let url = url.clone();
                HttpService::build()
                    .h1(fn_factory(move || {
                        let url = url.clone();
                        async move {
                            let db = Rc::new(Db::connect(&url).await.map_err(|e| {
                                eprintln!("tfb-actix: cannot connect to the database: {}", describe(&e));
                            })?);
                            Ok::<_, ()>(fn_service(move |req: Request| {
                                let db = Rc::clone(&db);
                                async move { Ok::<_, std::convert::Infallible>(handle(&db, req).await) }
                            }))
                        }
                    }))
                    .tcp()
            })?
            .run()
            .await
    })
}
