-- Numbered 10: must run after 002 (it needs the slug column), although "10_" sorts
-- before "2" as text.
INSERT INTO posts (title, slug) VALUES ('Welcome', 'welcome');
