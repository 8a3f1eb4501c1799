-- wrk script: HTTP/1.1 pipelining, 16 requests per write. wrk counts every response
-- in "Requests/sec"; its latency is per batch (write to the 16th response).
local depth = tonumber(os.getenv("PIPELINE_DEPTH") or "16")
local batch

function init(args)
   local one = wrk.format("GET", "/plaintext")
   batch = string.rep(one, depth)
end

function request()
   return batch
end
