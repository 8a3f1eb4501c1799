#!/usr/bin/env bash
# Checks that a server on 127.0.0.1:PORT behaves as the session study's generic web
# application, with curl only:   bash bench/peers/check.sh PORT [NAME]
# Prints one line per check ("ok ..." or "FAIL ..."); exits 1 if any check failed.
set -uo pipefail
port=${1:?usage: check.sh PORT [NAME]}
name=${2:-server}
root=$(cd "$(dirname "$0")/../.." && pwd)
base="http://127.0.0.1:$port"
tmp=$(mktemp -d /tmp/kiln-peer-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok   $name: $*"; }
bad() { echo "FAIL $name: $*"; failed=1; }
session_id() { sed -n 's|.*<p>\([^<]*\)</p></body></html>[[:space:]]*$|\1|p' "$1" | tail -1; }

# 1. the page, first visit: a new session and its cookie
code=$(curl -s -o "$tmp/p1" -D "$tmp/h1" -c "$tmp/jar" -w '%{http_code}' "$base/")
[[ $code == 200 ]] && ok "GET / -> 200" || bad "GET / -> $code"
for want in '<!DOCTYPE html>' '<meta charset="UTF-8">' \
    '<link rel="stylesheet" type="text/css" href="/bootstrap.css">' \
    '<title>Generic Web Application</title>' '<h1>Generic Web Application</h1>' \
    '<img src="/servers.jpg" width="700">' '<h2>Lorem Ipsum</h2>'; do
  grep -qF -- "$want" "$tmp/p1" || bad "page lacks $want"
done
python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
    "$root/examples/generic/lorem.html" "$tmp/p1" &&
  [[ $(grep -o '<p>Lorem ipsum' "$tmp/p1" | wc -l) == 5 ]] && ok "page has the 5 lorem paragraphs of lorem.html" || bad "page lacks lorem.html's text"
id1=$(session_id "$tmp/p1")
[[ -n $id1 ]] && ok "page ends with <p>$id1</p></body></html>" || bad "no <p>SESSION_ID</p></body></html> at the end"
grep -qi '^set-cookie:' "$tmp/h1" && ok "first visit sets a cookie: $(grep -i '^set-cookie:' "$tmp/h1" | head -1 | cut -c13-60 | tr -d '\r')..." || bad "first visit sets no cookie"
grep -qi '^content-type: text/html' "$tmp/h1" && ok "page is text/html" || bad "page content-type: $(grep -i '^content-type' "$tmp/h1" | tr -d '\r')"
cc=$(grep -i '^cache-control:' "$tmp/h1" | tr -d '\r' | cut -d' ' -f2-)
[[ $cc == *no-store* ]] && ok "page Cache-Control: $cc" || bad "page Cache-Control is '$cc' (want no-store)"

# 2. the cookie finds the same session again: on a new connection and on a kept one
curl -s -o "$tmp/p2" -b "$tmp/jar" -c "$tmp/jar" "$base/"
id2=$(session_id "$tmp/p2")
[[ -n $id1 && $id2 == "$id1" ]] && ok "new connection with the cookie: same session id" || bad "new connection with the cookie: '$id2' != '$id1'"
curl -s -b "$tmp/jar" -c "$tmp/jar" -o "$tmp/p3" "$base/" -o "$tmp/p4" "$base/" -w '%{num_connects} ' >"$tmp/nc"
id3=$(session_id "$tmp/p3") id4=$(session_id "$tmp/p4")
[[ $id3 == "$id1" && $id4 == "$id1" && $(cat "$tmp/nc") == "1 0 " ]] &&
  ok "two requests on one keep-alive connection: same session id" ||
  bad "keep-alive: ids '$id3' '$id4', connects '$(cat "$tmp/nc")' (want $id1, '1 0 ')"

# 3. no cookie, or an unknown one: a different, new session
curl -s -o "$tmp/p5" "$base/"
id5=$(session_id "$tmp/p5")
[[ -n $id5 && $id5 != "$id1" ]] && ok "without the cookie: a new session id" || bad "without the cookie: '$id5' (first was '$id1')"

# 4. static files, byte for byte
for f in bootstrap.css:text/css servers.jpg:image/jpeg; do
  file=${f%%:*} type=${f#*:}
  code=$(curl -s -o "$tmp/$file" -D "$tmp/h-$file" -w '%{http_code}' "$base/$file")
  if [[ $code == 200 ]] && cmp -s "$tmp/$file" "$root/examples/generic/public/$file"; then
    ok "GET /$file -> 200, $(stat -c %s "$tmp/$file") bytes identical to the file"
  else
    bad "GET /$file -> $code, $(stat -c %s "$tmp/$file" 2>/dev/null) bytes"
  fi
  grep -qi "^content-type: $type" "$tmp/h-$file" || bad "/$file content-type: $(grep -i '^content-type' "$tmp/h-$file" | tr -d '\r')"
done

# 5. uploads of 15 KiB: raw body and multipart form, both read and answered
head -c 15360 /dev/urandom >"$tmp/up.bin"
for how in raw multipart; do
  if [[ $how == raw ]]; then
    args=(-H 'Content-Type: application/octet-stream' --data-binary "@$tmp/up.bin")
  else
    args=(-F "file=@$tmp/up.bin")
  fi
  body=$(curl -s -b "$tmp/jar" -w ' %{http_code}' "${args[@]}" "$base/upload")
  [[ $body == "Data accepted 200" ]] && ok "POST /upload 15 KiB ($how) -> 'Data accepted'" || bad "POST /upload ($how) -> '$body'"
done

# error paths
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/no-such-file.css")
[[ $code == 404 ]] && ok "GET /no-such-file.css -> 404" || bad "GET /no-such-file.css -> $code"
curl -s -o "$tmp/p6" -b "sid=forged; session=forged; JSESSIONID=forged; connect.sid=forged" "$base/"
id6=$(session_id "$tmp/p6")
[[ -n $id6 && $id6 != forged && $id6 != "$id1" ]] && ok "unknown session cookie: a new session id" || bad "unknown session cookie -> '$id6'"

exit $failed
