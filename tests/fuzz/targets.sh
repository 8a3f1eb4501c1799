# Sourced by run.sh and coverage.sh: every fuzz target, and its dictionary.
# Needs $here (this folder).
fuzz_targets=(fuzz_parser fuzz_chunked fuzz_url fuzz_multipart fuzz_form fuzz_cookie fuzz_template fuzz_escape
              fuzz_router fuzz_session_record fuzz_log_escape fuzz_static_path fuzz_config fuzz_form_values
              fuzz_pg_values fuzz_json_writer fuzz_proxy_protocol fuzz_forwarded fuzz_h2 fuzz_ws_frame fuzz_ws
              fuzz_ws_deflate)

dict_for() {  # <name>.dict when there is one, proxy.dict for the proxy headers, else http.dict
  local d="$here/${1#fuzz_}.dict"
  [[ $1 == fuzz_proxy_protocol || $1 == fuzz_forwarded ]] && d="$here/proxy.dict"
  [[ -f $d ]] && echo "$d" || echo "$here/http.dict"
}
