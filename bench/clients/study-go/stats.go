package main

import "math/bits"

// Why a request failed; the names are those of kiln bench's "failures" object.
const (
	failConnect   = iota // dial failed
	failReset            // a socket error while sending or reading
	failClosed           // the server closed the connection before any byte of the response
	failTruncated        // the server closed the connection inside the response
	failTimeout          // no complete response within --timeout
	failParse            // malformed response, or bytes after its end
	fail3xx
	fail4xx
	fail5xx
	failKinds
)

var failureNames = [failKinds]string{"connect", "reset", "closed", "truncated", "timeout", "parse",
	"status_3xx", "status_4xx", "status_5xx"}

// stats of one session (one goroutine writes them); merged after the run.
type stats struct {
	ok                     uint64
	failed                 [failKinds]uint64
	pages, assets, uploads uint64 // attempts by kind (abandoned ones taken back)
	connections            uint64 // connections established
	newCookies             uint64 // Set-Cookie with a new name or a new value
	abandoned              uint64 // in flight when the run ended
	bytesIn, bytesOut      uint64
	latency                histogram // successful requests, nanoseconds
}

func (s *stats) failedTotal() uint64 {
	var n uint64
	for _, v := range s.failed {
		n += v
	}
	return n
}

func (s *stats) requests() uint64 { return s.ok + s.failedTotal() }

func (s *stats) merge(o *stats) {
	s.ok += o.ok
	for i := range s.failed {
		s.failed[i] += o.failed[i]
	}
	s.pages += o.pages
	s.assets += o.assets
	s.uploads += o.uploads
	s.connections += o.connections
	s.newCookies += o.newCookies
	s.abandoned += o.abandoned
	s.bytesIn += o.bytesIn
	s.bytesOut += o.bytesOut
	s.latency.merge(&o.latency)
}

// histogram: log-linear buckets, exact below 64, then 32 buckets per power of two
// (a percentile is within about 3% of the true sample).
const (
	subBits    = 5
	linearTop  = 1 << (subBits + 1) // 64
	numBuckets = linearTop + (64-subBits-1)<<subBits
)

type histogram struct {
	buckets         []uint64
	count, max, sum uint64
}

func bucketOf(v uint64) int {
	if v < linearTop {
		return int(v)
	}
	e := bits.Len64(v) - 1 // >= subBits+1
	sub := (v >> (e - subBits)) & (1<<subBits - 1)
	return linearTop + (e-subBits-1)<<subBits + int(sub)
}

func bucketTop(i int) uint64 {
	if i < linearTop {
		return uint64(i)
	}
	j := i - linearTop
	e := j>>subBits + subBits + 1
	low := uint64(1)<<e | uint64(j&(1<<subBits-1))<<(e-subBits)
	return low + uint64(1)<<(e-subBits) - 1
}

func (h *histogram) record(v uint64) {
	if h.buckets == nil {
		h.buckets = make([]uint64, numBuckets)
	}
	h.buckets[bucketOf(v)]++
	h.count++
	h.sum += v
	if v > h.max {
		h.max = v
	}
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
	h.sum += o.sum
	if o.max > h.max {
		h.max = o.max
	}
}

func (h *histogram) mean() float64 {
	if h.count == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.count)
}

// percentile: the smallest bucket bound with at least p% of the samples at or below it.
func (h *histogram) percentile(p float64) uint64 {
	if h.count == 0 {
		return 0
	}
	want := uint64(p/100*float64(h.count) + 0.999999)
	if want < 1 {
		want = 1
	}
	var seen uint64
	for i, n := range h.buckets {
		seen += n
		if seen >= want {
			top := bucketTop(i)
			if top > h.max {
				top = h.max
			}
			return top
		}
	}
	return h.max
}
