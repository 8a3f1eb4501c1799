// Unit tests of kilnc's lexer (tools/kilnc/lexer.cpp): tag kinds, escapes, positions
// and whitespace trimming; then the error paths.
#include "kilnc/lexer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::kilnc {
namespace {

// "T:text" / "C:code" / "O:expr" / "R:raw" / "#:comment" / "@:directive" per token.
std::vector<std::string> kinds(std::string_view src) {
    LexResult r = lex(src);
    EXPECT_FALSE(r.error) << r.error->message;
    std::vector<std::string> out;
    for (const Token& t : r.tokens) {
        static const char kTag[] = {'T', 'C', 'O', 'R', '#', '@'};
        out.push_back(std::string(1, kTag[static_cast<int>(t.kind)]) + ":" + t.text);
    }
    return out;
}

using V = std::vector<std::string>;

// ---------------------------------------------------------------- tags

TEST(LexerTags, EveryTagKind) {
    EXPECT_EQ(kinds("a<% x(); %>b<%= y %>c<%== z %>d<%# no %>e<%@ param int n %>f"),
              (V{"T:a", "C: x(); ", "T:b", "O: y ", "T:c", "R: z ", "T:d", "#: no ", "T:e", "@: param int n ", "T:f"}));
}

TEST(LexerTags, TextOnlyAndEmptyInput) {
    EXPECT_EQ(kinds("<p>plain % > %> text</p>\n"), (V{"T:<p>plain % > %> text</p>\n"}));
    EXPECT_EQ(kinds(""), V{});
}

TEST(LexerTags, LiteralOpenAndCloseMarkers) {
    EXPECT_EQ(kinds("<%% not a tag %>"), (V{"T:<% not a tag %>"}));
    EXPECT_EQ(kinds("<%= \"%%>\" %>"), (V{"O: \"%>\" "}));
    EXPECT_EQ(kinds("<%%= x %>"), (V{"T:<%= x %>"}));
}

TEST(LexerTags, TagBodiesMaySpanLines) {
    EXPECT_EQ(kinds("<%\n  int a = 1;\n  a++;\n%>x"), (V{"C:\n  int a = 1;\n  a++;\n", "T:x"}));
}

// ---------------------------------------------------------------- positions

TEST(LexerPositions, LineColumnAndIndentOfTagBodies) {
    LexResult r = lex("ab\n\t<p><%= x %>");
    ASSERT_EQ(r.tokens.size(), 2u);
    const Token& t = r.tokens[1];
    EXPECT_EQ(t.pos.line, 2);
    EXPECT_EQ(t.pos.col, 5);
    EXPECT_EQ(t.body_pos.line, 2);
    EXPECT_EQ(t.body_pos.col, 8);
    EXPECT_EQ(t.indent, "\t      ");  // tab kept, then one space per character
}

TEST(LexerPositions, Utf8CharactersCountOnceInTheIndent) {
    EXPECT_EQ(indent_for("é<"), "  ");
    EXPECT_EQ(indent_for("\t€"), "\t ");
}

// Each tag keeps its indent: on one long line (minified markup) the indents of its
// tags grew with the line, their sum with its square (4 s and half a gigabyte for a
// 500 KB line of 2,000 tags). Past kMaxIndent only the column is short.
TEST(LexerPositions, TheIndentIsBoundedOnALongLine) {
    std::string line;
    for (int i = 0; i < 2000; ++i) line += std::string(250, 'x') + "<%= v %>";
    LexResult r = lex(line);
    ASSERT_EQ(r.tokens.size(), 4000u);
    size_t total = 0;
    for (const Token& t : r.tokens) total += t.indent.size();
    EXPECT_LE(total, 4000u * kMaxIndent);
    EXPECT_EQ(r.tokens.back().indent, std::string(kMaxIndent, ' '));
    EXPECT_EQ(r.tokens.back().body_pos.col, 2000 * 258 - 4);  // the column itself stays exact
}

// ---------------------------------------------------------------- line trimming

TEST(LexerTrim, CodeAloneOnItsLineTakesTheLineWithIt) {
    EXPECT_EQ(kinds("<ul>\n  <% for (;;) { %>\n  <li>\n  <% } %>\n</ul>\n"),
              (V{"T:<ul>\n", "C: for (;;) { ", "T:  <li>\n", "C: } ", "T:</ul>\n"}));
}

TEST(LexerTrim, CommentsAndDirectivesToo) {
    EXPECT_EQ(kinds("<%@ param int n %>\n<%# note %>\n<p>"), (V{"@: param int n ", "#: note ", "T:<p>"}));
}

TEST(LexerTrim, CrLfAndEndOfFile) {
    EXPECT_EQ(kinds("a\r\n <% x %> \r\nb\n<% y %>"), (V{"T:a\r\n", "C: x ", "T:b\n", "C: y "}));
}

TEST(LexerTrim, OutputTagsAndSharedLinesAreNotTrimmed) {
    EXPECT_EQ(kinds("  <%= x %>\n"), (V{"T:  ", "O: x ", "T:\n"}));
    EXPECT_EQ(kinds("a <% x %>\n"), (V{"T:a ", "C: x ", "T:\n"}));
    EXPECT_EQ(kinds("<% x %> b\n"), (V{"C: x ", "T: b\n"}));
    EXPECT_EQ(kinds("<%= a %> <% b %>\n"), (V{"O: a ", "T: ", "C: b ", "T:\n"}));
}

// ---------------------------------------------------------------- error paths

TEST(LexerErrorPaths, UnclosedTagIsReportedWhereItOpens) {
    LexResult r = lex("line one\n  <%= name\nmore");
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->pos.line, 2);
    EXPECT_EQ(r.error->pos.col, 3);
    EXPECT_EQ(r.error->message, "unclosed '<%' tag: no '%>' before the end of the file");
}

TEST(LexerErrorPaths, TruncatedMarkersAreUnclosedTags) {
    for (std::string_view src : {"<%", "<%=", "<%==", "<%#", "<%@", "<% x %", "<% %%>"}) {
        LexResult r = lex(src);
        ASSERT_TRUE(r.error) << src;
        EXPECT_EQ(r.error->pos.col, 1) << src;
    }
}

TEST(LexerErrorPaths, ArbitraryBytesLexWithoutError) {
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
    LexResult r = lex(bytes);  // holds no "<%"
    EXPECT_FALSE(r.error);
    ASSERT_EQ(r.tokens.size(), 1u);
    EXPECT_EQ(r.tokens[0].text, bytes);
}

}  // namespace
}  // namespace kiln::kilnc
