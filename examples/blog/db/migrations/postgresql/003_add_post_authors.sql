-- Each post's author (0 for posts written before accounts: no one may edit them).
ALTER TABLE posts ADD COLUMN author_id bigint NOT NULL DEFAULT 0;
ALTER TABLE posts ADD COLUMN author_name text NOT NULL DEFAULT '';
