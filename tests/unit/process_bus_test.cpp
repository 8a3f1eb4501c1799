// net::ProcessBus between two of its slots in one process: a burst larger than the
// kernel's datagram queue (net.unix.max_dgram_qlen, 10 by default) arrives whole and
// in order once the receiver reads (before, all but the first ten were dropped); a
// free slot is passed over; a peer that does not read holds at most
// kMaxPendingBytes, then its datagrams are dropped and counted, and the sender
// never blocks. The bus directory (ProcessBusDir) is the user's alone, a slot's
// socket a dead process left is taken over, the directory goes with what is in it, and
// one a killed supervisor left goes when the next supervisor makes its own.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/process_bus.hpp"

using kiln::net::ProcessBus;
using kiln::net::ProcessBusDir;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<ProcessBusDir> fresh_dir() {
    std::string err;
    auto dir = ProcessBusDir::create(&err);
    EXPECT_TRUE(dir) << err;
    return dir;
}

struct Received {
    std::mutex mu;
    std::vector<std::string> got;
    size_t size() {
        std::lock_guard<std::mutex> lock(mu);
        return got.size();
    }
};

// What a killed worker leaves in slot `slot`: its socket file, bound by nobody.
void leave_socket(const std::string& dir, unsigned slot) {
    int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s/%u", dir.c_str(), slot);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << a.sun_path;
    ::close(fd);
}

bool wait_for(Received& r, size_t n) {
    for (auto until = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < until;) {
        if (r.size() >= n) return true;
        std::this_thread::sleep_for(5ms);
    }
    return r.size() >= n;
}

}  // namespace

TEST(ProcessBus, ABurstPastTheKernelsQueueArrivesWholeAndInOrder) {
    std::string err;
    auto dir = fresh_dir();
    auto a = ProcessBus::open(dir->path(), 0, 3, &err);  // slot 2 stays free
    auto b = ProcessBus::open(dir->path(), 1, 3, &err);
    ASSERT_TRUE(a && b) << err;
    a->start([](std::string_view) {});
    for (int i = 0; i < 500; ++i) ASSERT_TRUE(a->send_others("message " + std::to_string(i)));
    Received r;
    b->start([&](std::string_view d) {  // reading only now: the burst waited
        std::lock_guard<std::mutex> lock(r.mu);
        r.got.emplace_back(d);
    });
    ASSERT_TRUE(wait_for(r, 500)) << r.size() << " of 500 arrived";
    for (int i = 0; i < 500; ++i) EXPECT_EQ(r.got[static_cast<size_t>(i)], "message " + std::to_string(i));
    EXPECT_EQ(a->dropped(), 0u);
}

TEST(ProcessBus, APeerThatDoesNotReadHoldsAtMostTheBoundAndNeverBlocksTheSender) {
    std::string err;
    auto dir = fresh_dir();
    auto a = ProcessBus::open(dir->path(), 0, 2, &err);
    auto late = ProcessBus::open(dir->path(), 1, 2, &err);  // bound, reading only at the end
    ASSERT_TRUE(a && late) << err;
    a->start([](std::string_view) {});
    const size_t size = 64 * 1024;
    const size_t n = ProcessBus::kMaxPendingBytes / size + 200;  // past what may wait
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) {
        std::string d = std::to_string(i) + ":";
        d.resize(size, 'x');
        a->send_others(d);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    size_t dropped = a->dropped();
    EXPECT_GT(dropped, 0u);
    // What was not dropped is the first of them, whole and in order: the kernel's
    // queue, then at most the bound's worth that waited (before, ten).
    Received r;
    late->start([&](std::string_view d) {
        std::lock_guard<std::mutex> lock(r.mu);
        r.got.emplace_back(d.substr(0, d.find(':')));
    });
    ASSERT_TRUE(wait_for(r, n - dropped)) << r.size() << " of " << n - dropped;
    EXPECT_GE(n - dropped, ProcessBus::kMaxPendingBytes / size);
    for (size_t i = 0; i < r.got.size(); ++i) EXPECT_EQ(r.got[i], std::to_string(i));
}

TEST(ProcessBusDir, IsTheUsersAloneAndGoesWithWhatIsInIt) {
    std::string path;
    {
        auto dir = fresh_dir();
        path = dir->path();
        struct stat st;
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0700u);
        EXPECT_EQ(st.st_uid, ::geteuid());
        std::string err;
        auto bus = ProcessBus::open(path, 0, 2, &err);
        ASSERT_TRUE(bus) << err;
        EXPECT_EQ(::access((path + "/0").c_str(), F_OK), 0);
        bus.reset();  // its socket goes with it
        EXPECT_NE(::access((path + "/0").c_str(), F_OK), 0);
        leave_socket(path, 1);
    }
    EXPECT_NE(::access(path.c_str(), F_OK), 0) << path << " is still there";
}

TEST(ProcessBus, ASocketADeadProcessLeftIsTakenOver) {
    auto dir = fresh_dir();
    leave_socket(dir->path(), 1);
    std::string err;
    auto a0 = ProcessBus::open(dir->path(), 0, 2, &err);
    auto a1 = ProcessBus::open(dir->path(), 1, 2, &err);
    ASSERT_TRUE(a0 && a1) << err;
    Received r;
    a1->start([&](std::string_view d) {
        std::lock_guard<std::mutex> lock(r.mu);
        r.got.emplace_back(d);
    });
    ASSERT_TRUE(a0->send_others("hello"));
    ASSERT_TRUE(wait_for(r, 1));
    EXPECT_EQ(r.got[0], "hello");
}

TEST(ProcessBus, ADirectoryOthersMayUseIsRefused) {
    auto dir = fresh_dir();
    ASSERT_EQ(::chmod(dir->path().c_str(), 0755), 0);
    std::string err;
    EXPECT_FALSE(ProcessBus::open(dir->path(), 0, 2, &err));
    EXPECT_EQ(err, "process bus: " + dir->path() + " is not a directory of this user's that only it may use");
    EXPECT_FALSE(ProcessBus::open("/tmp/no-such-kiln-bus-dir", 0, 2, &err));
    // A link to a private directory is not one: it could be pointed elsewhere.
    ASSERT_EQ(::chmod(dir->path().c_str(), 0700), 0);
    const std::string inside = dir->path() + "/private", link = dir->path() + "/link";
    ASSERT_EQ(::mkdir(inside.c_str(), 0700), 0);
    ASSERT_EQ(::symlink(inside.c_str(), link.c_str()), 0);
    EXPECT_TRUE(ProcessBus::open(inside, 0, 2, &err)) << err;
    EXPECT_FALSE(ProcessBus::open(link, 0, 2, &err));
    ::unlink(link.c_str());
    ::rmdir(inside.c_str());
    // A path a slot's socket would not fit in.
    const std::string deep = dir->path() + "/" + std::string(100, 'd');
    ASSERT_EQ(::mkdir(deep.c_str(), 0700), 0);
    EXPECT_FALSE(ProcessBus::open(deep, 0, 2, &err));
    EXPECT_EQ(err, "process bus: the directory's path is too long for a socket: " + deep);
    ::rmdir(deep.c_str());
}

// Where the directory is made: the service's runtime directory, else $TMPDIR, else
// /tmp; a base whose path another user could change is passed over.
TEST(ProcessBusDir, IsMadeOnlyWhereNoOtherUserCanReplaceIt) {
    auto scratch = fresh_dir();  // a private place for the bases below
    const std::string safe = scratch->path() + "/safe", open = scratch->path() + "/open";
    ASSERT_EQ(::mkdir(safe.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(open.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(open.c_str(), 0777), 0);  // anyone may rename what is in it
    struct Restore {  // before the scratch directory goes, which must be empty
        std::string safe, open;
        ~Restore() {
            ::unsetenv("TMPDIR");
            ::unsetenv("RUNTIME_DIRECTORY");
            ::rmdir(safe.c_str());
            ::rmdir(open.c_str());
        }
    } restore{safe, open};
    auto made_in = [](const char* runtime, const char* tmp) {
        if (runtime) ::setenv("RUNTIME_DIRECTORY", runtime, 1);
        else ::unsetenv("RUNTIME_DIRECTORY");
        if (tmp) ::setenv("TMPDIR", tmp, 1);
        else ::unsetenv("TMPDIR");
        std::string err;
        auto dir = ProcessBusDir::create(&err);
        EXPECT_TRUE(dir) << err;
        if (!dir) return std::string();
        EXPECT_EQ(::access((dir->path() + "/supervisor").c_str(), F_OK), 0);  // the socket that keeps it in use
        return dir->path().substr(0, dir->path().rfind('/'));
    };
    EXPECT_EQ(made_in(nullptr, safe.c_str()), safe);
    EXPECT_EQ(made_in(safe.c_str(), "/tmp"), safe);
    EXPECT_EQ(made_in(nullptr, open.c_str()), "/tmp");
    EXPECT_EQ(made_in(open.c_str(), nullptr), "/tmp");
    EXPECT_EQ(made_in(nullptr, (open + "/../open").c_str()), "/tmp");  // resolved first
    ASSERT_EQ(::chmod(open.c_str(), 01777), 0);  // with the sticky bit, like /tmp: fine
    EXPECT_EQ(made_in(nullptr, open.c_str()), open);
    EXPECT_EQ(made_in(nullptr, "relative/path"), "/tmp");
}


// A supervisor killed with SIGKILL leaves its directory; the next one to make its own
// in the same place removes it: the directory is this user's, private, a minute old
// and nobody is bound to its keeper socket. A live one, one just made, one with more
// than sockets in it and one others may read are left alone.
TEST(ProcessBusDir, WhatAKilledSupervisorLeftIsRemovedByTheNext) {
    auto scratch = fresh_dir();
    const std::string base = scratch->path() + "/base";
    ASSERT_EQ(::mkdir(base.c_str(), 0700), 0);
    auto left = [&](const char* name, mode_t mode, bool old) {
        const std::string d = base + "/" + name;
        EXPECT_EQ(::mkdir(d.c_str(), 0700), 0);
        EXPECT_EQ(::chmod(d.c_str(), mode), 0);
        leave_socket(d, 0);
        int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s/supervisor", d.c_str());
        EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ::close(fd);
        if (old) {
            timespec t[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
            EXPECT_EQ(::utimensat(AT_FDCWD, d.c_str(), t, 0), 0);
        }
        return d;
    };
    const std::string stale = left("kiln-bus-Stale1", 0700, true);
    const std::string young = left("kiln-bus-Young1", 0700, false);
    const std::string shared = left("kiln-bus-Share1", 0755, true);
    const std::string more = base + "/kiln-bus-More01";  // a stale one with a file in it
    {
        ASSERT_EQ(::mkdir(more.c_str(), 0700), 0);
        std::FILE* notes = std::fopen((more + "/notes").c_str(), "w");
        ASSERT_TRUE(notes);
        std::fclose(notes);
        int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);  // the keeper socket, bound by nobody now
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s/supervisor", more.c_str());
        ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ::close(fd);
        timespec old[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, more.c_str(), old, 0), 0);
    }

    struct Env {  // TMPDIR names the base; RUNTIME_DIRECTORY would come first
        Env(const std::string& tmp) {
            ::unsetenv("RUNTIME_DIRECTORY");
            ::setenv("TMPDIR", tmp.c_str(), 1);
        }
        ~Env() { ::unsetenv("TMPDIR"); }
    };
    std::unique_ptr<ProcessBusDir> live, next;
    std::string err;
    {
        Env env(base);
        live = ProcessBusDir::create(&err);
        ASSERT_TRUE(live) << err;
        timespec t[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, live->path().c_str(), t, 0), 0);
        next = ProcessBusDir::create(&err);
        ASSERT_TRUE(next) << err;
    }

    EXPECT_NE(::access(stale.c_str(), F_OK), 0) << stale << " is still there";
    EXPECT_EQ(::access(young.c_str(), F_OK), 0);
    EXPECT_EQ(::access(shared.c_str(), F_OK), 0);
    EXPECT_EQ(::access((more + "/notes").c_str(), F_OK), 0);           // what is not a socket stays,
    EXPECT_NE(::access((more + "/supervisor").c_str(), F_OK), 0);      // the sockets go
    EXPECT_EQ(::access((live->path() + "/supervisor").c_str(), F_OK), 0);
    auto bus = ProcessBus::open(live->path(), 0, 2, &err);
    EXPECT_TRUE(bus) << err;

    bus.reset();
    live.reset();
    next.reset();
    for (const std::string& d : {young, shared}) {
        ::unlink((d + "/0").c_str());
        ::unlink((d + "/supervisor").c_str());
        ::rmdir(d.c_str());
    }
    ::unlink((more + "/notes").c_str());
    ::rmdir(more.c_str());
    EXPECT_EQ(::rmdir(base.c_str()), 0) << "something was left in " << base;
}
