//! The session study's generic web application on actix-web 4.
//!
//!     generic-actix PORT PUBLIC_DIR LOREM_FILE
//!
//! GET / prints the page with the visitor's session id. actix-session has no
//! in-memory server-side store, so this peer keeps its own: a map from a random
//! 128-bit id (cookie "sid") to the last visit, behind one mutex and shared by all
//! workers (one per core), idle sessions dropped after 30 minutes. Static files come
//! from actix-files; POST /upload reads the whole body.
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_files::Files;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use rand::RngCore;

const COOKIE: &str = "sid";
const IDLE_LIMIT: Duration = Duration::from_secs(30 * 60);

struct Sessions {
    map: Mutex<HashMap<String, Instant>>,
}

impl Sessions {
    /// The request's session id, and whether it was created now (cookie absent or unknown).
    fn get_or_create(&self, req: &HttpRequest) -> (String, bool) {
        let now = Instant::now();
        if let Some(cookie) = req.cookie(COOKIE) {
            let mut map = self.map.lock().unwrap();
            if let Some(seen) = map.get_mut(cookie.value()) {
                *seen = now;
                return (cookie.value().to_owned(), false);
            }
        }
        let mut raw = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut raw); // ChaCha CSPRNG seeded from the OS
        let id: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        self.map.lock().unwrap().insert(id.clone(), now);
        (id, true)
    }

    fn expire(&self) {
        let now = Instant::now();
        self.map.lock().unwrap().retain(|_, seen| now.duration_since(*seen) < IDLE_LIMIT);
    }
}

struct Page {
    head: String,
}

fn with_cookie(mut res: actix_web::HttpResponseBuilder, id: &str, new: bool) -> actix_web::HttpResponseBuilder {
    if new {
        res.cookie(Cookie::build(COOKIE, id.to_owned()).path("/").http_only(true).same_site(SameSite::Lax).finish());
    }
    res
}

async fn index(req: HttpRequest, page: web::Data<Page>, sessions: web::Data<Sessions>) -> HttpResponse {
    let (id, new) = sessions.get_or_create(&req);
    let mut body = String::with_capacity(page.head.len() + 64);
    body.push_str(&page.head);
    body.push_str("<p>");
    body.push_str(&id);
    body.push_str("</p></body></html>");
    let mut res = HttpResponse::Ok();
    res.insert_header((CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((CACHE_CONTROL, "no-store"));
    with_cookie(res, &id, new).body(body)
}

async fn upload(req: HttpRequest, body: web::Bytes, sessions: web::Data<Sessions>) -> HttpResponse {
    let (id, new) = sessions.get_or_create(&req);
    let _ = body.len(); // the extractor has read the whole body
    let mut res = HttpResponse::Ok();
    res.insert_header((CONTENT_TYPE, "text/plain; charset=utf-8"));
    with_cookie(res, &id, new).body("Data accepted")
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: generic-actix PORT PUBLIC_DIR LOREM_FILE");
        std::process::exit(2);
    }
    let port: u16 = args[1].parse().expect("PORT");
    let public = args[2].clone();
    let lorem = std::fs::read_to_string(&args[3])?;
    let head = String::from("<!DOCTYPE html>")
        + "<html>"
        + "<head>"
        + "<meta charset=\"UTF-8\">"
        + "<link rel=\"stylesheet\" type=\"text/css\" href=\"/bootstrap.css\">"
        + "<title>Generic Web Application</title>"
        + "</head>"
        + "<body>"
        + "<h1>Generic Web Application</h1>"
        + "<img src=\"/servers.jpg\" width=\"700\">"
        + "<h2>Lorem Ipsum</h2>"
        + &lorem;
    let page = web::Data::new(Page { head });
    let sessions = web::Data::new(Sessions { map: Mutex::new(HashMap::new()) });
    {
        let sessions = sessions.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(60));
            sessions.expire();
        });
    }
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    HttpServer::new(move || {
        App::new()
            .app_data(page.clone())
            .app_data(sessions.clone())
            .route("/", web::get().to(index))
            .route("/upload", web::post().to(upload))
            .service(Files::new("/", &public))
    })
    .workers(workers)
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
