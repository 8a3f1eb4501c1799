CREATE TABLE never_reached (x);
