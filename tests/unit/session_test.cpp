// The shared-memory session table and the Session value container, without a server.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <kiln/app.hpp>
#include <kiln/session.hpp>

#include "app/session_table.hpp"

using kiln::SessionId;
using kiln::app::SessionTableParams;
using kiln::app::SharedSessionTable;

namespace {

SessionId id_of(uint32_t n) {
    SessionId id{};
    // Spread like real (random) ids: stripe and bucket come from bytes 0-7.
    uint64_t x = n * 0x9E3779B97F4A7C15ull;
    std::memcpy(id.data(), &x, 8);
    std::memcpy(id.data() + 8, &n, 4);
    return id;
}

// A table in anonymous shared memory, as the supervisor's memfd would be.
struct Table {
    explicit Table(SessionTableParams p) : size(p.memory_bytes) {
        mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        SharedSessionTable::format(mem, p);
        table = SharedSessionTable::attach(mem, size);
    }
    ~Table() {
        table.reset();
        munmap(mem, size);
    }
    size_t size;
    void* mem;
    std::unique_ptr<SharedSessionTable> table;
};

SessionTableParams small(size_t memory = 1 << 20) { return {memory, 256, 100, 1000}; }

}  // namespace

TEST(SessionTable, SaveLoadRemove) {
    Table t(small());
    std::string data;
    EXPECT_FALSE(t.table->load(id_of(1), 0, data));
    t.table->save(id_of(1), 0, "hello");
    t.table->save(id_of(2), 0, "world");
    ASSERT_TRUE(t.table->load(id_of(1), 1, data));
    EXPECT_EQ(data, "hello");
    t.table->save(id_of(1), 2, "replaced");
    ASSERT_TRUE(t.table->load(id_of(1), 3, data));
    EXPECT_EQ(data, "replaced");
    t.table->remove(id_of(1));
    EXPECT_FALSE(t.table->load(id_of(1), 4, data));
    ASSERT_TRUE(t.table->load(id_of(2), 4, data));
    EXPECT_EQ(data, "world");
    EXPECT_EQ(t.table->live(), 1u);
}

TEST(SessionTable, ManySessionsAllFound) {
    Table t(small(4 << 20));
    size_t cap = SharedSessionTable::capacity(small(4 << 20));
    ASSERT_GT(cap, 5000u);
    for (uint32_t i = 0; i < 5000; ++i) t.table->save(id_of(i), 0, std::to_string(i));
    std::string data;
    for (uint32_t i = 0; i < 5000; ++i) {
        ASSERT_TRUE(t.table->load(id_of(i), 1, data)) << i;
        ASSERT_EQ(data, std::to_string(i));
    }
}

TEST(SessionTable, IdleExpiryIsRefreshedByUse) {
    Table t(small());  // idle 100 s, absolute 1000 s
    std::string data;
    t.table->save(id_of(1), 0, "x");
    EXPECT_TRUE(t.table->load(id_of(1), 99, data));   // used: idle deadline moves to 199
    EXPECT_TRUE(t.table->load(id_of(1), 198, data));
    EXPECT_FALSE(t.table->load(id_of(1), 298, data));  // 100 s idle
    EXPECT_EQ(t.table->live(), 0u);                     // freed when met
}

TEST(SessionTable, AbsoluteExpiryWhateverTheUse) {
    Table t(small());
    std::string data;
    t.table->save(id_of(1), 0, "x");
    for (int64_t now = 50; now < 1000; now += 50) ASSERT_TRUE(t.table->load(id_of(1), now, data)) << now;
    EXPECT_FALSE(t.table->load(id_of(1), 1000, data));
}

TEST(SessionTable, FullStoreSweepsExpiredBeforeRefusing) {
    SessionTableParams p{64 << 10, 1024, 100, 1000};
    Table t(p);
    size_t cap = SharedSessionTable::capacity(p);
    ASSERT_GE(cap, 4u);
    uint32_t stored = 0;
    int refused = 0;
    for (uint32_t i = 0; i < cap * 4; ++i) {
        try {
            t.table->save(id_of(i), 0, "x");
            ++stored;
        } catch (const kiln::HttpError& e) {
            EXPECT_EQ(e.status(), 503);
            ++refused;
        }
    }
    EXPECT_LE(stored, cap);
    EXPECT_GT(refused, 0);
    // Later, everything has expired: new sessions fit again without any sweep call.
    for (uint32_t i = 0; i < cap; ++i) t.table->save(id_of(100000 + i), 500, "y");
    std::string data;
    EXPECT_TRUE(t.table->load(id_of(100000), 501, data));
}

TEST(SessionTable, WorksAcrossProcesses) {
    Table t(small(2 << 20));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        for (uint32_t i = 0; i < 1000; ++i) t.table->save(id_of(i), 0, "child" + std::to_string(i));
        _exit(0);
    }
    for (uint32_t i = 1000; i < 2000; ++i) t.table->save(id_of(i), 0, "parent" + std::to_string(i));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::string data;
    for (uint32_t i = 0; i < 2000; ++i) {
        ASSERT_TRUE(t.table->load(id_of(i), 1, data)) << i;
        EXPECT_EQ(data, (i < 1000 ? "child" : "parent") + std::to_string(i));
    }
}

// Error paths -----------------------------------------------------------------

TEST(SessionTable, LockHolderDyingIsRepairedAndLosesNothingElse) {
    Table t(small());
    for (uint32_t i = 0; i < 200; ++i) t.table->save(id_of(i), 0, "v" + std::to_string(i));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        t.table->lock_and_abandon(id_of(7));  // a worker killed inside the store
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    std::string data;
    for (uint32_t i = 0; i < 200; ++i) {
        ASSERT_TRUE(t.table->load(id_of(i), 1, data)) << i;  // would hang without robust locks
        EXPECT_EQ(data, "v" + std::to_string(i));
    }
    t.table->save(id_of(7), 2, "after");
    ASSERT_TRUE(t.table->load(id_of(7), 3, data));
    EXPECT_EQ(data, "after");
}

TEST(SessionTable, OversizedDataIsRefused) {
    Table t(small());
    EXPECT_THROW(t.table->save(id_of(1), 0, std::string(257, 'x')), std::length_error);
    t.table->save(id_of(1), 0, std::string(256, 'x'));
}

TEST(SessionTable, TooSmallRegionHasNoCapacity) {
    EXPECT_EQ(SharedSessionTable::capacity({4096, 4096, 1, 1}), 0u);
}

TEST(SessionTable, AttachRefusesForeignMemory) {
    std::string junk(4096, 'j');
    EXPECT_EQ(SharedSessionTable::attach(junk.data(), junk.size()), nullptr);
}

TEST(SessionData, SerializeRoundTrip) {
    std::vector<kiln::Session::Entry> in{{"name", kiln::Session::Kind::String, "Ada"},
                                         {"n", kiln::Session::Kind::Int, std::string(8, '\x01')},
                                         {"blob", kiln::Session::Kind::Blob, std::string("\0\xff", 2)}};
    std::string bytes;
    kiln::Session::serialize(in, bytes);
    std::vector<kiln::Session::Entry> out;
    ASSERT_TRUE(kiln::Session::deserialize(bytes, out));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].value, "Ada");
    EXPECT_EQ(out[2].value, std::string("\0\xff", 2));
    // Every truncation is refused, never read past the end.
    for (size_t cut = 1; cut < bytes.size(); ++cut) {
        std::vector<kiln::Session::Entry> partial;
        bool ok = kiln::Session::deserialize(std::string_view(bytes).substr(0, cut), partial);
        if (ok) {
            EXPECT_LT(partial.size(), 3u);  // only at an entry boundary
        }
    }
}

TEST(SessionData, ParseIdAcceptsOnlyLowerHex32) {
    SessionId id;
    EXPECT_TRUE(kiln::parse_session_id("00112233445566778899aabbccddeeff", id));
    EXPECT_EQ(id[15], 0xff);
    EXPECT_FALSE(kiln::parse_session_id("00112233445566778899AABBCCDDEEFF", id));
    EXPECT_FALSE(kiln::parse_session_id("00112233445566778899aabbccddeef", id));
    EXPECT_FALSE(kiln::parse_session_id("", id));
    EXPECT_FALSE(kiln::parse_session_id("00112233445566778899aabbccddeefg", id));
}

// Regression guard for the in-place reuse of a loop's Session: a record with fewer
// entries than the previous request's session must not keep any of the old ones.
TEST(SessionData, DeserializeOverwritesWhatWasThere) {
    std::vector<kiln::Session::Entry> out{{"old1", kiln::Session::Kind::String, "a"},
                                          {"old2", kiln::Session::Kind::String, "b"},
                                          {"old3", kiln::Session::Kind::Blob, "c"}};
    std::string bytes;
    kiln::Session::serialize({{"new", kiln::Session::Kind::Int, std::string(8, '\x02')}}, bytes);
    ASSERT_TRUE(kiln::Session::deserialize(bytes, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].key, "new");
    EXPECT_EQ(out[0].kind, kiln::Session::Kind::Int);
    ASSERT_TRUE(kiln::Session::deserialize("", out));
    EXPECT_TRUE(out.empty());
}
