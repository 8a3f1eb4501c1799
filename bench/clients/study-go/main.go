// study-go: an independent load client for the session study (bench/study.sh), written
// in Go with the standard library only, so that the study's numbers are not measured
// with kiln's own client alone. It runs the same scenarios as `kiln bench` and takes
// the same options that study.sh passes:
//
//	study-go -b 100 -r 10000 -c 2 -g [-u] -d 10 [-t THREADS] --json http://127.0.0.1:8080/
//
// Each batch is one browser-like session (a goroutine with its own connection and
// cookie jar) sending its requests one after another: the page, then once per session
// the stylesheets, scripts and images the page names (-g), then with -u a 15 KiB
// multipart upload to POST /upload, then the page again, and so on. A batch ends after
// -r requests or when -d seconds have passed, whichever comes first; a request still in
// flight at the end is abandoned (counted neither as ok nor as failed). -c: 0 closes the
// connection after every request, 1 keeps it, 2 drops it after 40-167 requests (uniform)
// and reconnects; the cookie jar survives reconnects. A request is ok when its status is
// 2xx; everything else (other statuses, connect errors, resets, timeouts, malformed
// responses) is a failure. --json prints one line with the fields `kiln bench --json`
// prints (requests_per_second, ok, failed, requests, new_cookies, ...).
//
// -t sets GOMAXPROCS; by default half the cores (at least 1, at most the batches), as
// kiln bench's default number of loop threads: the client shares the machine with the
// server. HTTP/1.1 is spoken over raw TCP connections (net.Conn, one bufio.Reader of
// 64 KiB per session): no net/http, no allocation per request on the hot path.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

type config struct {
	batches     int
	requests    uint64
	mode        int // 0 close each, 1 keep-alive, 2 random drops
	getAssets   bool
	fixedAssets bool
	upload      bool
	duration    time.Duration
	threads     int
	timeout     time.Duration
	seed        uint64
	json        bool
	verbose     bool

	url       string
	authority string // Host header and dial address
	dialAddr  string
	path      string

	start       time.Time
	hasDeadline bool
	deadline    time.Time
	req         *templates
}

const maxRequests = uint64(1) << 40

func usage() {
	fmt.Fprint(os.Stderr, `usage: study-go [options] URL
Independent load client of the session study (same scenarios as kiln bench):
each batch is a browser-like session with its own connection and cookie jar.
  URL            http://HOST[:PORT][/PATH] (HOST: IPv4 address or localhost)
  -b N           batches: parallel sessions, one connection each (default 1)
  -r N           requests per batch: pages + assets + uploads (default 1; with -d
                 alone: no limit)
  -c 0|1|2       0: new connection per request; 1: keep-alive (default);
                 2: disconnect after 40-167 requests (uniform), then reconnect
  -g             fetch the page's CSS, JS and images once per session
  -f             fixed asset list /bootstrap.css and /servers.jpg (implies -g)
  -u             POST /upload (15 KiB multipart/form-data) after each page
  -d SECONDS     run for this long (with -r: whichever ends first)
  -t THREADS     GOMAXPROCS (default: cores/2, at least 1, at most -b)
  --timeout MS   per-request timeout (default 5000)
  --seed N       seed of the random disconnect points (default 1)
  --json         print one JSON object with the results on stdout
  -v             print every request and error on stderr
Exit status: 0 all requests succeeded, 1 some failed, 2 bad usage.
`)
}

func bad(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "study-go: "+format+" (see study-go -h)\n", a...)
	os.Exit(2)
}

func parseArgs() *config {
	c := &config{}
	fs := flag.NewFlagSet("study-go", flag.ContinueOnError)
	fs.Usage = usage
	fs.IntVar(&c.batches, "b", 1, "")
	reqs := fs.Uint64("r", 0, "")
	fs.IntVar(&c.mode, "c", 1, "")
	fs.BoolVar(&c.getAssets, "g", false, "")
	fs.BoolVar(&c.fixedAssets, "f", false, "")
	fs.BoolVar(&c.upload, "u", false, "")
	dur := fs.Float64("d", 0, "")
	fs.IntVar(&c.threads, "t", 0, "")
	timeoutMs := fs.Int("timeout", 5000, "")
	fs.Uint64Var(&c.seed, "seed", 1, "")
	fs.BoolVar(&c.json, "json", false, "")
	fs.BoolVar(&c.verbose, "v", false, "")
	// Options may also follow the URL, as with kiln bench.
	var rest []string
	args := os.Args[1:]
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				os.Exit(0)
			}
			os.Exit(2)
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) != 1 {
		bad("expected one URL, got %d", len(rest))
	}
	if c.batches < 1 || c.batches > 100000 {
		bad("-b: expected a number of batches from 1 to 100000")
	}
	if c.mode < 0 || c.mode > 2 {
		bad("-c: expected 0, 1 or 2")
	}
	if *dur < 0 || *dur > 7*24*3600 {
		bad("-d: expected a duration in seconds greater than 0")
	}
	if c.threads < 0 || c.threads > 256 {
		bad("-t: expected a number of threads from 1 to 256")
	}
	if *timeoutMs < 1 || *timeoutMs > 3600*1000 {
		bad("--timeout: expected milliseconds from 1 to 3600000")
	}
	c.timeout = time.Duration(*timeoutMs) * time.Millisecond
	c.duration = time.Duration(*dur * float64(time.Second))
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "r" {
			c.requests = *reqs
			if c.requests < 1 || c.requests > maxRequests {
				bad("-r: expected a number of requests of at least 1")
			}
		}
	})
	if c.requests == 0 { // -r not given
		c.requests = 1
		if c.duration > 0 {
			c.requests = maxRequests
		}
	}
	if c.fixedAssets {
		c.getAssets = true
	}
	if err := c.parseURL(rest[0]); err != "" {
		bad("URL: %s", err)
	}
	return c
}

func (c *config) parseURL(u string) string {
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		if !strings.EqualFold(rest[:i], "http") {
			return "only http:// URLs are supported"
		}
		rest = rest[i+3:]
	}
	auth, path := rest, "/"
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		auth, path = rest[:i], rest[i:]
		if path[0] == '?' {
			path = "/" + path
		}
	}
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	for i := 0; i < len(path); i++ {
		if path[i] <= ' ' || path[i] == 0x7f {
			return "the URL path has a space or control character"
		}
	}
	host, port := auth, "80"
	if i := strings.LastIndexByte(auth, ':'); i >= 0 {
		host, port = auth[:i], auth[i+1:]
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "bad port in URL"
		}
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || ip.To4() == nil {
			return "the host must be an IPv4 address or localhost"
		}
	} else {
		host = "127.0.0.1"
	}
	c.url = "http://" + auth + path
	c.authority = auth
	c.dialAddr = net.JoinHostPort(host, port)
	c.path = path
	return ""
}

func main() {
	c := parseArgs()
	if c.threads == 0 {
		c.threads = runtime.NumCPU() / 2
		if c.threads < 1 {
			c.threads = 1
		}
	}
	if c.threads > c.batches {
		c.threads = c.batches
	}
	runtime.GOMAXPROCS(c.threads)
	c.req = newTemplates(c.authority, c.path)

	sessions := make([]*session, c.batches)
	for i := range sessions {
		sessions[i] = newSession(c, i)
	}
	c.start = time.Now()
	if c.duration > 0 {
		c.hasDeadline = true
		c.deadline = c.start.Add(c.duration)
	}
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func(s *session) {
			defer wg.Done()
			s.run()
		}(s)
	}
	wg.Wait()
	elapsed := time.Since(c.start)

	var total stats
	for _, s := range sessions {
		total.merge(&s.st)
	}
	if c.json {
		fmt.Println(jsonReport(c, &total, elapsed))
	} else {
		fmt.Print(textReport(c, &total, elapsed))
	}
	if total.failedTotal() != 0 {
		os.Exit(1)
	}
}

type fixed3 float64

func (f fixed3) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(f), 'f', 3, 64), nil
}

func rps(t *stats, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(t.ok) / elapsed.Seconds()
}

// jsonReport: the field names and order of `kiln bench --json`, plus "client".
func jsonReport(c *config, t *stats, elapsed time.Duration) string {
	failures := struct {
		Connect   uint64 `json:"connect"`
		Reset     uint64 `json:"reset"`
		Closed    uint64 `json:"closed"`
		Truncated uint64 `json:"truncated"`
		Timeout   uint64 `json:"timeout"`
		Parse     uint64 `json:"parse"`
		Status3xx uint64 `json:"status_3xx"`
		Status4xx uint64 `json:"status_4xx"`
		Status5xx uint64 `json:"status_5xx"`
	}{t.failed[failConnect], t.failed[failReset], t.failed[failClosed], t.failed[failTruncated],
		t.failed[failTimeout], t.failed[failParse], t.failed[fail3xx], t.failed[fail4xx], t.failed[fail5xx]}
	ms := func(ns uint64) fixed3 { return fixed3(float64(ns) / 1e6) }
	h := &t.latency
	out := struct {
		Client        string      `json:"client"`
		URL           string      `json:"url"`
		Batches       int         `json:"batches"`
		Threads       int         `json:"threads"`
		Mode          int         `json:"mode"`
		Requests      uint64      `json:"requests"`
		OK            uint64      `json:"ok"`
		Failed        uint64      `json:"failed"`
		Failures      interface{} `json:"failures"`
		Pages         uint64      `json:"pages"`
		Assets        uint64      `json:"assets"`
		Uploads       uint64      `json:"uploads"`
		Connections   uint64      `json:"connections"`
		NewCookies    uint64      `json:"new_cookies"`
		Abandoned     uint64      `json:"abandoned"`
		BytesReceived uint64      `json:"bytes_received"`
		BytesSent     uint64      `json:"bytes_sent"`
		ElapsedMs     fixed3      `json:"elapsed_ms"`
		RPS           fixed3      `json:"requests_per_second"`
		Latency       interface{} `json:"latency_ms"`
	}{
		Client: "study-go " + runtime.Version(), URL: c.url, Batches: c.batches, Threads: c.threads, Mode: c.mode,
		Requests: t.requests(), OK: t.ok, Failed: t.failedTotal(), Failures: failures,
		Pages: t.pages, Assets: t.assets, Uploads: t.uploads, Connections: t.connections,
		NewCookies: t.newCookies, Abandoned: t.abandoned, BytesReceived: t.bytesIn, BytesSent: t.bytesOut,
		ElapsedMs: fixed3(float64(elapsed) / 1e6), RPS: fixed3(rps(t, elapsed)),
		Latency: struct {
			P50     fixed3 `json:"p50"`
			P90     fixed3 `json:"p90"`
			P99     fixed3 `json:"p99"`
			Max     fixed3 `json:"max"`
			Mean    fixed3 `json:"mean"`
			Samples uint64 `json:"samples"`
		}{ms(h.percentile(50)), ms(h.percentile(90)), ms(h.percentile(99)), ms(h.max), fixed3(h.mean() / 1e6), h.count},
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func textReport(c *config, t *stats, elapsed time.Duration) string {
	var b strings.Builder
	modes := []string{"new connection per request", "keep-alive", "keep-alive, random drops after 40-167 requests"}
	fmt.Fprintf(&b, "study-go %s: %d batch(es), %s, GOMAXPROCS %d\n", c.url, c.batches, modes[c.mode], c.threads)
	fmt.Fprintf(&b, "elapsed:     %.2f ms => %.2f request(s) per second\n", float64(elapsed)/1e6, rps(t, elapsed))
	fmt.Fprintf(&b, "requests:    %d (pages %d, assets %d, uploads %d)\n", t.requests(), t.pages, t.assets, t.uploads)
	fmt.Fprintf(&b, "ok:          %d\n", t.ok)
	fmt.Fprintf(&b, "failed:      %d", t.failedTotal())
	var kinds []string
	for k, n := range t.failed {
		if n != 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", failureNames[k], n))
		}
	}
	if len(kinds) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(kinds, ", "))
	}
	b.WriteString("\n")
	if t.abandoned != 0 {
		fmt.Fprintf(&b, "abandoned:   %d (in flight when the run ended; not counted)\n", t.abandoned)
	}
	fmt.Fprintf(&b, "connections: %d\nnew cookies: %d\nreceived:    %d bytes\nsent:        %d bytes\n",
		t.connections, t.newCookies, t.bytesIn, t.bytesOut)
	if h := &t.latency; h.count != 0 {
		fmt.Fprintf(&b, "latency:     p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
			float64(h.percentile(50))/1e6, float64(h.percentile(90))/1e6, float64(h.percentile(99))/1e6, float64(h.max)/1e6)
	}
	return b.String()
}
