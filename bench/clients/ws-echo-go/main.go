// ws-echo: a WebSocket echo load client for the WebSocket benchmark, written in Go with
// github.com/gorilla/websocket so that servers are not measured with kiln's own client.
//
//	ws-echo -url ws://127.0.0.1:8080/ws -c 64 -d 10s -size 64 [-warmup 2s] [-binary]
//
// It opens -c connections (each within 10 s, or it exits with status 1; permessage-deflate
// is not offered), then every connection runs a closed loop: send one message of -size
// bytes (text unless -binary; each carries a sequence number), wait for its echo, check
// that the echo has the same type and is byte-identical (a mismatch is an error), repeat.
// The clock starts once all connections are open: the first -warmup is not measured, then
// the -d window is. A round trip counts when its echo arrives inside the window; its
// latency is the time from just before the send to the end of the read. A round trip still
// in flight when the window ends is abandoned (neither counted nor an error). A socket
// error or a close by the server is an error and ends that connection. One line on stdout:
//
//	result msgs_per_s=<float> p50_us=<n> p99_us=<n> errors=<n> conns=<n> msgs=<n>
//
// msgs_per_s = msgs / -d. Percentiles come from a log-linear histogram (exact below
// 256 us, within 0.4% above). GOMAXPROCS (environment) bounds the client's cores.
// Exit status: 0 without errors, 1 with errors or when a connection cannot be opened,
// 2 for bad usage.
package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const openTimeout = 10 * time.Second

func main() {
	url := flag.String("url", "", "ws://HOST:PORT/PATH of the echo endpoint")
	conns := flag.Int("c", 1, "connections, one closed loop each")
	dur := flag.Duration("d", 10*time.Second, "measured duration")
	warmup := flag.Duration("warmup", 0, "unmeasured time before -d")
	size := flag.Int("size", 64, "message size in bytes")
	binary := flag.Bool("binary", false, "send binary messages (default text)")
	flag.Parse()
	if flag.NArg() != 0 || *conns < 1 || *dur <= 0 || *warmup < 0 || *size < 0 ||
		!(strings.HasPrefix(*url, "ws://") || strings.HasPrefix(*url, "wss://")) {
		fmt.Fprintln(os.Stderr, "usage: ws-echo -url ws://HOST:PORT/PATH -c CONNECTIONS -d DURATION -size BYTES [-warmup DURATION] [-binary]")
		os.Exit(2)
	}
	msgType := websocket.TextMessage
	if *binary {
		msgType = websocket.BinaryMessage
	}

	// One message per frame: gorilla's client splits a message larger than its write buffer.
	bufSize := max(4096, *size+16)
	dialer := websocket.Dialer{
		HandshakeTimeout:  openTimeout,
		ReadBufferSize:    bufSize,
		WriteBufferSize:   bufSize,
		EnableCompression: false,
	}
	ws, err := openAll(&dialer, *url, *conns)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ws-echo: %v\n", err)
		os.Exit(1)
	}

	begin := time.Now().Add(*warmup)
	end := begin.Add(*dur)
	results := make([]loopResult, len(ws))
	var wg sync.WaitGroup
	for i, c := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = echoLoop(c, msgType, *size, begin, end)
		}()
	}
	wg.Wait()

	var total loopResult
	for i := range results {
		total.merge(&results[i])
		if results[i].firstErr != nil && total.firstErr == nil {
			total.firstErr = results[i].firstErr
		}
	}
	if total.firstErr != nil {
		fmt.Fprintf(os.Stderr, "ws-echo: %d errors; the first: %v\n", total.errors, total.firstErr)
	}
	fmt.Printf("result msgs_per_s=%.1f p50_us=%d p99_us=%d errors=%d conns=%d msgs=%d\n",
		float64(total.msgs)/dur.Seconds(), total.latency.percentile(50), total.latency.percentile(99),
		total.errors, len(ws), total.msgs)
	if total.errors > 0 {
		os.Exit(1)
	}
}

// openAll opens n connections (at most 64 handshakes at a time), each within openTimeout.
func openAll(d *websocket.Dialer, url string, n int) ([]*websocket.Conn, error) {
	ws := make([]*websocket.Conn, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
			defer cancel()
			c, resp, err := d.DialContext(ctx, url, nil)
			if err != nil && resp != nil {
				err = fmt.Errorf("%w (HTTP %s)", err, resp.Status)
			}
			ws[i], errs[i] = c, err
		}()
	}
	wg.Wait()
	failed, first := 0, error(nil)
	for _, err := range errs {
		if err != nil {
			failed++
			first = cmp.Or(first, err)
		}
	}
	if failed == 0 {
		return ws, nil
	}
	for _, c := range ws {
		if c != nil {
			c.Close()
		}
	}
	return nil, fmt.Errorf("%d of %d connections to %s not opened (limit %v each); the first error: %w",
		failed, n, url, openTimeout, first)
}

type loopResult struct {
	msgs, errors uint64
	firstErr     error
	latency      histogram // microseconds
}

func (r *loopResult) merge(o *loopResult) {
	r.msgs += o.msgs
	r.errors += o.errors
	r.latency.merge(&o.latency)
}

// echoLoop runs one connection's closed loop until end, then closes it.
func echoLoop(c *websocket.Conn, msgType, size int, begin, end time.Time) (r loopResult) {
	defer func() {
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
			time.Now().Add(time.Second))
		c.Close()
	}()
	fail := func(err error) {
		r.errors++
		if r.firstErr == nil {
			r.firstErr = err
		}
	}
	// A round trip in flight at the end fails with a timeout: abandoned, not an error.
	c.SetReadDeadline(end)
	c.SetWriteDeadline(end)
	atEnd := func(err error) bool {
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(end)
	}

	msg := make([]byte, size)
	for i := range msg {
		msg[i] = 'a' + byte(i%26)
	}
	echo := make([]byte, size+1) // one spare byte: a longer echo is detected
	for seq := uint64(0); ; seq++ {
		// The sequence number (hex, at the front) catches an echo of an earlier message.
		var tag [16]byte
		copy(msg, strconv.AppendUint(tag[:0], seq, 16))
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		if err := c.WriteMessage(msgType, msg); err != nil {
			if !atEnd(err) {
				fail(fmt.Errorf("write: %w", err))
			}
			return
		}
		mt, rd, err := c.NextReader()
		var n int
		if err == nil {
			n, err = io.ReadFull(rd, echo)
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = nil // shorter or exactly as long as echo: n tells
			}
		}
		if err != nil {
			if !atEnd(err) {
				fail(fmt.Errorf("read: %w", err))
			}
			return
		}
		t1 := time.Now()
		if mt != msgType || n != size || !bytes.Equal(echo[:n], msg) {
			got := strconv.Itoa(n)
			if n > size {
				got = "more than " + strconv.Itoa(size)
			}
			fail(fmt.Errorf("echo mismatch: sent %d bytes (%s), received %s bytes (%s)", size, kind(msgType), got, kind(mt)))
			continue
		}
		if !t1.Before(begin) && t1.Before(end) {
			r.msgs++
			r.latency.record(uint64(t1.Sub(t0).Microseconds()))
		}
	}
}

func kind(msgType int) string {
	switch msgType {
	case websocket.TextMessage:
		return "text"
	case websocket.BinaryMessage:
		return "binary"
	}
	return "type " + strconv.Itoa(msgType)
}

// histogram: log-linear buckets, exact below 256, then 128 buckets per power of two.
const (
	subBits    = 7
	linearTop  = 1 << (subBits + 1) // 256
	maxValue   = 1<<32 - 1          // larger values are clamped (71 minutes in microseconds)
	numBuckets = linearTop + (32-subBits-1)<<subBits
)

type histogram struct {
	buckets []uint64
	count   uint64
}

func bucketOf(v uint64) int {
	v = min(v, maxValue)
	if v < linearTop {
		return int(v)
	}
	e := bits.Len64(v) - 1 // >= subBits+1
	sub := (v >> (e - subBits)) & (1<<subBits - 1)
	return linearTop + (e-subBits-1)<<subBits + int(sub)
}

// bucketMid is the middle of bucket i's range (its value below linearTop).
func bucketMid(i int) uint64 {
	if i < linearTop {
		return uint64(i)
	}
	j := i - linearTop
	e := j>>subBits + subBits + 1
	low := uint64(1)<<e | uint64(j&(1<<subBits-1))<<(e-subBits)
	return low + (uint64(1)<<(e-subBits)-1)/2
}

func (h *histogram) record(v uint64) {
	if h.buckets == nil {
		h.buckets = make([]uint64, numBuckets)
	}
	h.buckets[bucketOf(v)]++
	h.count++
}

func (h *histogram) merge(o *histogram) {
	if o.count == 0 {
		return
	}
	if h.buckets == nil {
		h.buckets = make([]uint64, numBuckets)
	}
	for i, n := range o.buckets {
		h.buckets[i] += n
	}
	h.count += o.count
}

// percentile: the bucket holding the sample of rank ceil(p% of count).
func (h *histogram) percentile(p float64) uint64 {
	if h.count == 0 {
		return 0
	}
	want := max(1, uint64(p/100*float64(h.count)+0.999999))
	var seen uint64
	for i, n := range h.buckets {
		seen += n
		if seen >= want {
			return bucketMid(i)
		}
	}
	return 0
}
