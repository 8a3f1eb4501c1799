// Unit tests of the static file pieces: Content-Type by extension (app/mime),
// HTTP-date parsing (http/http_date_parse), the Range / conditional / Accept-Encoding
// rules (app/file_http), confinement to the root (app/file_root, with openat2 and
// with the fallback) and the in-memory cache (app/file_cache). The handler as a
// whole is tested end to end in tests/integration/test_static_files.py.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>

#include <kiln/app.hpp>

#include "app/file_cache.hpp"
#include "app/file_http.hpp"
#include "net/file_root.hpp"
#include "app/mime.hpp"
#include "http/http_date.hpp"

namespace kiln::app {
using net::FileRoot;
using net::make_blocking;
namespace {

// ---------------------------------------------------------------- mime

TEST(Mime, EveryRequiredExtension) {
    EXPECT_EQ(mime_type("index.html"), "text/html; charset=utf-8");
    EXPECT_EQ(mime_type("a.css"), "text/css; charset=utf-8");
    EXPECT_EQ(mime_type("a.js"), "text/javascript; charset=utf-8");
    EXPECT_EQ(mime_type("a.mjs"), "text/javascript; charset=utf-8");
    EXPECT_EQ(mime_type("a.json"), "application/json");
    EXPECT_EQ(mime_type("a.svg"), "image/svg+xml");
    EXPECT_EQ(mime_type("a.png"), "image/png");
    EXPECT_EQ(mime_type("a.jpg"), "image/jpeg");
    EXPECT_EQ(mime_type("a.jpeg"), "image/jpeg");
    EXPECT_EQ(mime_type("a.gif"), "image/gif");
    EXPECT_EQ(mime_type("a.webp"), "image/webp");
    EXPECT_EQ(mime_type("a.avif"), "image/avif");
    EXPECT_EQ(mime_type("a.ico"), "image/x-icon");
    EXPECT_EQ(mime_type("a.txt"), "text/plain; charset=utf-8");
    EXPECT_EQ(mime_type("a.xml"), "application/xml");
    EXPECT_EQ(mime_type("a.pdf"), "application/pdf");
    EXPECT_EQ(mime_type("a.wasm"), "application/wasm");
    EXPECT_EQ(mime_type("a.woff"), "font/woff");
    EXPECT_EQ(mime_type("a.woff2"), "font/woff2");
    EXPECT_EQ(mime_type("a.mp4"), "video/mp4");
    EXPECT_EQ(mime_type("a.webm"), "video/webm");
    EXPECT_EQ(mime_type("a.mp3"), "audio/mpeg");
    EXPECT_EQ(mime_type("app.js.map"), "application/json");
}

TEST(Mime, ExtensionIsCaseInsensitiveAndTakenFromTheLastSegment) {
    EXPECT_EQ(mime_type("PHOTO.JPG"), "image/jpeg");
    EXPECT_EQ(mime_type("Index.HtMl"), "text/html; charset=utf-8");
    EXPECT_EQ(mime_type("assets/v1.2/app.min.css"), "text/css; charset=utf-8");
    EXPECT_EQ(mime_type("v1.2/README"), kDefaultMimeType);  // the dot is in a directory name
    EXPECT_EQ(file_extension("a/b.tar.gz"), "gz");
}

TEST(Mime, UnknownOrMissingExtensionIsOctetStream) {
    EXPECT_EQ(mime_type("Makefile"), kDefaultMimeType);
    EXPECT_EQ(mime_type("a.unknownext"), kDefaultMimeType);
    EXPECT_EQ(mime_type("a."), kDefaultMimeType);
    EXPECT_EQ(mime_type(""), kDefaultMimeType);
    EXPECT_EQ(mime_type(".html"), kDefaultMimeType);  // a dotfile named ".html", not an HTML file
    EXPECT_EQ(mime_type("a.averyveryverylongextension"), kDefaultMimeType);
}

// ---------------------------------------------------------------- HTTP-date

TEST(HttpDate, TheThreeFormsOfTheRfcExample) {
    EXPECT_EQ(http::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    EXPECT_EQ(http::parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
    EXPECT_EQ(http::parse_http_date("Sun Nov  6 08:49:37 1994"), 784111777);
    EXPECT_EQ(http::parse_http_date("  Sun, 06 Nov 1994 08:49:37 GMT\t"), 784111777);
}

TEST(HttpDate, RoundTripsWithTheFormatter) {
    for (time_t t : {time_t{0}, time_t{951782400} /* 2000-02-29 */, time_t{1709208000}, time_t{4102444799}}) {
        char buf[32];
        size_t n = http::format_imf_fixdate(t, buf);
        EXPECT_EQ(http::parse_http_date(std::string_view(buf, n)), t) << std::string_view(buf, n);
    }
}

TEST(HttpDate, TwoDigitYearsOfRfc850) {
    EXPECT_EQ(http::parse_http_date("Thursday, 01-Jan-70 00:00:00 GMT"), 0);
    EXPECT_EQ(http::parse_http_date("Tuesday, 01-Jan-30 00:00:00 GMT"), 1893456000);  // 2030
}

// Error paths
TEST(HttpDate, MalformedDatesAreRejected) {
    for (const char* bad : {"", "yesterday", "1994-11-06T08:49:37Z",
                            "Sun, 06 Nov 1994 08:49:37 UTC",     // not GMT
                            "Sun, 6 Nov 1994 08:49:37 GMT",      // one-digit day
                            "Sun, 06 Nov 1994 08:49:37 GMT extra",
                            "Sun, 06 Foo 1994 08:49:37 GMT",     // no such month
                            "Sun, 31 Apr 1994 08:49:37 GMT",     // April has 30 days
                            "Sun, 29 Feb 2023 08:49:37 GMT",     // not a leap year
                            "Sun, 00 Nov 1994 08:49:37 GMT",
                            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
                            "Sun, 06 Nov 1994 08:49:60 GMT",     // leap seconds are not HTTP-dates
                            "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun,06 Nov 1994 08:49:37 GMT",
                            "Sun, 06 Nov 94 08:49:37 GMT",       // two-digit year in IMF-fixdate
                            "Sun Nov 6 08:49:37 1994",           // asctime pads the day with a space
                            "Sunday, 06-Nov-1994 08:49:37 GMT"}) // four-digit year in RFC 850
        EXPECT_FALSE(http::parse_http_date(bad).has_value()) << bad;
    EXPECT_TRUE(http::parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT").has_value());
}

// ---------------------------------------------------------------- Range

RangeResult single(uint64_t first, uint64_t length) { return {RangeKind::Single, first, length}; }

void expect_range(std::string_view header, uint64_t size, RangeResult want) {
    RangeResult got = parse_range(header, size);
    EXPECT_EQ(static_cast<int>(got.kind), static_cast<int>(want.kind)) << header << " size " << size;
    if (want.kind == RangeKind::Single && got.kind == RangeKind::Single) {
        EXPECT_EQ(got.first, want.first) << header;
        EXPECT_EQ(got.length, want.length) << header;
    }
}

TEST(Range, TheThreeForms) {
    expect_range("bytes=0-99", 1000, single(0, 100));
    expect_range("bytes=500-", 1000, single(500, 500));
    expect_range("bytes=-300", 1000, single(700, 300));
    expect_range("bytes=999-999", 1000, single(999, 1));
}

TEST(Range, PastTheEndIsClampedAndLongSuffixIsTheWholeFile) {
    expect_range("bytes=900-5000", 1000, single(900, 100));
    expect_range("bytes=-5000", 1000, single(0, 1000));
    expect_range("bytes=0-18446744073709551615", 10, single(0, 10));
    expect_range("bytes=0-99999999999999999999999", 10, single(0, 10));  // saturates, still a range
}

TEST(Range, UnitIsCaseInsensitiveAndWhitespaceAroundTheSpecIsAllowed) {
    expect_range("Bytes=0-1", 10, single(0, 2));
    expect_range("  bytes= 2-3 ", 10, single(2, 2));
    expect_range("bytes=4-5, ", 10, single(4, 2));  // empty list elements do not count
}

TEST(Range, Unsatisfiable) {
    expect_range("bytes=1000-", 1000, {RangeKind::Unsatisfiable});
    expect_range("bytes=1000-2000", 1000, {RangeKind::Unsatisfiable});
    expect_range("bytes=-0", 1000, {RangeKind::Unsatisfiable});
    expect_range("bytes=99999999999999999999999-", 1000, {RangeKind::Unsatisfiable});
}

TEST(Range, SeveralRangesGiveTheWholeFile) {
    expect_range("bytes=0-1,5-6", 10, {RangeKind::Whole});
    expect_range("bytes=0-1, -2", 10, {RangeKind::Whole});
}

// Error paths: anything malformed is ignored (RFC 9110 §14.2 lets a server ignore Range).
TEST(Range, MalformedIsIgnored) {
    for (const char* bad : {"", "bytes", "bytes=", "bytes=-", "bytes=abc", "bytes=1-a", "bytes=a-1", "bytes=5-1",
                            "items=0-1", "bytes 0-1", "bytes=+1-2", "bytes=1--2", "bytes=0x1-2", "bytes=1 -2",
                            "bytes=--1"})
        expect_range(bad, 1000, {RangeKind::Whole});
    expect_range("bytes=0-0", 0, {RangeKind::Whole});  // an empty file has no byte to address
    expect_range("bytes=-1", 0, {RangeKind::Whole});
}

TEST(Range, ContentRangeValues) {
    EXPECT_EQ(content_range(single(0, 100), 1000), "bytes 0-99/1000");
    EXPECT_EQ(content_range(single(999, 1), 1000), "bytes 999-999/1000");
    EXPECT_EQ(content_range({RangeKind::Unsatisfiable}, 1000), "bytes */1000");
}

// ---------------------------------------------------------------- validators

TEST(ETag, StrongQuotedFromSizeAndMtimeWithCodingSuffix) {
    EXPECT_EQ(make_etag(0x1f4, 0x17a3c9e8b2d1f000, ""), "\"1f4-17a3c9e8b2d1f000\"");
    EXPECT_EQ(make_etag(10, 255, "br"), "\"a-ff-br\"");
    EXPECT_NE(make_etag(10, 255, ""), make_etag(11, 255, ""));
    EXPECT_NE(make_etag(10, 255, ""), make_etag(10, 256, ""));
}

TEST(IfNoneMatch, WeakComparisonOverAList) {
    const std::string tag = "\"a-ff\"";
    EXPECT_TRUE(none_match_hits("\"a-ff\"", tag));
    EXPECT_TRUE(none_match_hits("W/\"a-ff\"", tag));
    EXPECT_TRUE(none_match_hits("\"x\", W/\"y\",\"a-ff\"", tag));
    EXPECT_TRUE(none_match_hits("  \"x\" ,  \"a-ff\"  ", tag));
    EXPECT_TRUE(none_match_hits("*", tag));
    EXPECT_FALSE(none_match_hits("\"x\", \"y\"", tag));
    EXPECT_FALSE(none_match_hits("\"a-f\"", tag));
    EXPECT_FALSE(none_match_hits("\"a-ff-br\"", tag));  // the compressed sibling is another representation
}

// Error paths
TEST(IfNoneMatch, MalformedListsMatchNothingPastTheFault) {
    const std::string tag = "\"a-ff\"";
    EXPECT_FALSE(none_match_hits("", tag));
    EXPECT_FALSE(none_match_hits("a-ff", tag));        // unquoted
    EXPECT_FALSE(none_match_hits("\"a-ff", tag));      // unterminated
    EXPECT_FALSE(none_match_hits("junk, \"a-ff\"", tag));
    EXPECT_FALSE(none_match_hits("w/\"a-ff\"", tag));  // "W/" is case-sensitive
}

TEST(IfRange, StrongETagOrExactDate) {
    const std::string tag = "\"a-ff\"";
    const time_t lm = 784111777;
    EXPECT_TRUE(if_range_holds("\"a-ff\"", tag, lm));
    EXPECT_FALSE(if_range_holds("\"a-fe\"", tag, lm));
    EXPECT_FALSE(if_range_holds("W/\"a-ff\"", tag, lm));  // weak validators never allow a range
    EXPECT_TRUE(if_range_holds("Sun, 06 Nov 1994 08:49:37 GMT", tag, lm));
    EXPECT_FALSE(if_range_holds("Sun, 06 Nov 1994 08:49:38 GMT", tag, lm));  // later is not "the same"
    EXPECT_FALSE(if_range_holds("Sun, 06 Nov 1994 08:49:36 GMT", tag, lm));
    EXPECT_FALSE(if_range_holds("not a date", tag, lm));
    EXPECT_FALSE(if_range_holds("", tag, lm));
}

TEST(IfModifiedSince, NotModifiedWhenTheFileIsNotNewer) {
    const time_t lm = 784111777;
    EXPECT_TRUE(not_modified_since("Sun, 06 Nov 1994 08:49:37 GMT", lm));
    EXPECT_TRUE(not_modified_since("Mon, 07 Nov 1994 08:49:37 GMT", lm));
    EXPECT_FALSE(not_modified_since("Sun, 06 Nov 1994 08:49:36 GMT", lm));
    EXPECT_FALSE(not_modified_since("garbage", lm));  // invalid: ignored, so the file is sent
    EXPECT_FALSE(not_modified_since("", lm));
}

// ---------------------------------------------------------------- Accept-Encoding

void expect_codings(std::string_view header, int br, int gzip) {
    AcceptedCodings a = parse_accept_encoding(header);
    EXPECT_EQ(a.br, br) << header;
    EXPECT_EQ(a.gzip, gzip) << header;
}

TEST(AcceptEncoding, NamesAndQValues) {
    expect_codings("gzip, deflate, br", 1000, 1000);
    expect_codings("br;q=0.8, gzip;q=0.9", 800, 900);
    expect_codings("gzip", 0, 1000);
    expect_codings("x-gzip", 0, 1000);
    expect_codings("BR, GZip", 1000, 1000);
    expect_codings("br ; q = 0.5", 500, 0);
    expect_codings("br;Q=1.000", 1000, 0);
    expect_codings("br;level=5;q=0.25", 250, 0);
}

TEST(AcceptEncoding, ZeroRefusesAndStarCoversTheRest) {
    expect_codings("br;q=0, gzip", 0, 1000);
    expect_codings("*", 1000, 1000);
    expect_codings("*;q=0.3, br;q=0", 0, 300);
    expect_codings("gzip;q=0, *", 1000, 0);
    expect_codings("*;q=0", 0, 0);
    expect_codings("identity", 0, 0);
}

// Error paths
TEST(AcceptEncoding, MissingOrMalformedMeansNotAcceptable) {
    expect_codings("", 0, 0);
    expect_codings(",,,", 0, 0);
    expect_codings("br;q=2", 0, 0);
    expect_codings("br;q=1.5", 0, 0);
    expect_codings("br;q=0.12345", 0, 0);
    expect_codings("br;q=abc, gzip", 0, 1000);
    expect_codings("br;q=", 0, 0);
}

// ---------------------------------------------------------------- FileRoot

// A temporary tree: base/secret.txt outside, base/root/ served.
class TempTree : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/kiln_files_test.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        base_ = tmpl;
        root_ = base_ / "root";
        std::filesystem::create_directories(root_ / "sub");
        write(base_ / "secret.txt", "secret");
        write(root_ / "hello.txt", "hello");
        write(root_ / "sub" / "inner.txt", "inner");
        std::filesystem::create_symlink("hello.txt", root_ / "link_in");
        std::filesystem::create_symlink("../hello.txt", root_ / "sub" / "link_up_inside");
        std::filesystem::create_symlink("../secret.txt", root_ / "link_out");
        std::filesystem::create_symlink("..", root_ / "dir_out");
        std::filesystem::create_symlink(base_ / "secret.txt", root_ / "abs_out");
        std::filesystem::create_symlink(root_ / "hello.txt", root_ / "abs_in");
        std::filesystem::create_symlink("/proc/self/root/etc/hostname", root_ / "magic");
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(base_, ec);
    }
    static void write(const std::filesystem::path& p, std::string_view data) {
        std::ofstream(p, std::ios::binary) << data;
    }
    static std::string read_fd(int fd) {
        std::string out(64, '\0');
        ssize_t n = ::pread(fd, out.data(), out.size(), 0);
        ::close(fd);
        out.resize(n > 0 ? static_cast<size_t>(n) : 0);
        return out;
    }
    std::filesystem::path base_, root_;
};

class FileRootTest : public TempTree, public ::testing::WithParamInterface<FileRoot::Mode> {};

TEST_P(FileRootTest, OpensFilesAndSymlinksInside) {
    FileRoot root(root_.string(), GetParam());
    EXPECT_EQ(read_fd(root.open("hello.txt")), "hello");
    EXPECT_EQ(read_fd(root.open("sub/inner.txt")), "inner");
    EXPECT_EQ(read_fd(root.open("link_in")), "hello");
    EXPECT_EQ(read_fd(root.open("sub/link_up_inside")), "hello");  // ".." inside a symlink that stays inside
    struct stat st;
    EXPECT_EQ(root.stat("hello.txt", st), 0);
    EXPECT_EQ(st.st_size, 5);
}

// Error paths
TEST_P(FileRootTest, NeverOpensOutsideTheRoot) {
    FileRoot root(root_.string(), GetParam());
    for (const char* rel : {"link_out", "dir_out/secret.txt", "abs_out", "../secret.txt", "sub/../../secret.txt",
                            "/etc/hostname", "magic"}) {
        int fd = root.open(rel);
        if (fd >= 0) ADD_FAILURE() << rel << " opened: " << read_fd(fd);
        else EXPECT_TRUE(fd == -EXDEV || fd == -ELOOP || fd == -ENOENT) << rel << ": " << -fd;
    }
}

TEST_P(FileRootTest, MissingFilesAndNonDirectoriesInThePath) {
    FileRoot root(root_.string(), GetParam());
    EXPECT_EQ(root.open("nope.txt"), -ENOENT);
    EXPECT_EQ(root.open("hello.txt/x"), -ENOTDIR);
    EXPECT_EQ(root.open(""), -ENOENT);
    struct stat st;
    EXPECT_EQ(root.stat("nope.txt", st), -ENOENT);
}

INSTANTIATE_TEST_SUITE_P(Modes, FileRootTest, ::testing::Values(FileRoot::Mode::Auto, FileRoot::Mode::Fallback),
                         [](const auto& p) { return p.param == FileRoot::Mode::Auto ? "Auto" : "Fallback"; });

TEST_F(TempTree, AutoModeUsesOpenat2OnThisKernel) {
    // The machines kiln is built on run Linux >= 5.6; if this fails, the fallback is
    // what serves files, which is safe but worth knowing.
    EXPECT_TRUE(FileRoot(root_.string()).uses_openat2());
    EXPECT_FALSE(FileRoot(root_.string(), FileRoot::Mode::Fallback).uses_openat2());
}

TEST_F(TempTree, AbsoluteSymlinkInsideIsRefusedByOpenat2) {
    // RESOLVE_BENEATH refuses absolute symlinks even when they point inside (documented).
    FileRoot root(root_.string());
    if (root.uses_openat2()) {
        EXPECT_EQ(root.open("abs_in"), -EXDEV);
    }
}

// Error paths
TEST_F(TempTree, ConstructorThrowsForAMissingDirectoryOrAFile) {
    EXPECT_THROW(FileRoot((base_ / "absent").string()), std::system_error);
    EXPECT_THROW(FileRoot((base_ / "secret.txt").string()), std::system_error);
}

TEST_F(TempTree, AppFilesRefusesBadArguments) {
    App app;
    EXPECT_THROW(app.files("static", root_.string()), std::invalid_argument);
    EXPECT_THROW(app.files("/a/:id", root_.string()), std::invalid_argument);
    EXPECT_THROW(app.files("/s", root_.string(), FileOptions{.index = "../x.html"}), std::invalid_argument);
    EXPECT_THROW(app.files("/s", root_.string(), FileOptions{.index = ".hidden"}), std::invalid_argument);
    EXPECT_THROW(app.files("/s", (base_ / "absent").string()), std::system_error);
    EXPECT_NO_THROW(app.files("/ok/", root_.string()));
    EXPECT_THROW(app.files("/ok", root_.string()), std::invalid_argument);  // registered twice
}

// ---------------------------------------------------------------- FileCache

std::shared_ptr<const CachedFile> file_of(size_t size, int64_t mtime = 1) {
    auto f = std::make_shared<CachedFile>();
    f->body.assign(size, 'x');
    f->stamp.size = size;
    f->stamp.mtime_ns = mtime;
    return f;
}

TEST(FileCache, FindsWhatWasInserted) {
    FileCache c(100, 1000);
    EXPECT_EQ(c.find("a"), nullptr);
    c.insert("a", file_of(10));
    ASSERT_NE(c.find("a"), nullptr);
    EXPECT_EQ(c.find("a")->body.size(), 10u);
    EXPECT_EQ(c.bytes(), 10u);
    c.insert("a", file_of(20, 2));  // replaced, not added
    EXPECT_EQ(c.find("a")->stamp.mtime_ns, 2);
    EXPECT_EQ(c.bytes(), 20u);
    EXPECT_EQ(c.entries(), 1u);
}

TEST(FileCache, EvictsLeastRecentlyUsedToStayWithinTheBudget) {
    FileCache c(100, 250);
    c.insert("a", file_of(100));
    c.insert("b", file_of(100));
    ASSERT_NE(c.find("a"), nullptr);  // a is now more recent than b
    c.insert("c", file_of(100));
    EXPECT_NE(c.find("a"), nullptr);
    EXPECT_EQ(c.find("b"), nullptr);
    EXPECT_NE(c.find("c"), nullptr);
    EXPECT_LE(c.bytes(), 250u);
}

TEST(FileCache, AReaderKeepsItsBytesAfterEviction) {
    FileCache c(100, 100);
    c.insert("a", file_of(100));
    auto held = c.find("a");
    c.insert("b", file_of(100));
    EXPECT_EQ(c.find("a"), nullptr);
    EXPECT_EQ(held->body, std::string(100, 'x'));
}

TEST(FileCache, EraseRemovesOnlyTheStaleEntry) {
    FileCache c(100, 1000);
    c.insert("a", file_of(10));
    auto old = c.find("a");
    c.insert("a", file_of(11));  // another thread refreshed it meanwhile
    c.erase("a", old.get());
    EXPECT_NE(c.find("a"), nullptr);
    c.erase("a", c.find("a").get());
    EXPECT_EQ(c.find("a"), nullptr);
    EXPECT_EQ(c.bytes(), 0u);
}

// Error paths
TEST(FileCache, RefusesWhatDoesNotFit) {
    FileCache c(100, 150);
    EXPECT_FALSE(c.admits(101));
    c.insert("big", file_of(101));
    EXPECT_EQ(c.find("big"), nullptr);
    FileCache off(0, 0);  // memory_max_file = 0: no caching at all
    EXPECT_FALSE(off.admits(0));
    FileCache tiny_total(100, 50);
    EXPECT_FALSE(tiny_total.admits(60));
    c.insert("null", nullptr);
    EXPECT_EQ(c.entries(), 0u);
}

TEST(FileCache, StampChangesWithEveryField) {
    struct stat st {};
    st.st_size = 5;
    st.st_mtim.tv_sec = 100;
    FileStamp a = stamp_of(st);
    st.st_mtim.tv_nsec = 1;
    EXPECT_NE(stamp_of(st), a);
    st = {};
    st.st_size = 5;
    st.st_mtim.tv_sec = 100;
    st.st_ino = 9;
    EXPECT_NE(stamp_of(st), a);
    st.st_ino = 0;
    st.st_ctim.tv_sec = 1;  // chmod moves ctime only
    EXPECT_NE(stamp_of(st), a);
}

}  // namespace
}  // namespace kiln::app
