// Unit tests of kiln bench's command line and URL parsing
// (tools/kiln/bench/options.cpp): the study's command lines parse as the study
// meant them; then the error paths, each naming the option at fault.
#include "bench/options.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::bench {
namespace {

struct Result {
    ParseOutcome outcome;
    BenchOptions options;
};

Result parse(std::vector<std::string_view> args) {
    Result r;
    r.outcome = parse_bench_options(args, &r.options);
    return r;
}

std::string error_of(std::vector<std::string_view> args) {
    Result r = parse(std::move(args));
    EXPECT_FALSE(r.outcome.ok);
    return r.outcome.error;
}

// ---------------------------------------------------------------- valid command lines

TEST(BenchOptions, StudyReadCommandLine) {
    // perf -f -g -c 2 -b 10 -r 10000 10.10.94.2:8080
    Result r = parse({"-f", "-g", "-c", "2", "-b", "10", "-r", "10000", "10.10.94.2:8080"});
    ASSERT_TRUE(r.outcome.ok) << r.outcome.error;
    EXPECT_TRUE(r.options.fixed_assets);
    EXPECT_TRUE(r.options.get_assets);
    EXPECT_EQ(r.options.mode, ConnMode::RandomDrop);
    EXPECT_EQ(r.options.batches, 10);
    EXPECT_EQ(r.options.requests, 10000u);
    EXPECT_FALSE(r.options.upload);
    EXPECT_EQ(r.options.target.port, 8080);
    EXPECT_EQ(r.options.target.authority, "10.10.94.2:8080");
    EXPECT_EQ(r.options.target.path, "/");
    in_addr a{};
    a.s_addr = r.options.target.ipv4;
    EXPECT_STREQ(inet_ntoa(a), "10.10.94.2");
}

TEST(BenchOptions, StudyWriteCommandLineWithCombinedFlagsAndAttachedValues) {
    Result r = parse({"-gu", "-c2", "-b10", "-r", "10000", "http://127.0.0.1:9000/app?x=1"});
    ASSERT_TRUE(r.outcome.ok) << r.outcome.error;
    EXPECT_TRUE(r.options.get_assets);
    EXPECT_FALSE(r.options.fixed_assets);
    EXPECT_TRUE(r.options.upload);
    EXPECT_EQ(r.options.mode, ConnMode::RandomDrop);
    EXPECT_EQ(r.options.batches, 10);
    EXPECT_EQ(r.options.target.path, "/app?x=1");
}

TEST(BenchOptions, Defaults) {
    Result r = parse({"http://localhost/"});
    ASSERT_TRUE(r.outcome.ok);
    EXPECT_EQ(r.options.batches, 1);
    EXPECT_EQ(r.options.requests, 1u);
    EXPECT_EQ(r.options.mode, ConnMode::KeepAlive);
    EXPECT_EQ(r.options.target.port, 80);
    EXPECT_EQ(r.options.target.ipv4, htonl(INADDR_LOOPBACK));
    EXPECT_EQ(r.options.timeout_ms, 5000);
    EXPECT_FALSE(r.options.json);
    EXPECT_FALSE(r.options.verbose);
}

TEST(BenchOptions, DurationAloneLiftsTheRequestLimit) {
    Result d = parse({"-d", "2.5", "http://127.0.0.1:1/"});
    ASSERT_TRUE(d.outcome.ok);
    EXPECT_DOUBLE_EQ(d.options.duration_s, 2.5);
    EXPECT_GT(d.options.requests, 1000000000u);
    Result both = parse({"-d", "3", "-r", "50", "http://127.0.0.1:1/"});
    ASSERT_TRUE(both.outcome.ok);
    EXPECT_EQ(both.options.requests, 50u);
}

TEST(BenchOptions, LongOptionsAndOptionsAfterTheUrl) {
    Result r = parse({"http://127.0.0.1:8080/plaintext", "--json", "--timeout=250", "-t", "3", "-v", "--seed", "7"});
    ASSERT_TRUE(r.outcome.ok) << r.outcome.error;
    EXPECT_TRUE(r.options.json);
    EXPECT_TRUE(r.options.verbose);
    EXPECT_EQ(r.options.timeout_ms, 250);
    EXPECT_EQ(r.options.threads, 3);
    EXPECT_EQ(r.options.seed, 7u);
}

TEST(BenchOptions, HelpNeedsNoUrl) {
    Result r = parse({"--help"});
    EXPECT_TRUE(r.outcome.ok);
    EXPECT_TRUE(r.options.help);
    EXPECT_NE(bench_usage().find("-c 0|1|2"), std::string_view::npos);
}

TEST(BenchOptions, DefaultThreadsNeverExceedBatches) {
    EXPECT_EQ(default_threads(1), 1);
    EXPECT_GE(default_threads(1000), 1);
}

// ---------------------------------------------------------------- error paths

TEST(BenchOptionsErrors, EachBadValueNamesItsOption) {
    EXPECT_NE(error_of({"-b", "0", "127.0.0.1"}).find("-b:"), std::string::npos);
    EXPECT_NE(error_of({"-b", "x", "127.0.0.1"}).find("'x'"), std::string::npos);
    EXPECT_NE(error_of({"-r", "-5", "127.0.0.1"}).find("-r:"), std::string::npos);
    EXPECT_NE(error_of({"-c", "3", "127.0.0.1"}).find("-c:"), std::string::npos);
    EXPECT_NE(error_of({"-d", "0", "127.0.0.1"}).find("-d:"), std::string::npos);
    EXPECT_NE(error_of({"-d", "nan", "127.0.0.1"}).find("-d:"), std::string::npos);
    EXPECT_NE(error_of({"-t", "0", "127.0.0.1"}).find("-t:"), std::string::npos);
    EXPECT_NE(error_of({"--timeout", "0", "127.0.0.1"}).find("--timeout:"), std::string::npos);
    EXPECT_NE(error_of({"--timeout=abc", "127.0.0.1"}).find("--timeout:"), std::string::npos);
    EXPECT_NE(error_of({"-b", "10x", "127.0.0.1"}).find("-b:"), std::string::npos);
}

TEST(BenchOptionsErrors, MissingValues) {
    EXPECT_EQ(error_of({"127.0.0.1", "-b"}), "-b: missing value");
    EXPECT_EQ(error_of({"127.0.0.1", "--timeout"}), "--timeout: missing value (milliseconds)");
}

TEST(BenchOptionsErrors, UnknownOptions) {
    EXPECT_EQ(error_of({"-x", "127.0.0.1"}), "unknown option '-x'");
    EXPECT_EQ(error_of({"-gz", "127.0.0.1"}), "unknown option '-z'");
    EXPECT_EQ(error_of({"--jsonx", "127.0.0.1"}), "unknown option '--jsonx'");
    EXPECT_EQ(error_of({"--json=1", "127.0.0.1"}), "unknown option '--json'");
}

TEST(BenchOptionsErrors, UrlProblems) {
    EXPECT_NE(error_of({"-b", "2"}).find("missing URL"), std::string::npos);
    EXPECT_NE(error_of({"https://127.0.0.1/"}).find("only http://"), std::string::npos);
    EXPECT_NE(error_of({"http://example.com/"}).find("IPv4 address or localhost"), std::string::npos);
    EXPECT_NE(error_of({"http://[::1]:80/"}).find("IPv4"), std::string::npos);
    EXPECT_NE(error_of({"http://127.0.0.1:0/"}).find("bad port"), std::string::npos);
    EXPECT_NE(error_of({"http://127.0.0.1:70000/"}).find("bad port"), std::string::npos);
    EXPECT_NE(error_of({"http://127.0.0.1:/"}).find("bad port"), std::string::npos);
    EXPECT_NE(error_of({"http:///path"}).find("no host"), std::string::npos);
    EXPECT_NE(error_of({"http://u@127.0.0.1/"}).find("user info"), std::string::npos);
    EXPECT_NE(error_of({"127.0.0.1", "127.0.0.2"}).find("more than one URL"), std::string::npos);
    EXPECT_TRUE(error_of({"URL:http://1.2.3.4/"}).starts_with("URL:"));
}

TEST(BenchOptionsErrors, AllErrorsStartWithWhatIsWrong) {
    // Every message is one line: the CLI prints it after "kiln bench: ".
    for (auto args : std::vector<std::vector<std::string_view>>{{"-b"}, {"-q"}, {}, {"ftp://x/"}}) {
        std::string e = error_of(args);
        EXPECT_FALSE(e.empty());
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
}

}  // namespace
}  // namespace kiln::bench
