// The shared-memory session table and the Session value container, without a server.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <kiln/app.hpp>
#include <kiln/session.hpp>

#include "app/session_record.hpp"
#include "app/session_table.hpp"

using kiln::SessionId;
using Record = kiln::app::SessionRecord;
constexpr auto kCreate = kiln::SessionStore::SaveMode::Create;
constexpr auto kUpdate = kiln::SessionStore::SaveMode::Update;
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
    t.table->save(id_of(1), 0, "hello", kCreate);
    t.table->save(id_of(2), 0, "world", kCreate);
    ASSERT_TRUE(t.table->load(id_of(1), 1, data));
    EXPECT_EQ(data, "hello");
    t.table->save(id_of(1), 2, "replaced", kCreate);
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
    for (uint32_t i = 0; i < 5000; ++i) t.table->save(id_of(i), 0, std::to_string(i), kCreate);
    std::string data;
    for (uint32_t i = 0; i < 5000; ++i) {
        ASSERT_TRUE(t.table->load(id_of(i), 1, data)) << i;
        ASSERT_EQ(data, std::to_string(i));
    }
}

TEST(SessionTable, IdleExpiryIsRefreshedByUse) {
    Table t(small());  // idle 100 s, absolute 1000 s
    std::string data;
    t.table->save(id_of(1), 0, "x", kCreate);
    EXPECT_TRUE(t.table->load(id_of(1), 99, data));   // used: idle deadline moves to 199
    EXPECT_TRUE(t.table->load(id_of(1), 198, data));
    EXPECT_FALSE(t.table->load(id_of(1), 298, data));  // 100 s idle
    EXPECT_EQ(t.table->live(), 0u);                     // freed when met
}

TEST(SessionTable, AnOlderRequestsSaveDoesNotMoveTheIdleDeadlineBack) {
    Table t(small());  // idle 100 s
    std::string data;
    t.table->save(id_of(1), 0, "x", kCreate);
    EXPECT_TRUE(t.table->load(id_of(1), 90, data));      // used at 90
    t.table->save(id_of(1), 10, "y", kUpdate);             // a request begun at 10 saves
    EXPECT_TRUE(t.table->load(id_of(1), 10, data));        // one begun at 10 reads
    EXPECT_TRUE(t.table->load(id_of(1), 150, data));       // 60 s after the last use
    EXPECT_EQ(data, "y");
}

TEST(SessionTable, AbsoluteExpiryWhateverTheUse) {
    Table t(small());
    std::string data;
    t.table->save(id_of(1), 0, "x", kCreate);
    for (int64_t now = 50; now < 1000; now += 50) ASSERT_TRUE(t.table->load(id_of(1), now, data)) << now;
    EXPECT_FALSE(t.table->load(id_of(1), 1000, data));
}

TEST(SessionTable, FullStoreEvictsTheLeastRecentlyUsedInsteadOfRefusing) {
    SessionTableParams p{64 << 10, 1024, 100, 1000};
    Table t(p);
    size_t cap = SharedSessionTable::capacity(p);
    ASSERT_GE(cap, 4u);
    for (uint32_t i = 0; i < cap * 4; ++i) ASSERT_TRUE(t.table->save(id_of(i), 0, "x", kCreate)) << i;
    EXPECT_LE(t.table->live(), cap);
    EXPECT_GE(t.table->evictions(), cap * 3);
    std::string data;
    EXPECT_TRUE(t.table->load(id_of(cap * 4 - 1), 1, data));  // the newest are the ones kept
    EXPECT_FALSE(t.table->load(id_of(0), 1, data));
}

TEST(SessionTable, ExpiredSessionsMakeRoomWithoutCountingAsEvictions) {
    SessionTableParams p{64 << 10, 1024, 100, 1000};
    Table t(p);
    size_t cap = SharedSessionTable::capacity(p);
    for (uint32_t i = 0; i < cap; ++i) t.table->save(id_of(i), 0, "x", kCreate);
    uint64_t before = t.table->evictions();
    for (uint32_t i = 0; i < cap; ++i) t.table->save(id_of(100000 + i), 500, "y", kCreate);  // all idle > 100 s
    EXPECT_EQ(t.table->evictions(), before);
    std::string data;
    EXPECT_TRUE(t.table->load(id_of(100000), 501, data));
}

TEST(SessionTable, AFloodOfNewSessionsNeverEvictsAReturningOne) {
    SessionTableParams p{64 << 10, 1024, 100000, 100000};
    Table t(p);
    size_t cap = SharedSessionTable::capacity(p);
    std::string data;
    // Returning users: stored, then loaded by a later request (promoted).
    for (uint32_t u = 0; u < 8; ++u) {
        t.table->save(id_of(u), 0, "user" + std::to_string(u), kCreate);
        ASSERT_TRUE(t.table->load(id_of(u), 1, data));
    }
    // Then many times the store's capacity of visitors who never come back,
    // newer than every user's last request.
    for (uint32_t i = 0; i < cap * 10; ++i) t.table->save(id_of(1000 + i), 2, "bot", kCreate);
    for (uint32_t u = 0; u < 8; ++u) {
        ASSERT_TRUE(t.table->load(id_of(u), 3, data)) << u;
        EXPECT_EQ(data, "user" + std::to_string(u));
    }
}

TEST(SessionTable, UpdateNeverBringsBackARemovedSession) {
    Table t(small());
    std::string data;
    t.table->save(id_of(1), 0, "logged in", kCreate);
    ASSERT_TRUE(t.table->load(id_of(1), 1, data));  // request A loads it
    t.table->remove(id_of(1));                      // request B logs out
    EXPECT_FALSE(t.table->save(id_of(1), 2, "A's late write", kUpdate));
    EXPECT_FALSE(t.table->load(id_of(1), 3, data));
    EXPECT_TRUE(t.table->save(id_of(2), 0, "new", kCreate));
    EXPECT_TRUE(t.table->save(id_of(2), 1, "updated", kUpdate));
    ASSERT_TRUE(t.table->load(id_of(2), 2, data));
    EXPECT_EQ(data, "updated");
}

TEST(SessionTable, RenameMovesTheDataAndRetiresTheOldId) {
    Table t(small());
    std::string data;
    t.table->save(id_of(1), 0, "before login", kCreate);
    ASSERT_TRUE(t.table->rename(id_of(1), id_of(2), 5, "after login"));
    EXPECT_FALSE(t.table->load(id_of(1), 6, data));
    ASSERT_TRUE(t.table->load(id_of(2), 6, data));
    EXPECT_EQ(data, "after login");
    EXPECT_EQ(t.table->live(), 1u);
    // The absolute lifetime counts from the first id's creation (1000 s).
    EXPECT_FALSE(t.table->load(id_of(2), 1000, data));
}

TEST(SessionTable, RenameInAFullStoreLosesNothing) {
    SessionTableParams p{64 << 10, 1024, 100000, 100000};
    Table t(p);
    size_t cap = SharedSessionTable::capacity(p);
    std::string data;
    t.table->save(id_of(0), 0, "user", kCreate);
    ASSERT_TRUE(t.table->load(id_of(0), 1, data));
    for (uint32_t i = 1; i < cap * 2; ++i) t.table->save(id_of(i), 2, "bot", kCreate);
    // Log-in: a new id in whatever stripe, the old one gone, the data kept.
    for (uint32_t n = 0; n < 50; ++n) {
        SessionId from = id_of(n == 0 ? 0 : 900000 + n - 1), to = id_of(900000 + n);
        ASSERT_TRUE(t.table->rename(from, to, 3 + n, "user")) << n;
        ASSERT_TRUE(t.table->load(to, 3 + n, data)) << n;
        EXPECT_FALSE(t.table->load(from, 3 + n, data)) << n;
    }
}

TEST(SessionTable, RenameOfARemovedSessionWritesNothing) {
    Table t(small());
    std::string data;
    EXPECT_FALSE(t.table->rename(id_of(1), id_of(2), 0, "x"));
    EXPECT_FALSE(t.table->load(id_of(2), 1, data));
    EXPECT_EQ(t.table->live(), 0u);
}

TEST(SessionTable, WorksAcrossProcesses) {
    Table t(small(2 << 20));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        for (uint32_t i = 0; i < 1000; ++i) t.table->save(id_of(i), 0, "child" + std::to_string(i), kCreate);
        _exit(0);
    }
    for (uint32_t i = 1000; i < 2000; ++i) t.table->save(id_of(i), 0, "parent" + std::to_string(i), kCreate);
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
    for (uint32_t i = 0; i < 200; ++i) t.table->save(id_of(i), 0, "v" + std::to_string(i), kCreate);
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
    t.table->save(id_of(7), 2, "after", kCreate);
    ASSERT_TRUE(t.table->load(id_of(7), 3, data));
    EXPECT_EQ(data, "after");
}

TEST(SessionTable, RepairKeepsReturningSessionsAheadOfNewOnes) {
    SessionTableParams p{64 << 10, 1024, 100000, 100000};
    Table t(p);
    size_t cap = SharedSessionTable::capacity(p);
    std::string data;
    t.table->save(id_of(1), 0, "user", kCreate);
    ASSERT_TRUE(t.table->load(id_of(1), 1, data));
    for (uint32_t i = 0; i < cap / 2; ++i) t.table->save(id_of(1000 + i), 2, "bot", kCreate);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        t.table->lock_and_abandon(id_of(1));  // the recency lists are rebuilt from the slots
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    for (uint32_t i = 0; i < cap * 10; ++i) t.table->save(id_of(5000 + i), 3, "bot", kCreate);
    ASSERT_TRUE(t.table->load(id_of(1), 4, data));
    EXPECT_EQ(data, "user");
}

TEST(SessionTable, OversizedDataIsRefused) {
    Table t(small());
    EXPECT_THROW(t.table->save(id_of(1), 0, std::string(257, 'x'), kCreate), std::length_error);
    t.table->save(id_of(1), 0, std::string(256, 'x'), kCreate);
}

TEST(SessionTable, TooSmallRegionHasNoCapacity) {
    EXPECT_EQ(SharedSessionTable::capacity({4096, 4096, 1, 1}), 0u);
}

TEST(SessionTable, AttachRefusesForeignMemory) {
    std::string junk(4096, 'j');
    EXPECT_EQ(SharedSessionTable::attach(junk.data(), junk.size()), nullptr);
}

TEST(SessionData, SerializeRoundTrip) {
    std::vector<Record::Entry> in{{"name", Record::Kind::String, "Ada"},
                                         {"n", Record::Kind::Int, std::string(8, '\x01')},
                                         {"blob", Record::Kind::Blob, std::string("\0\xff", 2)}};
    std::string bytes;
    Record::write(in, bytes);
    std::vector<Record::Entry> out;
    ASSERT_TRUE(Record::read(bytes, out));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].value, "Ada");
    EXPECT_EQ(out[2].value, std::string("\0\xff", 2));
    // Every truncation is refused, never read past the end.
    for (size_t cut = 1; cut < bytes.size(); ++cut) {
        std::vector<Record::Entry> partial;
        bool ok = Record::read(std::string_view(bytes).substr(0, cut), partial);
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
    std::vector<Record::Entry> out{{"old1", Record::Kind::String, "a"},
                                          {"old2", Record::Kind::String, "b"},
                                          {"old3", Record::Kind::Blob, "c"}};
    std::string bytes;
    Record::write({{"new", Record::Kind::Int, std::string(8, '\x02')}}, bytes);
    ASSERT_TRUE(Record::read(bytes, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].key, "new");
    EXPECT_EQ(out[0].kind, Record::Kind::Int);
    ASSERT_TRUE(Record::read("", out));
    EXPECT_TRUE(out.empty());
}
