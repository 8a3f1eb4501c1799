// app::sign / app::verify: the HMAC behind signed cookies, expiry included.
#include <gtest/gtest.h>

#include <string>

#include "app/signing.hpp"

using kiln::app::sign;
using kiln::app::verify;

namespace {
constexpr std::string_view kSecret = "0123456789abcdef0123456789abcdef";
}

TEST(Signing, RoundTripKeepsTheValueDotsIncluded) {
    std::string s = sign(kSecret, "remember", "ada.lovelace", 1000);
    EXPECT_EQ(verify(kSecret, "remember", s, 999), "ada.lovelace");
    EXPECT_EQ(verify(kSecret, "c", sign(kSecret, "c", "", 10), 0), "");
}

// Security review note: signed cookies carried no expiry inside the signature, so a
// copy stayed valid forever whatever its Max-Age said.
TEST(Signing, ASignatureIsWorthNothingFromItsExpiryOn) {
    std::string s = sign(kSecret, "remember", "ada", 1000);
    EXPECT_TRUE(verify(kSecret, "remember", s, 999));
    EXPECT_FALSE(verify(kSecret, "remember", s, 1000));
    EXPECT_FALSE(verify(kSecret, "remember", s, 5000));
}

// Error paths -----------------------------------------------------------------

TEST(Signing, ChangingTheExpiryValueContextOrSecretBreaksIt) {
    std::string s = sign(kSecret, "remember", "ada", 1000);
    std::string later = s;
    later.replace(later.find(".1000.") + 1, 4, "9999");
    EXPECT_FALSE(verify(kSecret, "remember", later, 999));
    std::string other = s;
    other[0] = 'b';
    EXPECT_FALSE(verify(kSecret, "remember", other, 999));
    EXPECT_FALSE(verify(kSecret, "admin", s, 999));
    EXPECT_FALSE(verify("another secret of 32 characters!", "remember", s, 999));
}

TEST(Signing, MalformedValuesAreRefused) {
    for (std::string bad : {std::string(), std::string("ada"), std::string("ada."), std::string(60, '.'),
                            std::string("ada.1000.") + std::string(43, 'A')})
        EXPECT_FALSE(verify(kSecret, "remember", bad, 0)) << bad;
}
