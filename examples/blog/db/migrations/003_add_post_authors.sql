-- Each post's author (posts written before accounts have none: 0, and no one may
-- edit them). The name is kept as it was when the post was written.
ALTER TABLE posts ADD COLUMN author_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE posts ADD COLUMN author_name TEXT NOT NULL DEFAULT '';
