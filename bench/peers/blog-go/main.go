// The blog benchmark's peer on Go's net/http: the blog index (TreeFrog's test) and
// Klone's "hello NAME" page.
//
//	server -port 8080 -db /tmp/blog.sqlite
//
// GET /posts?page=N lists the newest 10 posts (title linking to /posts/ID, date) in
// the markup of kiln's examples/blog index, read from SQLite on every request: the
// total and the page's rows in one read transaction, as kiln's db::page() does, whole
// rows like an ORM, the same ORDER BY. The page is built by hand, escaped with a
// strings.Replacer giving kiln's entities (no template engine: the cheapest way Go
// has). GET /hello?name=X answers the page of kiln's examples/hello, <h1>hello X</h1>
// with X escaped. SQLite through database/sql and mattn/go-sqlite3, linked against the
// system's libsqlite3 (build tag libsqlite3), the same library kiln uses. One process,
// GOMAXPROCS = all cores.
package main

import (
	"database/sql"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

const perPage = 10

// The page around the list: the same markup as kiln's examples/blog (layouts/app.html
// and posts/index.html) with no flash notice.
const pageHead = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
	"<title>Posts \u00b7 kiln blog</title>\n<link rel=\"stylesheet\" href=\"/app.css\">\n</head>\n<body>\n" +
	"<header class=\"site\">\n  <a class=\"brand\" href=\"/posts\">kiln blog</a>\n" +
	"  <a class=\"button\" href=\"/posts/new\">New post</a>\n</header>\n<main>\n<h1>Posts</h1>\n"
const pageFoot = "</main>\n</body>\n</html>\n"

// Klone's test page, the markup of kiln's examples/hello (views/hello.html).
const helloHead = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hello</title></head>\n" +
	"<body>\n<h1>hello "
const helloFoot = "</h1>\n</body></html>\n"

// HTML escaping with the entities kiln uses, for text and quoted attribute values.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&quot;", "'", "&#39;")

type post struct {
	id        int64
	title     string
	body      string
	createdAt int64
	updatedAt int64
}

type blog struct {
	db    *sql.DB
	count *sql.Stmt
	page  *sql.Stmt
}

// newest reads the total and one page (1-based; past the end: no rows) in one
// read transaction, so both agree.
func (b *blog) newest(page int64) (total int64, posts []post, err error) {
	tx, err := b.db.Begin()
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	if err = tx.Stmt(b.count).QueryRow().Scan(&total); err != nil {
		return 0, nil, err
	}
	if (page-1)*perPage < total {
		rows, err := tx.Stmt(b.page).Query(perPage, (page-1)*perPage)
		if err != nil {
			return 0, nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var p post
			if err := rows.Scan(&p.id, &p.title, &p.body, &p.createdAt, &p.updatedAt); err != nil {
				return 0, nil, err
			}
			posts = append(posts, p)
		}
		if err := rows.Err(); err != nil {
			return 0, nil, err
		}
	}
	return total, posts, tx.Commit()
}

func (b *blog) index(w http.ResponseWriter, r *http.Request) {
	page, err := strconv.ParseInt(r.URL.Query().Get("page"), 10, 64)
	if err != nil || page < 1 || page > 1<<40 {
		page = 1
	}
	total, posts, err := b.newest(page)
	if err != nil {
		log.Print(err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	pages := (total + perPage - 1) / perPage
	var s strings.Builder
	s.Grow(4096)
	s.WriteString(pageHead)
	if len(posts) == 0 {
		s.WriteString("<p class=\"empty\">No posts yet. <a href=\"/posts/new\">Write the first one</a>.</p>\n")
	} else {
		s.WriteString("<ul class=\"posts\">\n")
		for _, p := range posts {
			t := time.Unix(p.createdAt, 0).UTC()
			s.WriteString("  <li>\n    <a href=\"/posts/")
			s.WriteString(strconv.FormatInt(p.id, 10))
			s.WriteString("\">")
			escaper.WriteString(&s, p.title)
			s.WriteString("</a>\n    <time datetime=\"")
			s.WriteString(t.Format("2006-01-02T15:04:05Z"))
			s.WriteString("\">")
			s.WriteString(t.Format("2006-01-02 15:04"))
			s.WriteString("</time>\n  </li>\n")
		}
		s.WriteString("</ul>\n")
	}
	if pages > 1 {
		s.WriteString("<nav class=\"pagination\">\n")
		if page > 1 {
			s.WriteString("  <a rel=\"prev\" href=\"/posts?page=" + strconv.FormatInt(page-1, 10) + "\">&larr; Newer</a>\n")
		}
		s.WriteString("  <span>Page " + strconv.FormatInt(page, 10) + " of " + strconv.FormatInt(pages, 10) + "</span>\n")
		if page < pages {
			s.WriteString("  <a rel=\"next\" href=\"/posts?page=" + strconv.FormatInt(page+1, 10) + "\">Older &rarr;</a>\n")
		}
		s.WriteString("</nav>\n")
	}
	s.WriteString(pageFoot)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(s.Len()))
	io.WriteString(w, s.String())
}

func hello(w http.ResponseWriter, r *http.Request) {
	name := "no name given"
	if v, ok := r.URL.Query()["name"]; ok && len(v) > 0 {
		name = v[0]
	}
	body := helloHead + escaper.Replace(name) + helloFoot
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	io.WriteString(w, body)
}

func main() {
	port := flag.Int("port", 8080, "TCP port on 127.0.0.1")
	dbPath := flag.String("db", "", "the SQLite file with table posts (required)")
	flag.Parse()
	if *dbPath == "" {
		log.Fatal("usage: server -port PORT -db FILE")
	}
	if _, err := os.Stat(*dbPath); err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+*dbPath+"?_busy_timeout=5000&_txlock=deferred")
	if err != nil {
		log.Fatal(err)
	}
	conns := 2 * runtime.GOMAXPROCS(0)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	b := &blog{db: db}
	if b.count, err = db.Prepare("SELECT COUNT(*) FROM posts"); err != nil {
		log.Fatal(err)
	}
	if b.page, err = db.Prepare("SELECT id, title, body, created_at, updated_at FROM posts " +
		"ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /posts", b.index)
	mux.HandleFunc("GET /hello", hello)
	srv := &http.Server{
		Addr:              "127.0.0.1:" + strconv.Itoa(*port),
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       75 * time.Second,
		ErrorLog:          log.New(os.Stderr, "", log.LstdFlags),
	}
	log.Fatal(srv.ListenAndServe())
}
