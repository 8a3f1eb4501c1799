package main

import (
	"strconv"
	"strings"
)

// templates: the fixed bytes of the requests, built once and shared read-only.
type templates struct {
	common     string // "Host: ..\r\nUser-Agent: ..\r\n"
	page       []byte // request line of the page + common
	uploadHead []byte // "POST /upload HTTP/1.1\r\n" + common
	uploadEnd  []byte // Content-Type and Content-Length lines, blank line
	uploadBody []byte
}

const (
	uploadTarget    = "/upload"
	uploadFileBytes = 15 * 1024
	boundary        = "studygo-9f3c1e5a7b2d4086"
	connClose       = "Connection: close\r\n"
)

func newTemplates(authority, path string) *templates {
	t := &templates{common: "Host: " + authority + "\r\nUser-Agent: study-go/1\r\n"}
	t.page = t.get(path)
	t.uploadHead = []byte("POST " + uploadTarget + " HTTP/1.1\r\n" + t.common)
	// One file field of 15 KiB of text, as a browser's file form sends it: lines of 63
	// letters and a newline (no line can look like the boundary).
	var b strings.Builder
	b.WriteString("--" + boundary + "\r\n")
	b.WriteString("Content-Disposition: form-data; name=\"file\"; filename=\"upload.txt\"\r\n")
	b.WriteString("Content-Type: text/plain\r\n\r\n")
	for i := 0; i < uploadFileBytes; i++ {
		if i%64 == 63 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(byte('a' + (i/64)%26))
		}
	}
	b.WriteString("\r\n--" + boundary + "--\r\n")
	t.uploadBody = []byte(b.String())
	t.uploadEnd = []byte("Content-Type: multipart/form-data; boundary=" + boundary + "\r\nContent-Length: " +
		strconv.Itoa(len(t.uploadBody)) + "\r\n\r\n")
	return t
}

func (t *templates) get(target string) []byte {
	return []byte("GET " + target + " HTTP/1.1\r\n" + t.common)
}

// cookieJar: the name=value pairs a session got from Set-Cookie, sent back on every
// request (also after a reconnect). Attributes are ignored except Max-Age <= 0, which
// removes the cookie; one origin, so no domain or path matching.
type cookieJar struct {
	names, values []string
	line          []byte // "Cookie: a=1; b=2\r\n" or empty
}

// apply returns true when the field set a new cookie or a new value.
func (j *cookieJar) apply(field []byte) bool {
	pair, attrs := field, []byte(nil)
	if i := indexByte(field, ';'); i >= 0 {
		pair, attrs = field[:i], field[i+1:]
	}
	eq := indexByte(pair, '=')
	if eq < 0 {
		return false
	}
	name, value := trimSpace(pair[:eq]), trimSpace(pair[eq+1:])
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c == ',' || c == 0x7f {
			return false
		}
	}
	for _, c := range value {
		if c < 0x20 {
			return false
		}
	}
	remove := maxAgeGone(attrs)
	for i, n := range j.names {
		if n != string(name) {
			continue
		}
		if remove {
			j.names = append(j.names[:i], j.names[i+1:]...)
			j.values = append(j.values[:i], j.values[i+1:]...)
			j.rebuild()
			return false
		}
		if j.values[i] == string(value) {
			return false
		}
		j.values[i] = string(value)
		j.rebuild()
		return true
	}
	if remove {
		return false
	}
	j.names = append(j.names, string(name))
	j.values = append(j.values, string(value))
	j.rebuild()
	return true
}

func maxAgeGone(attrs []byte) bool {
	for _, a := range strings.Split(string(attrs), ";") {
		k, v, ok := strings.Cut(a, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "max-age") {
			continue
		}
		v = strings.TrimSpace(v)
		if v != "" && (v[0] == '-' || strings.Trim(v, "0") == "") {
			return true
		}
	}
	return false
}

func (j *cookieJar) rebuild() {
	j.line = j.line[:0]
	if len(j.names) == 0 {
		return
	}
	j.line = append(j.line, "Cookie: "...)
	for i := range j.names {
		if i > 0 {
			j.line = append(j.line, "; "...)
		}
		j.line = append(j.line, j.names[i]...)
		j.line = append(j.line, '=')
		j.line = append(j.line, j.values[i]...)
	}
	j.line = append(j.line, "\r\n"...)
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// pageAssets: what a browser fetches after the page: <link rel="stylesheet" href>,
// <script src> and <img src>, same-origin relative references only (resolved against
// the page's directory), fragment dropped, each once, in document order, at most 64.
// A tag scanner, not an HTML parser: comments and script contents are skipped.
func pageAssets(html, pageTarget string) []string {
	var out []string
	pos := 0
	for len(out) < 64 {
		lt := strings.IndexByte(html[pos:], '<')
		if lt < 0 {
			break
		}
		lt += pos
		if strings.HasPrefix(html[lt:], "<!--") {
			end := strings.Index(html[lt+4:], "-->")
			if end < 0 {
				break
			}
			pos = lt + 4 + end + 3
			continue
		}
		name, attr, next := scanTag(html, lt)
		pos = next
		var ref string
		switch strings.ToLower(name) {
		case "link":
			if hasWord(attr["rel"], "stylesheet") {
				ref = attr["href"]
			}
		case "img":
			ref = attr["src"]
		case "script":
			ref = attr["src"]
			if end := strings.Index(strings.ToLower(html[pos:]), "</script"); end >= 0 {
				pos += end
			} else {
				pos = len(html)
			}
		}
		if ref == "" {
			continue
		}
		if target := sameOrigin(ref, pageTarget); target != "" && !contains(out, target) {
			out = append(out, target)
		}
	}
	return out
}

// scanTag reads the tag at html[lt] ('<'): its name, its attributes (lower-case
// names, raw values; quoted or not) and the index just past its '>'.
func scanTag(html string, lt int) (string, map[string]string, int) {
	i := lt + 1
	for i < len(html) && isAlnum(html[i]) {
		i++
	}
	name := html[lt+1 : i]
	attr := map[string]string{}
	for i < len(html) && html[i] != '>' {
		if isSpace(html[i]) || html[i] == '/' {
			i++
			continue
		}
		start := i
		for i < len(html) && !isSpace(html[i]) && html[i] != '=' && html[i] != '>' && html[i] != '/' {
			i++
		}
		key := strings.ToLower(html[start:i])
		for i < len(html) && isSpace(html[i]) {
			i++
		}
		value := ""
		if i < len(html) && html[i] == '=' {
			i++
			for i < len(html) && isSpace(html[i]) {
				i++
			}
			if i < len(html) && (html[i] == '"' || html[i] == '\'') {
				q := html[i]
				i++
				v := i
				for i < len(html) && html[i] != q {
					i++
				}
				value = html[v:i]
				if i < len(html) {
					i++
				}
			} else {
				v := i
				for i < len(html) && !isSpace(html[i]) && html[i] != '>' {
					i++
				}
				value = html[v:i]
			}
		}
		if _, seen := attr[key]; !seen {
			attr[key] = value
		}
	}
	if i < len(html) {
		i++
	}
	return name, attr, i
}

// sameOrigin: the request target of a relative reference, or "" for an absolute,
// scheme-relative, data: or empty one.
func sameOrigin(ref, pageTarget string) string {
	ref = strings.TrimFunc(ref, func(r rune) bool { return r < 128 && isSpace(byte(r)) })
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		ref = ref[:i]
	}
	if ref == "" || strings.HasPrefix(ref, "//") {
		return ""
	}
	if colon := strings.IndexByte(ref, ':'); colon >= 0 {
		if sep := strings.IndexAny(ref, "/?"); sep < 0 || colon < sep {
			return "" // has a scheme
		}
	}
	ref = strings.ReplaceAll(ref, "&amp;", "&")
	if ref[0] != '/' {
		dir, _, _ := strings.Cut(pageTarget, "?")
		dir = dir[:strings.LastIndexByte(dir, '/')+1]
		if dir == "" {
			dir = "/"
		}
		ref = dir + ref
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] <= ' ' || ref[i] == 0x7f {
			return ""
		}
	}
	return ref
}

func hasWord(list, word string) bool {
	for _, w := range strings.FieldsFunc(list, func(r rune) bool { return r < 128 && isSpace(byte(r)) }) {
		if strings.EqualFold(w, word) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
