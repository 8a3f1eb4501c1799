// The files one generator run writes, checked before any is written: if a file
// exists with other content and --force was not given, nothing is written and the
// run is refused naming every such file. Writing prints one line per file:
// "create PATH", "force PATH" (overwritten), "update PATH" (an edit of a project
// file, e.g. main.cpp), "identical PATH" (already so, left alone), "create PATH/"
// for a directory.
#pragma once
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::gen {

class FilePlan {
public:
    void add(std::filesystem::path rel, std::string content);   // a generated file
    void edit(std::filesystem::path rel, std::string content);  // an existing file's new content
    void add_dir(std::filesystem::path rel);

    // The files that exist under `root` with other content (generated ones only).
    std::vector<std::string> conflicts(const std::filesystem::path& root) const;
    // Writes everything under root; "" on success, else what failed (some files may
    // be written by then).
    std::string write(const std::filesystem::path& root, std::FILE* log) const;

private:
    struct Entry {
        std::filesystem::path rel;
        std::string content;
        enum Kind { File, Edit, Dir } kind;
    };
    std::vector<Entry> entries_;
};

}  // namespace kiln::gen
