// server/config: what apply_setting and load_config_file refuse, and that a refusal
// leaves the options as they were. Mostly regressions found by tests/fuzz/fuzz_config.
#include "server/config.hpp"
#include "server/settings_doc.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::server {
namespace {

class ConfigFile : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/kiln-config-test.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        path_ = dir_ + "/kiln.toml";
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string load(std::string_view text, ServerOptions* o) {
        FILE* f = std::fopen(path_.c_str(), "wb");
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
        return load_config_file(path_, o);
    }
    std::string dir_, path_;
};

TEST(Config, EveryKeyIsListedOnceAndAppliesFromText) {
    std::vector<std::string_view> keys = config_keys();
    EXPECT_EQ(std::set<std::string_view>(keys.begin(), keys.end()).size(), keys.size());
    ServerOptions o;
    EXPECT_EQ(apply_setting("timeouts.header_ms", "5000", &o), "");
    EXPECT_EQ(o.header_timeout_ms, 5000u);
    EXPECT_EQ(apply_setting("listen", "10.1.2.3:81,unix:/run/a.sock", &o), "");
    EXPECT_EQ(o.host, "10.1.2.3");
    EXPECT_EQ(o.port, 81);
    EXPECT_EQ(o.also_listen, std::vector<std::string>{"unix:/run/a.sock"});
}

// --- error paths ---

// Found by fuzz_config: "listen" set the first address before refusing the second,
// "secret" kept a value it refused as too short, a path key kept a relative path.
TEST(Config, EveryKeyIsDocumentedOnceAndNothingElse) {
    std::vector<std::string_view> keys = config_keys();
    std::set<std::string_view> rules(keys.begin(), keys.end()), documented;
    for (const SettingDoc& d : setting_docs()) EXPECT_TRUE(documented.insert(d.key).second) << d.key;
    EXPECT_EQ(rules, documented);
}

TEST(Config, EveryFlagOfTheHelpSetsItsKey) {
    for (const SettingDoc& d : setting_docs()) {
        if (d.flag.empty() || d.flag == "--listen") continue;  // --listen adds an address (flags.cpp)
        EXPECT_EQ(setting_for_flag(d.flag), d.key);
        EXPECT_NE(flags_help().find(std::string(d.flag) + " "), std::string::npos) << d.flag;
    }
}

// A refused URL's message names what is wrong, never the password in it (it goes to
// logs and terminals): libpq quotes the token it stumbled on.
TEST(ConfigErrors, ARefusedDatabaseUrlDoesNotShowItsPassword) {
    ServerOptions o;
    for (const char* url : {"postgresql://app:hunter2%zzsecret@127.0.0.1/app", "host=x password=hunter2 secret",
                            "host=x password='hunter2"}) {
        std::string why = apply_setting("database.url", url, &o);
        EXPECT_NE(why, "") << url;
        EXPECT_EQ(why.find("hunter2"), std::string::npos) << why;
        EXPECT_EQ(why.find("secret"), std::string::npos) << why;
    }
    std::string why = apply_setting("database.url", "postgresql://app@127.0.0.1/app?bogus=1", &o);
    EXPECT_NE(why.find("\"bogus\""), std::string::npos) << why;  // what is not secret is still named
}

// server.name is the Server header's value: a CR LF there would start another field.
TEST(ConfigErrors, AServerNameWithAControlCharacterIsRefused) {
    ServerOptions o;
    EXPECT_NE(apply_setting("server.name", "kiln\r\nSet-Cookie: a=b", &o), "");
    EXPECT_NE(apply_setting("server.name", std::string("kiln\0x", 6), &o), "");
    EXPECT_EQ(o.server_name, "kiln");
    EXPECT_EQ(apply_setting("server.name", "shop/2.1 (kiln)", &o), "");
    EXPECT_EQ(o.server_name, "shop/2.1 (kiln)");
}

// database.max_queued bounds the line of one PostgreSQL connection (0: none).
TEST(ConfigSettings, DatabaseMaxQueued) {
    ServerOptions o;
    EXPECT_EQ(o.database_max_queued, 10000u);
    EXPECT_EQ(apply_setting("database.max_queued", "0", &o), "");
    EXPECT_EQ(o.database_max_queued, 0u);
    EXPECT_EQ(apply_setting("database.max_queued", "250", &o), "");
    EXPECT_EQ(o.database_max_queued, 250u);
    EXPECT_NE(apply_setting("database.max_queued", "-1", &o), "");
}

TEST(ConfigErrors, ARefusedSettingChangesNothing) {
    ServerOptions o;
    EXPECT_NE(apply_setting("listen", "10.1.2.3:81,bogus", &o), "");
    EXPECT_NE(apply_setting("listen", "unix:/run/a.sock,bogus", &o), "");
    EXPECT_EQ(o.host, "127.0.0.1");
    EXPECT_EQ(o.port, 8080);
    EXPECT_TRUE(o.also_listen.empty());
    EXPECT_NE(apply_setting("secret", "short", &o), "");
    EXPECT_EQ(o.secret, "");
    EXPECT_NE(apply_setting("metrics.path", "metrics", &o), "");
    EXPECT_EQ(o.metrics_path, "");
}

// A secret set in code (App options, not a setting) meets the settings' rule too.
TEST(Config, ASecretSetInCodeIsCheckedLikeTheSetting) {
    ServerOptions o;
    EXPECT_EQ(check_options(o), "");  // none: a random one is made at start
    o.secret = "dev";
    EXPECT_NE(check_options(o).find("at least 16"), std::string::npos);
    o.secret = std::string(16, 'k');
    EXPECT_EQ(check_options(o), "");
}

// Found by fuzz_config: TOML's "\u0000" reached options that C APIs (open, inet_pton,
// getpwnam) read only up to the NUL, so what was checked was not what was used.
// fuzz_config, 2026-11-25 (input "U97.5807"): limits.rate took "97.5807" from the
// environment, while kiln.toml had no spelling of it that the fuzzer knew; and the
// environment took spellings TOML refuses ("5.", ".5", "inf"). Both read the same
// numbers now, spelled as TOML spells them.
TEST_F(ConfigFile, ANumberReadsTheSameFromTheEnvironmentAndTheFile) {
    ServerOptions env, file;
    EXPECT_EQ(apply_setting("limits.rate", "97.5807", &env), "");
    EXPECT_EQ(load("limits.rate = 97.5807\n", &file), "");
    EXPECT_EQ(env.rate, 97.5807);
    EXPECT_EQ(file.rate, env.rate);
    EXPECT_EQ(apply_setting("limits.rate", "25", &env), "");
    EXPECT_EQ(load("limits.rate = 25\n", &file), "");
    EXPECT_EQ(file.rate, 25.0);
    EXPECT_EQ(apply_setting("limits.rate", "2.5e1", &env), "");
    EXPECT_EQ(env.rate, 25.0);
    for (const char* bad : {"5.", ".5", "inf", "nan", "007", "1e", "+3", " 3", "-1"}) {
        ServerOptions o;
        EXPECT_NE(apply_setting("limits.rate", bad, &o), "") << bad;
        EXPECT_EQ(o.rate, 0.0) << bad;
    }
    EXPECT_NE(apply_setting("limits.rate_table", "1000", &env), "");  // not a power of two
    EXPECT_EQ(apply_setting("limits.rate_table", "1024", &env), "");
    EXPECT_EQ(env.rate_table_slots, 1024u);
}

// CI's fuzz_config, 2026-11-25: a 300-digit "0.000...1" was taken from the environment
// (strtod reads any length) and refused in kiln.toml (toml++ reads floats of up to 128
// characters). The environment's numbers are now read by the same reader.
TEST_F(ConfigFile, ANumberTooLongForTheFileIsRefusedFromTheEnvironmentToo) {
    std::string tiny = "0." + std::string(300, '0') + "1";
    ServerOptions env, file;
    EXPECT_NE(apply_setting("limits.rate", tiny, &env), "");
    EXPECT_NE(load("limits.rate = " + tiny + "\n", &file), "");
    EXPECT_EQ(env.rate, 0.0);
    std::string fits = "0." + std::string(100, '0') + "1";
    EXPECT_EQ(apply_setting("limits.rate", fits, &env), "");
    EXPECT_EQ(load("limits.rate = " + fits + "\n", &file), "");
    EXPECT_EQ(env.rate, file.rate);
    EXPECT_GT(env.rate, 0.0);
}

TEST_F(ConfigFile, ANulByteInAStringIsRefusedWithItsLine) {
    ServerOptions o;
    std::string err = load("\nlog.access = \"/tmp/a\\u0000.log\"\n", &o);
    EXPECT_EQ(err, path_ + ":2: key 'log.access': must not contain a NUL byte");
    EXPECT_EQ(o.access_log, "off");
    err = load("proxy.trusted = [\"10.0.0.1\\u0000junk\"]\n", &o);
    EXPECT_EQ(err, path_ + ":1: key 'proxy.trusted': must not contain a NUL byte");
    EXPECT_TRUE(o.trusted_proxies.empty());
    EXPECT_NE(apply_setting("user", std::string_view("root\0x", 6), &o), "");
    EXPECT_EQ(o.user, "");
}

TEST_F(ConfigFile, TheAppTableHoldsTheAppsOwnSettings) {
    ServerOptions o;
    ASSERT_EQ(load("workers = 1\n[app]\ngreeting = \"hi\"\nretries = 3\nratio = 0.5\nbeta = true\n[app.db]\npath = \"a.db\"\n", &o), "");
    EXPECT_EQ(o.app_settings["greeting"], "hi");
    EXPECT_EQ(o.app_settings["retries"], "3");
    EXPECT_EQ(o.app_settings["beta"], "true");
    EXPECT_EQ(o.app_settings["db.path"], "a.db");
    EXPECT_EQ(o.app_settings.count("ratio"), 1u);
    EXPECT_EQ(o.workers, 1);
}

TEST(ConfigEnv, AppVariablesAreSettingsAndUnknownOnesOnlyWarn) {
    setenv("KILN_APP_DB_PATH", "/srv/app.db", 1);
    setenv("KILN_DIR", "/somewhere", 1);  // another tool's variable: not a reason to stop
    ServerOptions o;
    EXPECT_EQ(load_config_env(&o), "");
    EXPECT_EQ(o.app_settings["db_path"], "/srv/app.db");
    unsetenv("KILN_APP_DB_PATH");
    unsetenv("KILN_DIR");
}

TEST_F(ConfigFile, AnAppSettingThatIsNotAScalarIsRefusedWithItsLine) {
    ServerOptions o;
    std::string e = load("[app]\nok = 1\nlist = [1, 2]\n", &o);
    EXPECT_EQ(e, path_ + ":3: key 'app.list': an [app] setting must be a string, a number or a boolean");
}

TEST_F(ConfigFile, ErrorsNameTheFileAndLine) {
    ServerOptions o;
    EXPECT_EQ(load("workers = 2\n\n[timeouts]\nheader_ms = 0\n", &o),
              path_ + ":4: key 'timeouts.header_ms': must be from 1 to 3600000, got 0");
    EXPECT_EQ(load("a = 1\n", &o), path_ + ":1: key 'a': unknown key");
    EXPECT_TRUE(load("[a\n", &o).starts_with(path_ + ":1: "));
}

}  // namespace
}  // namespace kiln::server
