CREATE TABLE tags (name TEXT PRIMARY KEY);

INSERT INTO tags (name) VALUES ('c++');
INSERT INTO post_tags (post_id, tag) VALUES (1, 'c++');
