-- wrk script for bench/soak.sh against examples/blog: the index (two pages), a post,
-- the new-post form (a session and a CSRF token each time, as a new visitor) and the
-- stylesheet. (Error paths are chaos.py's: here every answer should be a 200.)
local paths = {"/posts", "/posts?page=2", "/posts/1", "/posts/new", "/app.css"}
local n = 0
function request()
   n = n + 1
   return wrk.format("GET", paths[n % #paths + 1])
end
