-- Posts: times are unix seconds (UTC). The CHECKs repeat the model's validation so
-- no other writer can store what the form would refuse.
CREATE TABLE posts (
  id         INTEGER PRIMARY KEY,
  title      TEXT    NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  body       TEXT    NOT NULL CHECK (length(body) >= 1),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- The index page lists newest first.
CREATE INDEX posts_by_created ON posts (created_at DESC, id DESC);
