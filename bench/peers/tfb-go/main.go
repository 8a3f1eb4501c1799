// TechEmpower Framework Benchmarks peer on Go's net/http (bench/peers/tfb-go).
//
//	server -port PORT        (DATABASE_URL from the environment)
//
// Serves the TFB tests (/plaintext, /json, /db, /queries, /fortunes, /updates,
// /cached-queries) on 127.0.0.1:PORT, written the way TechEmpower's Go entries on the
// standard library are (frameworks/Go/go-std): net/http's ServeMux, encoding/json,
// html/template for fortunes (it escapes), and pgx v5 with a pgxpool shared by all
// goroutines (GOMAXPROCS = all cores). pgx prepares and caches each statement per
// connection; the SELECTs of /queries and /updates, one per id, go out as a pgx.Batch,
// pipelined on one connection; /updates then writes all rows in one UPDATE with the ids
// sorted, so concurrent requests lock rows in the same order. /cached-queries reads an
// in-process copy of the world table loaded at start. Every response is buffered and
// sent with a Content-Length. The pool holds 4 connections per core unless
// DATABASE_URL sets pool_max_conns.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	worldSQL  = "SELECT id, randomnumber FROM world WHERE id = $1"
	updateSQL = "UPDATE world SET randomnumber = v.r " +
		"FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS r) AS v WHERE world.id = v.id"
	fortuneSQL   = "SELECT id, message FROM fortune"
	extraFortune = "Additional fortune added at request time."
)

type World struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

type Fortune struct {
	ID      int32
	Message string
}

var fortuneTmpl = template.Must(template.New("fortunes").Parse(`<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>{{range .}}<tr><td>{{.ID}}</td><td>{{.Message}}</td></tr>{{end}}</table></body></html>`))

var (
	db    *pgxpool.Pool
	cache []World // index: id; read-only after start
)

func randomID() int32 { return rand.Int32N(10000) + 1 }

// count reads a query parameter clamped to 1..500 (missing or not a number: 1).
func count(r *http.Request, name string) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 500)
}

func write(w http.ResponseWriter, contentType string, body []byte) {
	h := w.Header()
	h.Set("Server", "net/http")
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		fail(w, err)
		return
	}
	write(w, "application/json", body)
}

func fail(w http.ResponseWriter, err error) {
	if !errors.Is(err, context.Canceled) { // not when the client went away
		log.Print(err)
	}
	w.Header().Set("Server", "net/http")
	http.Error(w, "internal error", http.StatusInternalServerError)
}

// fetch reads n random rows, one SELECT per id, sent together as one pipelined batch.
func fetch(ctx context.Context, n int) ([]World, error) {
	worlds := make([]World, n)
	batch := &pgx.Batch{}
	for i := range worlds {
		batch.Queue(worldSQL, randomID()).QueryRow(func(row pgx.Row) error {
			return row.Scan(&worlds[i].ID, &worlds[i].RandomNumber)
		})
	}
	if err := db.SendBatch(ctx, batch).Close(); err != nil {
		return nil, err
	}
	return worlds, nil
}

func plaintext(w http.ResponseWriter, r *http.Request) {
	write(w, "text/plain", []byte("Hello, World!"))
}

func jsonHandler(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]string{"message": "Hello, World!"})
}

func single(w http.ResponseWriter, r *http.Request) {
	var world World
	if err := db.QueryRow(r.Context(), worldSQL, randomID()).Scan(&world.ID, &world.RandomNumber); err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, &world)
}

func queries(w http.ResponseWriter, r *http.Request) {
	worlds, err := fetch(r.Context(), count(r, "queries"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, worlds)
}

func updates(w http.ResponseWriter, r *http.Request) {
	worlds, err := fetch(r.Context(), count(r, "queries"))
	if err != nil {
		fail(w, err)
		return
	}
	for i := range worlds {
		worlds[i].RandomNumber = randomID()
	}
	sorted := slices.Clone(worlds)
	slices.SortFunc(sorted, func(a, b World) int { return int(a.ID - b.ID) })
	ids := make([]int32, len(sorted))
	numbers := make([]int32, len(sorted))
	for i, s := range sorted {
		ids[i], numbers[i] = s.ID, s.RandomNumber
	}
	if _, err := db.Exec(r.Context(), updateSQL, ids, numbers); err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, worlds)
}

func cachedQueries(w http.ResponseWriter, r *http.Request) {
	worlds := make([]World, count(r, "count"))
	for i := range worlds {
		worlds[i] = cache[randomID()]
	}
	writeJSON(w, worlds)
}

func fortunes(w http.ResponseWriter, r *http.Request) {
	rows, _ := db.Query(r.Context(), fortuneSQL)
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Fortune, error) {
		var f Fortune
		err := row.Scan(&f.ID, &f.Message)
		return f, err
	})
	if err != nil {
		fail(w, err)
		return
	}
	list = append(list, Fortune{0, extraFortune})
	slices.SortFunc(list, func(a, b Fortune) int { return strings.Compare(a.Message, b.Message) })
	var buf bytes.Buffer
	if err := fortuneTmpl.Execute(&buf, list); err != nil {
		fail(w, err)
		return
	}
	write(w, "text/html; charset=utf-8", buf.Bytes())
}

func loadCache(ctx context.Context) error {
	rows, _ := db.Query(ctx, "SELECT id, randomnumber FROM world")
	worlds, err := pgx.CollectRows(rows, pgx.RowToStructByPos[World])
	if err != nil {
		return err
	}
	cache = make([]World, 10001)
	for _, w := range worlds {
		if w.ID >= 1 && w.ID <= 10000 {
			cache[w.ID] = w
		}
	}
	return nil
}

func main() {
	port := flag.Int("port", 8080, "port to listen on (127.0.0.1)")
	flag.Parse()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		log.Fatal("tfb-go: DATABASE_URL is not set")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		log.Fatalf("tfb-go: DATABASE_URL: %v", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = int32(4 * runtime.GOMAXPROCS(0))
	}
	cfg.MinConns = cfg.MaxConns
	ctx := context.Background()
	if db, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		log.Fatalf("tfb-go: %v", err)
	}
	if err := loadCache(ctx); err != nil {
		log.Fatalf("tfb-go: loading the world table: %v", err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /plaintext", plaintext)
	mux.HandleFunc("GET /json", jsonHandler)
	mux.HandleFunc("GET /db", single)
	mux.HandleFunc("GET /queries", queries)
	mux.HandleFunc("GET /updates", updates)
	mux.HandleFunc("GET /fortunes", fortunes)
	mux.HandleFunc("GET /cached-queries", cachedQueries)
	addr := fmt.Sprintf("127.0.0.1:%d", *port)
	log.Fatal(http.ListenAndServe(addr, mux))
}
