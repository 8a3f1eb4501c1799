-- wrk script for bench/soak.sh against examples/generic: a mix of the session study's
-- read (a visitor with a cookie) and write (a new visitor) page loads, static files
-- whole and by range, and small multipart uploads. Each wrk thread keeps the session
-- cookie it was given; every 8th page load goes without it (a new session).
local boundary = "kilnsoakboundary"
local upload_body = "--" .. boundary .. "\r\n" ..
   "Content-Disposition: form-data; name=\"file\"; filename=\"soak.txt\"\r\n" ..
   "Content-Type: text/plain\r\n\r\n" .. string.rep("kiln soak upload ", 128) .. "\r\n" ..
   "--" .. boundary .. "--\r\n"
local cookie = nil
local n = 0

function request()
   n = n + 1
   local k = n % 8
   local h = {}
   if cookie and n % 64 ~= 0 then h["Cookie"] = cookie end
   if k == 0 or k == 1 or k == 2 then
      return wrk.format("GET", "/", h)
   elseif k == 3 then
      return wrk.format("GET", "/bootstrap.css", h)
   elseif k == 4 then
      h["Range"] = "bytes=" .. (n % 1000) .. "-" .. (n % 1000 + 4095)
      return wrk.format("GET", "/servers.jpg", h)
   elseif k == 5 then
      return wrk.format("GET", "/servers.jpg", h)
   elseif k == 6 then
      h["Content-Type"] = "multipart/form-data; boundary=" .. boundary
      return wrk.format("POST", "/upload", h, upload_body)
   else
      h["Range"] = "bytes=-512"
      return wrk.format("GET", "/bootstrap.css", h)
   end
end

function response(status, headers, body)
   local c = headers["Set-Cookie"] or headers["set-cookie"]
   if c then cookie = c:match("^([^;]+)") end
end
