package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"time"
)

const (
	readBufferBytes = 64 * 1024
	retryDelay      = 10 * time.Millisecond
	dropMin         = 40 // -c 2: requests on a connection before the client drops it
	dropMax         = 167
)

const (
	kindPage = iota
	kindAsset
	kindUpload
)

// countingConn counts the bytes read from the connection.
type countingConn struct {
	c net.Conn
	n *uint64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.c.Read(p)
	*c.n += uint64(n)
	return n, err
}

// session: one batch. Runs on its own goroutine; nothing in it is shared.
type session struct {
	c     *config
	index int
	st    stats
	rng   *rand.Rand
	jar   cookieJar

	conn       net.Conn
	br         *bufio.Reader
	reqsOnConn uint64
	dropAfter  uint64
	// connDeadline: the read/write deadline set on conn
	connDeadline time.Time

	kind        int
	sent        uint64 // requests started (the -r budget)
	assetsKnown bool
	assetNext   int
	assets      []string
	assetReqs   [][]byte
	collect     bool   // keep the next page's body to find its assets
	body        []byte // that body
	wbuf        []byte
}

func newSession(c *config, index int) *session {
	s := &session{c: c, index: index, rng: rand.New(rand.NewPCG(c.seed, uint64(index)))}
	s.br = bufio.NewReaderSize(countingConn{nil, &s.st.bytesIn}, readBufferBytes)
	if c.fixedAssets {
		s.setAssets([]string{"/bootstrap.css", "/servers.jpg"})
	} else {
		s.collect = c.getAssets
	}
	return s
}

func (s *session) setAssets(list []string) {
	s.assets = list
	for _, a := range list {
		s.assetReqs = append(s.assetReqs, s.c.req.get(a))
	}
	s.assetsKnown = true
	s.collect = false
}

func (s *session) run() {
	defer s.closeConn()
	for s.sent < s.c.requests {
		now := time.Now()
		if s.c.hasDeadline && !now.Before(s.c.deadline) {
			return
		}
		if !s.request(now) {
			return
		}
	}
}

func (s *session) closeConn() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

func (s *session) target() string {
	switch s.kind {
	case kindAsset:
		return s.assets[s.assetNext]
	case kindUpload:
		return uploadTarget
	}
	return s.c.path
}

// request sends one request and reads its response. False: the run ended while it was
// in flight (abandoned: not counted) and the session is done.
func (s *session) request(start time.Time) bool {
	c := s.c
	s.sent++
	switch s.kind {
	case kindPage:
		s.st.pages++
	case kindAsset:
		s.st.assets++
	case kindUpload:
		s.st.uploads++
	}
	deadline := start.Add(c.timeout)
	if c.hasDeadline && c.deadline.Before(deadline) {
		deadline = c.deadline
	}

	if s.conn == nil {
		d := net.Dialer{Deadline: deadline, KeepAlive: -1}
		conn, err := d.Dial("tcp", c.dialAddr)
		if err != nil {
			if s.ended() {
				return s.abandon()
			}
			s.fail(failConnect, err)
			s.pause(start)
			return true
		}
		s.conn = conn
		s.connDeadline = time.Time{}
		s.br.Reset(countingConn{conn, &s.st.bytesIn})
		s.st.connections++
		s.reqsOnConn = 0
		if c.mode == 2 {
			s.dropAfter = dropMin + s.rng.Uint64N(dropMax-dropMin+1)
		}
	}
	closeAfter := c.mode == 0 || (c.mode == 2 && s.reqsOnConn+1 >= s.dropAfter)

	w := s.wbuf[:0]
	switch s.kind {
	case kindPage:
		w = append(w, c.req.page...)
	case kindAsset:
		w = append(w, s.assetReqs[s.assetNext]...)
	case kindUpload:
		w = append(w, c.req.uploadHead...)
	}
	w = append(w, s.jar.line...)
	if closeAfter {
		w = append(w, connClose...)
	}
	if s.kind == kindUpload {
		w = append(w, c.req.uploadEnd...)
		w = append(w, c.req.uploadBody...)
	} else {
		w = append(w, "\r\n"...)
	}
	s.wbuf = w

	// The connection's deadline is moved only when it is more than 1/16 of --timeout
	// older than this request's (a timer change per request costs CPU): a request
	// times out after 15/16 to 16/16 of --timeout; the run's end is exact.
	if deadline.Sub(s.connDeadline) > c.timeout/16 || deadline.Equal(c.deadline) && !s.connDeadline.Equal(deadline) {
		s.conn.SetDeadline(deadline)
		s.connDeadline = deadline
	}
	fresh := s.reqsOnConn == 0
	n, err := s.conn.Write(w)
	s.st.bytesOut += uint64(n)
	if err != nil {
		if s.ended() && errors.Is(err, os.ErrDeadlineExceeded) {
			return s.abandon()
		}
		s.fail(classify(err, false), err)
		if fresh { // a new connection that cannot take a request: do not spin on it
			s.pause(start)
		}
		return true
	}

	before := s.st.bytesIn
	collect := s.collect && s.kind == kindPage
	status, keepAlive, err := s.readResponse(collect)
	if err == nil && s.br.Buffered() != 0 {
		err = errParse("bytes after the end of the response")
	}
	if err != nil {
		if s.ended() && errors.Is(err, os.ErrDeadlineExceeded) {
			return s.abandon()
		}
		s.fail(classify(err, s.st.bytesIn != before), err)
		return true
	}
	end := time.Now()
	ok := status >= 200 && status < 300
	if ok {
		s.st.ok++
		s.st.latency.record(uint64(end.Sub(start)))
	} else if status < 400 {
		s.st.failed[fail3xx]++
	} else if status < 500 {
		s.st.failed[fail4xx]++
	} else {
		s.st.failed[fail5xx]++
	}
	if c.verbose {
		fmt.Fprintf(os.Stderr, "batch %d: %s %s -> %d (%.3f ms)\n", s.index, method(s.kind), s.target(), status,
			float64(end.Sub(start))/1e6)
	}
	s.reqsOnConn++
	if closeAfter || !keepAlive {
		s.closeConn()
	}
	if collect && ok {
		s.setAssets(pageAssets(string(s.body), c.path))
		s.body = nil
		if c.verbose {
			fmt.Fprintf(os.Stderr, "batch %d: page names %d asset(s)\n", s.index, len(s.assets))
		}
	}
	s.next()
	return true
}

func method(kind int) string {
	if kind == kindUpload {
		return "POST"
	}
	return "GET"
}

// ended: the run's deadline has passed.
func (s *session) ended() bool {
	return s.c.hasDeadline && !time.Now().Before(s.c.deadline)
}

func (s *session) abandon() bool {
	s.st.abandoned++
	switch s.kind {
	case kindPage:
		s.st.pages--
	case kindAsset:
		s.st.assets--
	case kindUpload:
		s.st.uploads--
	}
	return false
}

// pause waits before the next connect after a failed one (not past the run's end).
func (s *session) pause(start time.Time) {
	d := time.Until(start.Add(retryDelay))
	if s.c.hasDeadline {
		if left := time.Until(s.c.deadline); left < d {
			d = left
		}
	}
	if d > 0 {
		time.Sleep(d)
	}
}

func (s *session) fail(kind int, err error) {
	s.st.failed[kind]++
	if s.c.verbose {
		fmt.Fprintf(os.Stderr, "batch %d: %s %s failed: %s (%v)\n", s.index, method(s.kind), s.target(),
			failureNames[kind], err)
	}
	s.closeConn()
	s.next()
}

// next: what the session asks for after this request (whether it succeeded or not):
// page -> each asset once per session -> upload (-u) -> page ...
func (s *session) next() {
	switch s.kind {
	case kindPage:
		if s.assetsKnown && s.assetNext < len(s.assets) {
			s.kind = kindAsset
		} else if s.c.upload {
			s.kind = kindUpload
		}
	case kindAsset:
		s.assetNext++
		if s.assetNext >= len(s.assets) {
			s.kind = kindPage
			if s.c.upload {
				s.kind = kindUpload
			}
		}
	case kindUpload:
		s.kind = kindPage
	}
}

// ---- responses ------------------------------------------------------------------------

type errParse string

func (e errParse) Error() string { return string(e) }

var (
	errTruncated = errors.New("connection closed inside the response")
	errClosed    = errors.New("connection closed before the response")
)

// classify maps an I/O or parse error to a failure kind; got: some bytes of the
// response had arrived.
func classify(err error, got bool) int {
	var pe errParse
	switch {
	case errors.As(err, &pe):
		return failParse
	case errors.Is(err, os.ErrDeadlineExceeded):
		return failTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), err == errTruncated, err == errClosed:
		if got {
			return failTruncated
		}
		return failClosed
	}
	return failReset // ECONNRESET, EPIPE and other socket errors
}

// line reads one CRLF-terminated line of a head (without CRLF). The slice points into
// the reader's buffer: valid until the next read.
func (s *session) line() ([]byte, error) {
	l, err := s.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, errParse("response head line larger than the read buffer")
		}
		return nil, err
	}
	if len(l) < 2 || l[len(l)-2] != '\r' {
		return nil, errParse("line not ended by CRLF")
	}
	return l[:len(l)-2], nil
}

func lowerEq(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 32
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasToken: a comma-separated header value holds the token (case-insensitive).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		i := indexByte(v, ',')
		part := v
		if i >= 0 {
			part, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if lowerEq(trimSpace(part), token) {
			return true
		}
	}
	return false
}

// readResponse reads one response (skipping interim 1xx ones): its status, whether the
// connection may be kept, the body discarded or (collect) kept in s.body.
func (s *session) readResponse(collect bool) (status int, keepAlive bool, err error) {
	for {
		l, err := s.line()
		if err != nil {
			if err == io.EOF {
				return 0, false, errClosed
			}
			return 0, false, err
		}
		// "HTTP/1.x SSS reason"
		if len(l) < 12 || string(l[:7]) != "HTTP/1." || l[7] < '0' || l[7] > '9' || l[8] != ' ' ||
			(len(l) > 12 && l[12] != ' ') {
			return 0, false, errParse("bad status line")
		}
		status = 0
		for _, c := range l[9:12] {
			if c < '0' || c > '9' {
				return 0, false, errParse("bad status line")
			}
			status = status*10 + int(c-'0')
		}
		minor := l[7] - '0'
		keepAlive = minor >= 1
		length, chunked, haveLength := uint64(0), false, false
		for {
			h, err := s.line()
			if err != nil {
				if err == io.EOF {
					err = errTruncated
				}
				return 0, false, err
			}
			if len(h) == 0 {
				break
			}
			colon := indexByte(h, ':')
			if colon <= 0 || h[colon-1] == ' ' || h[colon-1] == '\t' || h[0] == ' ' || h[0] == '\t' {
				return 0, false, errParse("bad header line")
			}
			name, value := h[:colon], trimSpace(h[colon+1:])
			switch len(name) {
			case 10: // set-cookie, connection
				if status >= 200 && lowerEq(name, "set-cookie") {
					if s.jar.apply(value) {
						s.st.newCookies++
					}
				} else if lowerEq(name, "connection") {
					if hasToken(value, "close") {
						keepAlive = false
					} else if hasToken(value, "keep-alive") {
						keepAlive = true
					}
				}
			case 14: // content-length
				if lowerEq(name, "content-length") {
					var n uint64
					if len(value) == 0 || len(value) > 18 {
						return 0, false, errParse("bad Content-Length")
					}
					for _, c := range value {
						if c < '0' || c > '9' {
							return 0, false, errParse("bad Content-Length")
						}
						n = n*10 + uint64(c-'0')
					}
					if haveLength && n != length {
						return 0, false, errParse("two Content-Length values")
					}
					length, haveLength = n, true
				}
			case 17: // transfer-encoding
				if lowerEq(name, "transfer-encoding") {
					chunked = hasToken(value, "chunked")
				}
			}
		}
		if status == 101 {
			return 0, false, errParse("101 Switching Protocols was never asked for")
		}
		if status < 200 {
			continue // interim response; the final one follows
		}
		if collect {
			s.body = s.body[:0]
		}
		switch {
		case status == 204 || status == 304:
		case chunked && haveLength:
			return 0, false, errParse("Content-Length with chunked")
		case chunked:
			err = s.chunkedBody(collect)
		case haveLength:
			err = s.readBody(length, collect)
		default: // until the server closes
			keepAlive = false
			err = s.untilClose(collect)
		}
		return status, keepAlive, err
	}
}

func (s *session) readBody(n uint64, collect bool) error {
	if !collect {
		for n > 0 {
			step := n
			if step > 1<<30 {
				step = 1 << 30
			}
			d, err := s.br.Discard(int(step))
			n -= uint64(d)
			if err != nil {
				if err == io.EOF {
					return errTruncated
				}
				return err
			}
		}
		return nil
	}
	for n > 0 {
		if _, err := s.br.Peek(1); err != nil { // fills the buffer when it is empty
			if err == io.EOF {
				return errTruncated
			}
			return err
		}
		b := s.br.Buffered()
		if uint64(b) > n {
			b = int(n)
		}
		chunk, _ := s.br.Peek(b)
		s.body = append(s.body, chunk...)
		s.br.Discard(b)
		n -= uint64(b)
	}
	return nil
}

func (s *session) chunkedBody(collect bool) error {
	for {
		l, err := s.line()
		if err != nil {
			if err == io.EOF {
				return errTruncated
			}
			return err
		}
		if i := indexByte(l, ';'); i >= 0 {
			l = l[:i]
		}
		l = trimSpace(l)
		if len(l) == 0 || len(l) > 15 {
			return errParse("bad chunk size")
		}
		var size uint64
		for _, c := range l {
			switch {
			case c >= '0' && c <= '9':
				size = size<<4 | uint64(c-'0')
			case c >= 'a' && c <= 'f':
				size = size<<4 | uint64(c-'a'+10)
			case c >= 'A' && c <= 'F':
				size = size<<4 | uint64(c-'A'+10)
			default:
				return errParse("bad chunk size")
			}
		}
		if size == 0 {
			for { // trailer fields up to the blank line
				t, err := s.line()
				if err != nil {
					if err == io.EOF {
						return errTruncated
					}
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if err := s.readBody(size, collect); err != nil {
			return err
		}
		crlf, err := s.line()
		if err != nil {
			if err == io.EOF {
				return errTruncated
			}
			return err
		}
		if len(crlf) != 0 {
			return errParse("chunk data not followed by CRLF")
		}
	}
}

func (s *session) untilClose(collect bool) error {
	var err error
	if collect {
		var rest []byte
		rest, err = io.ReadAll(s.br)
		s.body = append(s.body, rest...)
	} else {
		_, err = io.Copy(io.Discard, s.br)
	}
	return err
}
