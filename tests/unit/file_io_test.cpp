// net::create_temp_file, its fallback where O_TMPFILE is missing, and save_temp_as:
// a temporary file leaves no name behind until it is saved, and the saved file holds
// its bytes with the mode a new file gets.
#include "net/file_io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace kiln::net {
namespace {

class FileIo : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/kiln-file-io-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        for (const std::string& n : names()) ::unlink((dir_ + "/" + n).c_str());
        ::rmdir(dir_.c_str());
    }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        if (DIR* d = ::opendir(dir_.c_str())) {
            while (dirent* e = ::readdir(d))
                if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
            ::closedir(d);
        }
        return out;
    }
    // Writes `data` into a temporary file made by `make`, saves it as "saved", and
    // checks the directory on the way.
    void save_through(int (*make)(const char*), const std::string& data) {
        int fd = make(dir_.c_str());
        ASSERT_GE(fd, 0) << -fd;
        size_t written = 0;
        ASSERT_EQ(write_all(fd, data, &written), 0);
        EXPECT_TRUE(names().empty()) << "a temporary file has a name: " << names().front();
        std::string path = dir_ + "/saved";
        ASSERT_EQ(save_temp_as(fd, data.size(), path), 0);
        ::close(fd);
        EXPECT_EQ(names(), std::vector<std::string>{"saved"});
        struct stat st;
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        mode_t mask = ::umask(0);
        ::umask(mask);
        EXPECT_EQ(st.st_mode & 0777, 0644 & ~mask);
        std::string back(data.size(), '\0');
        int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(in, 0);
        EXPECT_EQ(read_full(in, 0, back.data(), back.size()), static_cast<long>(data.size()));
        ::close(in);
        EXPECT_EQ(back, data);
        EXPECT_EQ(save_temp_as(fd, 0, path), -EBADF);  // closed: nothing named twice
    }
    std::string dir_;
};

std::string some_bytes(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 + 3);
    return s;
}

TEST_F(FileIo, AnUnnamedTemporaryFileIsSavedByItsLink) {
    save_through(create_temp_file, some_bytes(200000));
}

// Where the file system has no O_TMPFILE: a named file unlinked at once, then a copy.
TEST_F(FileIo, TheFallbackLeavesNoNameAndIsSavedByACopy) {
    save_through(create_unlinked_temp_file, some_bytes(200000));
}

TEST_F(FileIo, AMissingDirectoryIsAnError) {
    std::string missing = dir_ + "/missing";
    EXPECT_EQ(create_temp_file(missing.c_str()), -ENOENT);
    EXPECT_EQ(create_unlinked_temp_file(missing.c_str()), -ENOENT);
}

}  // namespace
}  // namespace kiln::net
