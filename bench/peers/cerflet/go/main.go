// Cerflet's hello page (seeds/004) on Go's net/http, standard library only.
//
//	server -port 8080
//
// GET / answers the same 99 bytes as text/html; any other path is a 404. One process,
// GOMAXPROCS = cores (the default), no request log.
package main

import (
	"flag"
	"log"
	"net/http"
	"strconv"
)

const page = "<!DOCTYPE html><html><head><title>Hello World</title></head>" +
	"<body><p>Hello World!</p></body></html>"

var pageBytes = []byte(page)
var pageLength = strconv.Itoa(len(page))

func hello(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html")
	h.Set("Content-Length", pageLength)
	w.Write(pageBytes)
}

func main() {
	port := flag.Int("port", 8080, "TCP port on 127.0.0.1")
	flag.Parse()
	http.HandleFunc("GET /", hello)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+strconv.Itoa(*port), nil))
}
