// UploadSink: what every multipart body of a process holds in memory while it arrives
// is bounded together. Bodies that never end (an HTTP/2 connection's streams, each up
// to 1 MiB of fields) could otherwise hold memory by the hundred MiB: past the limit a
// field is refused with 503, and a file goes to disk at once.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "app/upload_sink.hpp"

namespace {

using kiln::app::UploadRules;
using kiln::app::UploadSink;

std::string field(const std::string& name, size_t bytes) {
    return "--b\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + std::string(bytes, 'x');
}

std::string file(const std::string& name, size_t bytes) {
    return "--b\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"a.txt\"\r\n\r\n" +
           std::string(bytes, 'y');
}

TEST(UploadSink, FormDataHeldInMemoryIsBoundedForTheWholeProcess) {
    UploadRules rules;
    rules.max_files = 4;
    rules.memory_limit = 256 * 1024;
    const uint64_t idle = kiln::app::upload_memory_bytes();
    ASSERT_EQ(idle, 0u);

    auto first = std::make_unique<UploadSink>("b", rules);  // never ends
    ASSERT_TRUE(first->write(field("f", 200 * 1024)));
    EXPECT_GE(kiln::app::upload_memory_bytes(), 190u * 1024);

    UploadSink second("b", rules);  // its field would pass the limit: refused
    EXPECT_FALSE(second.write(field("g", 100 * 1024)));
    EXPECT_EQ(second.status(), 503);
    EXPECT_EQ(second.reason(), "too many uploads in progress; try again later");
    EXPECT_EQ(second.retry_after(), 1u);  // room comes back as uploads end

    // A file under the 64 KiB a file keeps in memory goes to disk instead.
    UploadSink third("b", rules);
    const uint64_t spooled = kiln::app::spooled_bytes();
    ASSERT_TRUE(third.write(file("doc", 60 * 1024)));
    EXPECT_GE(kiln::app::spooled_bytes(), spooled + 50 * 1024);
    EXPECT_LT(kiln::app::upload_memory_bytes(), 256u * 1024);

    // The first body's client leaves: what it held is given back.
    first.reset();
    EXPECT_LT(kiln::app::upload_memory_bytes(), 1024u);  // the file part's head
    UploadSink fourth("b", rules);
    EXPECT_TRUE(fourth.write(field("h", 100 * 1024)));
}

TEST(UploadSink, EverySinkGivesBackWhatItHeld) {
    UploadRules rules;
    rules.max_files = 4;
    {
        UploadSink a("b", rules), b("b", rules);
        ASSERT_TRUE(a.write(field("f", 10 * 1024) + "\r\n" + file("doc", 30 * 1024)));
        ASSERT_TRUE(b.write(file("doc", 200 * 1024)));  // past 64 KiB: on disk
        EXPECT_GT(kiln::app::upload_memory_bytes(), 35u * 1024);
    }
    EXPECT_EQ(kiln::app::upload_memory_bytes(), 0u);
    // A body refused keeps nothing, though its sink lives on (a connection lingering).
    UploadSink refused("b", rules);
    ASSERT_TRUE(refused.write(field("f", 500 * 1024)));
    EXPECT_GT(kiln::app::upload_memory_bytes(), 400u * 1024);
    EXPECT_FALSE(refused.write(std::string(600 * 1024, 'x')));  // past the form's 1 MiB
    EXPECT_EQ(refused.status(), 413);
    EXPECT_EQ(refused.retry_after(), 0u);  // no use trying again
    EXPECT_EQ(kiln::app::upload_memory_bytes(), 0u);
}

}  // namespace
