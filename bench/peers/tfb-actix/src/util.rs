//! Pieces shared by both variants: random ids, the `queries`/`count` parameter, the JSON
//! row type and the fortunes page (written by hand, escaping each message).
use std::cell::RefCell;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

pub const SERVER: &str = "actix";
pub const EXTRA_FORTUNE: &str = "Additional fortune added at request time.";

#[derive(Serialize, Clone, Copy)]
pub struct World {
    pub id: i32,
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
}

#[derive(Serialize)]
pub struct Message {
    pub message: &'static str,
}

thread_local! {
    static RNG: RefCell<SmallRng> = RefCell::new(SmallRng::from_entropy());
}

/// A row id, uniform in 1..=10000.
pub fn random_id() -> i32 {
    RNG.with(|r| r.borrow_mut().gen_range(1..=10_000))
}

/// The value of `name` in the query string, clamped to 1..=500 (missing or not a
/// number: 1), as TFB's rules ask.
pub fn count_param(query: &str, name: &str) -> usize {
    let value = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v);
    match value.and_then(|v| v.parse::<i64>().ok()) {
        Some(n) => n.clamp(1, 500) as usize,
        None => 1,
    }
}

fn escape_into(out: &mut String, s: &str) {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let rep = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

/// The fortunes page for rows already sorted by message.
pub fn fortunes_html(rows: &[(i32, String)]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(1400);
    out.push_str(
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
         <tr><th>id</th><th>message</th></tr>",
    );
    for (id, message) in rows {
        let _ = write!(out, "<tr><td>{id}</td><td>");
        escape_into(&mut out, message);
        out.push_str("</td></tr>");
    }
    out.push_str("</table></body></html>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count_param("", "queries"), 1);
        assert_eq!(count_param("queries=", "queries"), 1);
        assert_eq!(count_param("queries=foo", "queries"), 1);
        assert_eq!(count_param("queries=0", "queries"), 1);
        assert_eq!(count_param("queries=-3", "queries"), 1);
        assert_eq!(count_param("queries=20", "queries"), 20);
        assert_eq!(count_param("a=1&queries=501", "queries"), 500);
        assert_eq!(count_param("count=7", "count"), 7);
    }

    #[test]
    fn escapes() {
        let html = fortunes_html(&[(11, "<a href=\"x\">'&'</a>".into())]);
        assert!(html.contains("<td>11</td><td>&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;</td>"));
    }
}
