// The session study's generic web application on Go's net/http.
//
//	server -port 8080 -public examples/generic/public -lorem examples/generic/lorem.html
//
// GET / prints the page with the visitor's session id; a session is created on the
// first visit and found again by its cookie. Sessions live in a map guarded by a
// mutex (one process, all cores: GOMAXPROCS default); idle ones are dropped after
// 30 minutes. Static files come from http.FileServer. POST /upload reads the body.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

const cookieName = "sid"
const idleLimit = 30 * time.Minute

type session struct {
	id       string
	lastSeen time.Time
}

type store struct {
	mu       sync.Mutex
	sessions map[string]*session
}

func newID() string {
	var b [16]byte // 128 bits from the OS CSPRNG
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// get returns the request's session, creating it (and setting the cookie) if the
// request has no cookie or an unknown one.
func (s *store) get(w http.ResponseWriter, r *http.Request) *session {
	now := time.Now()
	if c, err := r.Cookie(cookieName); err == nil {
		s.mu.Lock()
		ses, ok := s.sessions[c.Value]
		if ok {
			ses.lastSeen = now
		}
		s.mu.Unlock()
		if ok {
			return ses
		}
	}
	ses := &session{id: newID(), lastSeen: now}
	s.mu.Lock()
	s.sessions[ses.id] = ses
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: ses.id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return ses
}

func (s *store) expire() {
	for range time.Tick(time.Minute) {
		cutoff := time.Now().Add(-idleLimit)
		s.mu.Lock()
		for id, ses := range s.sessions {
			if ses.lastSeen.Before(cutoff) {
				delete(s.sessions, id)
			}
		}
		s.mu.Unlock()
	}
}

func main() {
	port := flag.Int("port", 8080, "TCP port on 127.0.0.1")
	public := flag.String("public", "examples/generic/public", "static files")
	loremPath := flag.String("lorem", "examples/generic/lorem.html", "the page's paragraphs")
	flag.Parse()

	lorem, err := os.ReadFile(*loremPath)
	if err != nil {
		log.Fatal(err)
	}
	head := "<!DOCTYPE html>" +
		"<html>" +
		"<head>" +
		"<meta charset=\"UTF-8\">" +
		"<link rel=\"stylesheet\" type=\"text/css\" href=\"/bootstrap.css\">" +
		"<title>Generic Web Application</title>" +
		"</head>" +
		"<body>" +
		"<h1>Generic Web Application</h1>" +
		"<img src=\"/servers.jpg\" width=\"700\">" +
		"<h2>Lorem Ipsum</h2>" + string(lorem)

	sessions := &store{sessions: make(map[string]*session)}
	go sessions.expire()

	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir(*public)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		ses := sessions.get(w, r)
		body := head + "<p>" + ses.id + "</p></body></html>"
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		sessions.get(w, r)
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Data accepted")
	})

	srv := &http.Server{
		Addr:              "127.0.0.1:" + strconv.Itoa(*port),
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       75 * time.Second,
		ErrorLog:          log.New(os.Stderr, "", log.LstdFlags),
	}
	log.Fatal(srv.ListenAndServe())
}
