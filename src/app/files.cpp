// App::files(): the static file handler. It decides the answer from the request
// and the file (validators, conditionals, range, coding); static_path.hpp maps the
// request path to a file name, net/file_root.hpp does the file-system calls,
// file_cache.hpp keeps small files, file_http.hpp holds the header rules. The
// handler is shared by every event-loop thread: FileServer's fields are immutable
// after construction except the cache, which locks itself.
#include <kiln/app.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "app/app_impl.hpp"
#include "app/file_cache.hpp"
#include "app/file_http.hpp"
#include "net/file_io.hpp"
#include "net/file_root.hpp"
#include "app/mime.hpp"
#include "app/static_path.hpp"
#include "http/http_date.hpp"
#include "http/parser.hpp"

namespace kiln {
namespace {

using net::UniqueFd;

// One file as it will be served: its bytes from memory, or an open descriptor.
struct Rep {
    int error = 0;  // errno when the file could not be had
    bool is_dir = false;
    app::FileStamp stamp;
    std::shared_ptr<const app::CachedFile> cached;
    UniqueFd fd;
    bool ok() const { return error == 0 && !is_dir; }
};

time_t seconds_of(int64_t ns) {
    int64_t s = ns / 1000000000;
    return static_cast<time_t>(ns < 0 && s * 1000000000 != ns ? s - 1 : s);
}

// Returns false, so that "return not_found(res);" ends a step that found nothing.
bool not_found(Response& res) {
    res.status(404).text("Not Found\n");
    return false;
}

// Missing, not ours to show, or pointing outside: 404. Denied: 403. Busy: 503. Anything
// else is a server fault: thrown, so App::handle logs it and answers a bare 500.
void answer_error(Response& res, int err, const std::string& rel) {
    switch (err) {
        case ENOENT:
        case ENOTDIR:
        case ELOOP:         // a symlink loop, or a magic link refused
        case EXDEV:         // resolution left the root
        case ENAMETOOLONG:
        case ENXIO:         // a socket or a device without a driver
        case ENODEV:
            res.status(404).text("Not Found\n");
            return;
        case EACCES:
        case EPERM:
            res.status(403).text("Forbidden\n");
            return;
        case EAGAIN:  // held by another (a file lease being broken): not this loop's to wait for
            res.status(503).header("Retry-After", "1").text("Service Unavailable\n");
            return;
        default:
            throw std::system_error(err, std::generic_category(), "static file '" + rel + "'");
    }
}

class FileServer {
public:
    FileServer(std::string prefix, const std::string& dir, FileOptions opts)
        : prefix_(std::move(prefix)),
          opts_(std::move(opts)),
          root_(dir),
          cache_(opts_.memory_max_file, opts_.memory_max_total) {}

    void serve(Request& req, Response& res);

private:
    // What will be sent: the file (or its precompressed sibling) and how it is coded.
    struct Selected {
        std::string rel;  // path of the identity file below the root
        Rep rep;
        std::string_view coding;  // "" (identity), "br", "zstd" or "gzip"
        bool vary = false;        // a sibling exists, so the answer depends on Accept-Encoding
    };
    bool select(Request& req, Response& res, Selected& out);
    void choose_coding(const Request& req, Selected& s);
    void answer(const Request& req, Response& res, Selected& s) const;
    Rep load(const std::string& rel);
    std::string_view content_type(std::string_view name) const;
    void redirect_to_directory(Request& req, Response& res) const;

    const std::string prefix_;  // "" for "/", else "/static" (no trailing '/')
    const FileOptions opts_;
    const net::FileRoot root_;
    app::FileCache cache_;
};

// The file `rel` from the cache if its stamp still matches the disk (one stat), else
// opened beneath the root; small files are read whole and cached.
Rep FileServer::load(const std::string& rel) {
    Rep rep;
    struct stat st;
    if (auto hit = cache_.find(rel)) {
        if (root_.stat(rel, st) == 0 && S_ISREG(st.st_mode) && app::stamp_of(st) == hit->stamp) {
            rep.stamp = hit->stamp;
            rep.cached = std::move(hit);
            return rep;
        }
        cache_.erase(rel, hit.get());
    }
    int fd = root_.open(rel);
    if (fd < 0) {
        rep.error = -fd;
        return rep;
    }
    UniqueFd file(fd);
    if (int e = net::stat_fd(fd, st); e < 0) {
        rep.error = -e;
        return rep;
    }
    if (S_ISDIR(st.st_mode)) {
        rep.is_dir = true;
        return rep;
    }
    if (!S_ISREG(st.st_mode)) {  // FIFO, device, socket: never served
        rep.error = ENOENT;
        return rep;
    }
    rep.stamp = app::stamp_of(st);
    if (!cache_.admits(rep.stamp.size)) {
        rep.fd = std::move(file);
        return rep;
    }
    auto entry = std::make_shared<app::CachedFile>();
    entry->stamp = rep.stamp;
    entry->body.resize(rep.stamp.size);
    long read = net::read_full(fd, 0, entry->body.data(), entry->body.size());
    if (read < 0) {
        rep.error = static_cast<int>(-read);
        return rep;
    }
    size_t got = static_cast<size_t>(read);
    if (got != entry->body.size()) {  // truncated while we read: serve what is there, cache nothing
        entry->body.resize(got);
        entry->stamp.size = got;
        rep.stamp = entry->stamp;
    } else {
        cache_.insert(rel, entry);
    }
    rep.cached = std::move(entry);
    return rep;
}

std::string_view FileServer::content_type(std::string_view name) const {
    if (!opts_.mime_types.empty()) {
        std::string_view ext = app::file_extension(name);
        for (const auto& [e, type] : opts_.mime_types)
            if (!ext.empty() && http::iequals(e, ext)) return type;
    }
    return app::mime_type(name);
}

void FileServer::redirect_to_directory(Request& req, Response& res) const {
    std::string location = app::encode_path(req.path());
    location.push_back('/');
    if (!req.query_string().empty()) location.append("?").append(req.query_string());
    res.redirect(location, 301);
}

void FileServer::serve(Request& req, Response& res) {
    Selected s;
    if (!select(req, res, s)) return;
    if (opts_.precompressed) choose_coding(req, s);
    answer(req, res, s);
}

// Maps the request path to a file and loads it. Returns false after answering
// (404, 403, 301) when there is nothing to serve.
bool FileServer::select(Request& req, Response& res, Selected& s) {
    app::StaticPath target = app::map_static_path(prefix_, req.path(), opts_.dotfiles, opts_.index);
    if (target.kind == app::StaticPath::Kind::Mount) {
        redirect_to_directory(req, res);
        return false;
    }
    if (target.kind == app::StaticPath::Kind::Refused) return not_found(res);
    s.rel = std::move(target.rel);
    s.rep = load(s.rel);
    if (s.rep.error) {
        answer_error(res, s.rep.error, s.rel);
        return false;
    }
    if (s.rep.is_dir) {
        if (target.dir_form) return not_found(res);
        redirect_to_directory(req, res);
        return false;
    }
    return true;
}

// Precompressed siblings: the most wanted acceptable one that exists replaces the
// file, unless it is older than the file (left behind by a deploy that changed the
// file only: it would serve the old content). A sibling the client refuses is still
// looked for (one stat), for Vary.
void FileServer::choose_coding(const Request& req, Selected& s) {
    app::AcceptedCodings acc = app::parse_accept_encoding(req.header("accept-encoding").value_or(""));
    struct Candidate {
        const char* suffix;
        std::string_view name;
        int q;
    } order[3] = {{".br", "br", acc.br}, {".zst", "zstd", acc.zstd}, {".gz", "gzip", acc.gzip}};
    // The client's qvalues first; among equals br, zstd, gzip (the smallest first).
    std::stable_sort(std::begin(order), std::end(order), [](const Candidate& a, const Candidate& b) { return a.q > b.q; });
    for (const Candidate& c : order) {
        std::string sibling = s.rel + c.suffix;
        if (c.q > 0) {
            Rep r = load(sibling);
            if (!r.ok()) continue;
            s.vary = true;
            if (r.stamp.mtime_ns >= s.rep.stamp.mtime_ns) {
                s.rep = std::move(r);
                s.coding = c.name;
                return;
            }
        } else if (!s.vary) {
            struct stat st;
            s.vary = root_.stat(sibling, st) == 0 && S_ISREG(st.st_mode);
        }
    }
}

// Validators, conditionals (RFC 9110 §13.2.2, in its order), range, then the body.
void FileServer::answer(const Request& req, Response& res, Selected& s) const {
    Rep& chosen = s.rep;
    const std::string_view coding = s.coding;
    const app::FileStamp& stamp = chosen.stamp;
    const uint64_t size = chosen.cached ? chosen.cached->body.size() : stamp.size;
    const time_t mtime = seconds_of(stamp.mtime_ns);
    const std::string etag = app::make_etag(size, stamp.mtime_ns, coding);
    char last_modified[32];
    size_t lm_len = http::format_imf_fixdate(mtime, last_modified);
    res.header("ETag", etag);
    res.header("Last-Modified", std::string_view(last_modified, lm_len));
    if (s.vary) res.header("Vary", "Accept-Encoding");
    // Not on a 416: an explicit lifetime would let a cache keep the error.
    auto cache_control = [&] {
        if (!opts_.cache_control.empty()) res.header("Cache-Control", opts_.cache_control);
    };

    // If-Match, else If-Unmodified-Since: not the file the client had (a download
    // resumed in parts after the file was replaced) is 412, not another file's bytes.
    std::optional<std::string_view> im = req.header("if-match");
    std::optional<std::string_view> ius = im ? std::nullopt : req.header("if-unmodified-since");
    if ((im && !app::match_hits(*im, etag)) || (ius && !app::unmodified_since(*ius, mtime))) {
        res.status(412).text("Precondition Failed\n");
        return;
    }
    // If-None-Match, else If-Modified-Since; then Range with If-Range.
    std::optional<std::string_view> inm = req.header("if-none-match");
    std::optional<std::string_view> ims = inm ? std::nullopt : req.header("if-modified-since");
    if ((inm && app::none_match_hits(*inm, etag)) || (ims && app::not_modified_since(*ims, mtime))) {
        cache_control();
        res.status(304);
        return;
    }
    app::RangeResult range;
    if (req.method() == Method::Get) {
        std::optional<std::string_view> r = req.header("range");
        std::optional<std::string_view> if_range = req.header("if-range");
        if (r && (!if_range || app::if_range_holds(*if_range, etag, mtime)))
            range = app::parse_range(*r, size);
    }
    res.header("Accept-Ranges", "bytes");
    if (range.kind == app::RangeKind::Unsatisfiable) {
        res.status(416).header("Content-Range", app::content_range(range, size));
        res.text("Range Not Satisfiable\n");
        return;
    }
    cache_control();
    uint64_t offset = 0, length = size;
    if (range.kind == app::RangeKind::Single) {
        res.status(206).header("Content-Range", app::content_range(range, size));
        offset = range.first;
        length = range.length;
    }
    if (!coding.empty()) res.header("Content-Encoding", coding);
    std::string_view type = content_type(s.rel);
    if (chosen.cached) {
        res.send(std::string_view(chosen.cached->body).substr(offset, length), type);
        return;
    }
    if (!net::make_blocking(chosen.fd.get()))
        throw std::system_error(errno, std::generic_category(), "static file '" + s.rel + "': fcntl");
    res.file(chosen.fd.release(), offset, length, type);
}

}  // namespace

App& App::files(std::string_view prefix, std::string_view dir, FileOptions opts) {
    std::string p(prefix);
    while (!p.empty() && p.back() == '/') p.pop_back();
    auto bad = [&](const char* why) {
        throw std::invalid_argument("files('" + std::string(prefix) + "'): " + why);
    };
    if (!p.empty() && p[0] != '/') bad("prefix must start with '/'");
    if (p.find_first_of(":*") != p.npos) bad("prefix cannot hold route parameters");
    const std::string& index = opts.index;
    if (index.find('/') != index.npos || index.find('\0') != index.npos || index.starts_with("."))
        bad("index must be a plain file name");
    auto server = std::make_shared<FileServer>(p, std::string(dir), std::move(opts));
    get(p + "/*path", [server](Request& req, Response& res) { server->serve(req, res); });
    impl_->route_infos.back().files_dir = std::string(dir);  // `--routes` shows what is served
    return *this;
}

}  // namespace kiln
