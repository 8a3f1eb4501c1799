-- Accounts (kiln::auth): users, and the failed log-in counters that throttle
-- guessing (per account and per client address). Times are unix seconds (UTC).
CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  email         TEXT    NOT NULL UNIQUE CHECK (length(email) BETWEEN 3 AND 254),
  name          TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  password_hash TEXT    NOT NULL,
  epoch         INTEGER NOT NULL DEFAULT 1,
  created_at    INTEGER NOT NULL
);
CREATE TABLE auth_failures (
  id           INTEGER PRIMARY KEY,
  key          TEXT    NOT NULL UNIQUE,
  failures     INTEGER NOT NULL,
  window_start INTEGER NOT NULL
);
