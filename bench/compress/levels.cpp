// The CPU cost of kiln's content codings (src/http/compress) per KiB of input, and
// the size they reach, at every level of each: gzip 1-9, br 0-11, zstd 1-19, on three
// bodies a kiln app sends (bootstrap.css from examples/generic, an HTML list page and a
// JSON array, each ~100-200 KiB). Thread CPU time over at least 0.3 s per cell.
//   build/bench/kiln_compress_levels [OUT.md]      (bench/compression.sh runs it)
#include <time.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "http/compress.hpp"

using kiln::http::Coding;

namespace {

double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Cell {
    double us_per_kib;
    double ratio;  // output / input
};

Cell measure(Coding c, int level, const std::string& in) {
    kiln::http::CodingLevels levels;
    levels.gzip = levels.brotli = levels.zstd = level;
    std::string out;
    int runs = 0;
    double start = thread_cpu_s(), now = start;
    while (now - start < 0.3 || runs < 3) {
        out.clear();
        if (!kiln::http::compress(c, in, levels, &out)) {
            std::fprintf(stderr, "compress failed\n");
            std::exit(1);
        }
        ++runs;
        now = thread_cpu_s();
    }
    return {(now - start) * 1e6 / runs / (static_cast<double>(in.size()) / 1024.0),
            static_cast<double>(out.size()) / static_cast<double>(in.size())};
}

}  // namespace

int main(int argc, char** argv) {
    std::string root = KILN_SOURCE_DIR;
    std::vector<std::pair<std::string, std::string>> bodies;
    bodies.emplace_back("bootstrap.css", read_file(root + "/examples/generic/public/bootstrap.css"));
    std::string html = "<!doctype html><html><head><title>Posts</title></head><body><ul>\n";
    for (int i = 0; i < 1500; ++i)
        html += "<li class=\"post\"><a href=\"/posts/" + std::to_string(i) + "\">Post number " + std::to_string(i) +
                "</a> <span class=\"author\">by user" + std::to_string(i % 37) + "</span></li>\n";
    html += "</ul></body></html>\n";
    bodies.emplace_back("HTML list page", html);
    std::string json = "[";
    for (int i = 0; i < 2000; ++i)
        json += std::string(i ? "," : "") + "{\"id\":" + std::to_string(i) + ",\"randomNumber\":" +
                std::to_string((i * 7919) % 10000) + ",\"message\":\"fortune " + std::to_string(i % 113) + "\"}";
    json += "]";
    bodies.emplace_back("JSON array", json);

    struct Codec {
        Coding c;
        const char* name;
        int lo, hi;
    } codecs[] = {{Coding::Gzip, "gzip", 1, 9}, {Coding::Brotli, "br", 0, 11}, {Coding::Zstd, "zstd", 1, 19}};

    std::ostringstream md;
    md << "# Compression: CPU per KiB and size at each level\n\n"
       << "`bash bench/compression.sh`: kiln's codings (src/http/compress.cpp, one call per body, contexts kept per "
          "thread) on one core, thread CPU time over at least 0.3 s per cell. Bodies: ";
    for (size_t i = 0; i < bodies.size(); ++i)
        md << (i ? ", " : "") << bodies[i].first << " (" << bodies[i].second.size() / 1024 << " KiB)";
    md << ". Cells: microseconds of CPU per KiB of input / output size as a share of the input. The defaults "
          "(compression.*_level) are gzip 5, br 4, zstd 3.\n\n";
    md << "| coding | level |";
    for (auto& b : bodies) md << " " << b.first << " |";
    md << "\n| --- | --- |";
    for (size_t i = 0; i < bodies.size(); ++i) md << " --- |";
    md << "\n";
    for (const Codec& k : codecs) {
        for (int level = k.lo; level <= k.hi; ++level) {
            md << "| " << k.name << " | " << level << " |";
            for (auto& b : bodies) {
                Cell cell = measure(k.c, level, b.second);
                char text[64];
                std::snprintf(text, sizeof text, " %.1f µs / %.1f%% |", cell.us_per_kib, cell.ratio * 100);
                md << text;
            }
            md << "\n";
            std::cerr << k.name << " " << level << " done\n";
        }
    }
    std::cout << md.str();
    if (argc > 1) std::ofstream(argv[1]) << md.str();
    return 0;
}
