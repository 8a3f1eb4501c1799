"""The session study's generic web application on Flask, served by Waitress.

    python app.py PORT PUBLIC_DIR LOREM_FILE

GET / prints the page with the visitor's session id. The session is Flask's default:
a signed cookie holding the data (here a random "uid" made on the first visit), so no
server-side store is needed and any thread can serve any visitor. Static files come
from Flask's static route; POST /upload reads the whole body.
Waitress is one process; its threads overlap I/O, and Python code runs one thread at
a time (the GIL).
"""
import logging
import os
import sys
import uuid

from flask import Flask, request, session
from waitress import serve

if len(sys.argv) != 4:
    sys.exit("usage: app.py PORT PUBLIC_DIR LOREM_FILE")
port, public_dir, lorem_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(lorem_file, encoding="utf-8") as f:
    lorem_ipsum = f.read()

app = Flask(__name__, static_folder=os.path.abspath(public_dir), static_url_path="")
app.secret_key = os.environ.get("SESSION_SECRET") or os.urandom(32)
app.config.update(SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax")

HEAD = ("<!DOCTYPE html>"
        "<html>"
        "<head>"
        "<meta charset=\"UTF-8\">"
        "<link rel=\"stylesheet\" type=\"text/css\" href=\"/bootstrap.css\">"
        "<title>Generic Web Application</title>"
        "</head>"
        "<body>"
        "<h1>Generic Web Application</h1>"
        "<img src=\"/servers.jpg\" width=\"700\">"
        "<h2>Lorem Ipsum</h2>")


@app.route("/")
def main():
    if "uid" not in session:
        session["uid"] = uuid.uuid4().hex
    response = HEAD + lorem_ipsum + "<p>" + session["uid"] + "</p></body></html>"
    return response, 200, {"Cache-Control": "no-store"}


@app.route("/upload", methods=["POST"])
def upload():
    request.get_data()
    return "Data accepted", 200, {"Content-Type": "text/plain; charset=utf-8"}


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    # threads: Waitress's default of 4; connection_limit raised from 100 so that 100
    # visitors reconnecting now and then are never turned away.
    serve(app, host="127.0.0.1", port=port, threads=4, connection_limit=1000, backlog=1024,
          ident="waitress")
