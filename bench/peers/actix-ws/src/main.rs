//! WebSocket echo peer on actix-web 4 with actix-ws (no actors).
//!
//!     actix-ws-echo PORT [WORKERS]
//!
//! GET /ws upgrades (no permessage-deflate: actix-ws does not implement it) and echoes
//! every text and binary message back as it came, fragmented messages reassembled; pings
//! are answered with pongs, a close is answered with a close carrying the same code.
//! Messages up to 1 MiB, kiln's default max_message; a larger one closes with 1009, a
//! protocol error with 1002. GET /plaintext answers "Hello, World!". Binds 127.0.0.1:PORT
//! with WORKERS workers (default: one per core, actix's default).
use actix_web::{rt, web, App, HttpRequest, HttpResponse, HttpServer};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, ProtocolError};

const MAX_MESSAGE: usize = 1 << 20;

async fn ws(req: HttpRequest, body: web::Payload) -> actix_web::Result<HttpResponse> {
    let (response, mut session, stream) = actix_ws::handle(&req, body)?;
    let mut stream = stream
        .max_frame_size(MAX_MESSAGE)
        .aggregate_continuations()
        .max_continuation_size(MAX_MESSAGE);
    rt::spawn(async move {
        let reason = loop {
            let sent = match stream.recv().await {
                Some(Ok(AggregatedMessage::Text(text))) => session.text(text).await,
                Some(Ok(AggregatedMessage::Binary(data))) => session.binary(data).await,
                Some(Ok(AggregatedMessage::Ping(data))) => session.pong(&data).await,
                Some(Ok(AggregatedMessage::Pong(_))) => Ok(()),
                Some(Ok(AggregatedMessage::Close(reason))) => break reason.map(|r| CloseReason::from(r.code)),
                Some(Err(ProtocolError::Overflow)) => break Some(CloseCode::Size.into()),
                Some(Err(_)) => break Some(CloseCode::Protocol.into()),
                None => return, // the connection is gone
            };
            if sent.is_err() {
                return;
            }
        };
        let _ = session.close(reason).await;
    });
    Ok(response)
}

async fn plaintext() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("Hello, World!")
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        Some(Ok(port)) => port,
        _ => {
            eprintln!("usage: actix-ws-echo PORT");
            std::process::exit(2);
        }
    };
    let server = HttpServer::new(|| {
        App::new()
            .route("/ws", web::get().to(ws))
            .route("/plaintext", web::get().to(plaintext))
    });
    let server = match std::env::args().nth(2).map(|w| w.parse::<usize>()) {
        Some(Ok(workers)) if workers > 0 => server.workers(workers),
        Some(_) => {
            eprintln!("usage: actix-ws-echo PORT [WORKERS]");
            std::process::exit(2);
        }
        None => server,
    };
    server.bind(("127.0.0.1", port))?.run().await
}
